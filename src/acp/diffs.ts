import { closeSync, constants, fstatSync, openSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { ToolCallContent } from "@agentclientprotocol/sdk";
import { contentHash } from "../crypto.js";
import { BlobStore } from "../session/blobs.js";
import type { FileChange } from "../session/records.js";

/** Bytes of one side of a diff an editor is sent; a bigger file gets a line saying so instead. */
export const DIFF_CAP = 1024 * 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The editor's diff of what a `write` or `edit` call changed, from the change the turn recorded
 * (the records a rewind uses): the old text is the file's bytes before the call, found by the
 * record's `before` hash (what an earlier call of the turn left, or the pre-image in the session's
 * blob store), the new text is the file read again right after the call, shown only when its
 * bytes still have the record's `after` hash. A side that is binary, not UTF-8, over `DIFF_CAP`
 * or not known gives one line of text instead of a diff.
 */
export class ChangeDiffs {
  /**
   * What the last change of each file left, by path: an old text for the next change of it. At
   * most `LEFT_CAP` bytes in all, the files changed longest ago let go first.
   */
  private readonly left = new Map<string, { hash: string; bytes: Buffer }>();
  private leftBytes = 0;
  private realRoot: string | undefined;

  constructor(
    private readonly workspace: string,
    private readonly blobs: BlobStore | undefined,
  ) {}

  /** The diffs of a session's turn: its blob store beside the session file, once there is one. */
  static forSession(workspace: string, sessionPath: string | undefined): ChangeDiffs {
    return new ChangeDiffs(
      workspace,
      sessionPath === undefined ? undefined : BlobStore.forSession(sessionPath),
    );
  }

  /**
   * The content for the change's call; none when the call left the file as it found it. Never
   * throws: it runs inside the turn's event listener, where a failure would stop the turn.
   */
  content(change: FileChange): ToolCallContent | undefined {
    try {
      return this.diff(change);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "error";
      return line(change.path, `it could not be read again (${code})`);
    }
  }

  private diff(change: FileChange): ToolCallContent | undefined {
    const { before, after, path } = change;
    if (after === null || before === after) return undefined;
    const old = before === null ? null : this.before(path, before);
    const now = this.read(path, after);
    if (typeof now === "string") return line(path, now);
    this.remember(path, after, now);
    if (typeof old === "string") return line(path, old);
    const oldText = old === null ? null : text(old);
    const newText = text(now);
    if (oldText !== null && typeof oldText !== "string") return line(path, oldText.problem);
    if (typeof newText !== "string") return line(path, newText.problem);
    return { type: "diff", path: join(this.workspace, path), oldText, newText };
  }

  private remember(path: string, hash: string, bytes: Buffer): void {
    this.leftBytes -= this.left.get(path)?.bytes.length ?? 0;
    this.left.delete(path);
    this.left.set(path, { hash, bytes });
    this.leftBytes += bytes.length;
    for (const [oldest, kept] of this.left) {
      if (this.leftBytes <= LEFT_CAP) break;
      this.left.delete(oldest);
      this.leftBytes -= kept.bytes.length;
    }
  }

  /** The file's bytes before the call, by their hash; why they are not known otherwise. */
  private before(path: string, hash: string): Buffer | string {
    const known = this.left.get(path);
    if (known?.hash === hash) return known.bytes;
    const kept = this.blobs?.get(hash);
    if (kept === undefined) return "its bytes before the call were not kept";
    return kept.length > DIFF_CAP ? over : kept;
  }

  /**
   * The file as the call left it: read again (never through a link, never waiting on a FIFO),
   * and only when its bytes have the recorded hash.
   */
  private read(path: string, hash: string): Buffer | string {
    this.realRoot ??= realpathSync(this.workspace);
    let fd: number;
    try {
      fd = openSync(
        join(this.realRoot, path),
        constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      );
    } catch {
      return "it could not be read again";
    }
    try {
      const info = fstatSync(fd);
      if (!info.isFile()) return "it is no longer a regular file";
      if (info.size > DIFF_CAP) return over;
      const bytes = readFileSync(fd);
      return contentHash(bytes) === hash ? bytes : "it changed again since the call";
    } finally {
      closeSync(fd);
    }
  }
}

/** Bytes of the files' last texts a turn keeps for the next diffs of them. */
const LEFT_CAP = 8 * DIFF_CAP;

const over = `it is over ${DIFF_CAP / (1024 * 1024)} MiB`;

/** The bytes as text, or why they are not shown as text. */
function text(bytes: Buffer): string | { problem: string } {
  if (bytes.includes(0)) return { problem: "it is binary" };
  try {
    return utf8.decode(bytes);
  } catch {
    return { problem: "it is not UTF-8 text" };
  }
}

function line(path: string, why: string): ToolCallContent {
  return { type: "content", content: { type: "text", text: `no diff of ${path}: ${why}` } };
}
