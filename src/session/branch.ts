import type { SessionRecord } from "./records.js";

/**
 * The current branch of a session file, as its records go by. Each record has an ordinal (its
 * place among the file's records, the header 0). Messages and compactions join the branch; a
 * `rewind` record to prompt N cuts the branch just before the N-th user message on it, so what
 * came after stays in the file but leaves the branch. Prompts are counted along the branch.
 */
export class Branch {
  /** Ordinals of the messages and compactions on the branch, in file order. */
  private readonly kept: number[] = [];
  /** Where each user message on the branch sits in `kept`. */
  private readonly prompts: number[] = [];
  /** Whether any rewind cut the branch: without one, the branch is the whole file. */
  cut = false;
  /**
   * The last rewind's prompt and where that prompt was (its ordinal), while the branch has no
   * prompt since: that rewind is the one `--to` the same prompt again finishes.
   */
  lastCut: { to: number; ordinal: number } | undefined;

  /** Takes the record at `ordinal`; false for a rewind to a prompt the branch does not have. */
  add(ordinal: number, record: SessionRecord): boolean {
    if (record.type === "rewind") return this.rewind(record.to);
    if (record.type === "message" && record.message.role === "user") {
      this.prompts.push(this.kept.length);
      this.lastCut = undefined;
    }
    if (record.type === "message" || record.type === "compaction") this.kept.push(ordinal);
    return true;
  }

  /** The prompts on the branch. */
  get promptCount(): number {
    return this.prompts.length;
  }

  /** The ordinal of the branch's prompt `n` (1 for the first). */
  promptOrdinal(n: number): number | undefined {
    const at = this.prompts[n - 1];
    return at === undefined ? undefined : this.kept[at];
  }

  /** The ordinals on the branch, ascending. */
  ordinals(): readonly number[] {
    return this.kept;
  }

  private rewind(to: number): boolean {
    const at = this.prompts[to - 1];
    const ordinal = at === undefined ? undefined : this.kept[at];
    if (at === undefined || ordinal === undefined) return false;
    this.lastCut = { to, ordinal };
    this.kept.length = at;
    this.prompts.length = to - 1;
    this.cut = true;
    return true;
  }
}
