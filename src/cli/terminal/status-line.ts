import type { Compaction } from "../../compaction/record.js";
import type { CountingClient } from "../../runner/usage.js";
import type { Usage } from "../../types.js";
import { visible } from "../../visible.js";

/**
 * The line after each turn on a terminal:
 * `claude-sonnet-5-5 · context 12% of 200k · 0 compactions · tokens in/out: turn 3.1k/210, session 9.8k/640`,
 * most important first, as a narrow terminal cuts it at its width.
 *
 * Context used is what the provider counted for the last request plus the answer it gave (the
 * history the next request carries), or, right after a compaction, the compaction's estimate of
 * the compacted conversation. It is a share of `--context-window` (or the window assumed for a
 * Claude model); with no window known it is a count of tokens. Tokens in count cache reads and
 * writes; the session's figures are those of this run, compaction summaries included.
 */
export class SessionStatus {
  private turnStart: Usage;
  private compaction: { tokens: number; rounds: number } | undefined;

  constructor(
    private readonly model: string,
    private readonly contextWindow: number | undefined,
    private readonly counter: CountingClient,
    private readonly compactions: () => number,
  ) {
    this.turnStart = { ...counter.usage };
  }

  /** A turn begins: its tokens are counted from here. */
  beginTurn(): void {
    this.turnStart = { ...this.counter.usage };
  }

  /** The conversation was compacted: until the next round, its size is the compaction's estimate. */
  compacted(compaction: Compaction): void {
    this.compaction = { tokens: compaction.tokensAfter, rounds: this.counter.rounds };
  }

  line(): string {
    const session = this.counter.usage;
    const count = this.compactions();
    return [
      visible(this.model),
      this.context(),
      `${count} compaction${count === 1 ? "" : "s"}`,
      `tokens in/out: turn ${tokens(inputOf(session) - inputOf(this.turnStart))}/${tokens(session.outputTokens - this.turnStart.outputTokens)}, session ${tokens(inputOf(session))}/${tokens(session.outputTokens)}`,
    ]
      .filter((part) => part !== "")
      .join(" · ");
  }

  private context(): string {
    const last = this.counter.last;
    const used =
      this.compaction && this.counter.rounds <= this.compaction.rounds
        ? this.compaction.tokens
        : last && inputOf(last) + last.outputTokens;
    if (used === undefined) return "";
    if (this.contextWindow === undefined) return `context ${tokens(used)} tokens`;
    const percent = Math.round((100 * used) / this.contextWindow);
    return `context ${percent}% of ${tokens(this.contextWindow)}`;
  }
}

const inputOf = (usage: Usage) =>
  usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);

/** `840`, `3.1k`, `24k`, `1.2M`. */
export function tokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1)}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}
