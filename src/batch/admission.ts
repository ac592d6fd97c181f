import { monotonicMs } from "../clock.js";
import type { ErrorKind } from "../error-kind.js";
import { headOf } from "../text.js";
import { visible } from "../visible.js";

/**
 * The batch's one gate for starts. A task starts only when all of these hold:
 *
 * - **the provider is not asking to wait**: a child's 429 or overload (its stream-json `retry`
 *   line, or its `result`) pauses every new start of the batch, not only that task's, for the
 *   `retry-after` the provider gave, else for a backoff with jitter (1 s, 2 s, 4 s… up to a
 *   minute, each cut by a random part of up to half, so the batch and its children do not come
 *   back in step);
 * - **fewer tasks run than the batch's concurrency**: `--workers` at first; the first 429 or
 *   overload of a pause halves it (at least 1), and each attempt that ends without one adds one
 *   back, up to `--workers` (additive increase, multiplicative decrease);
 * - **the budget has tokens left** (`--budget-tokens`): each start reserves what the task may
 *   spend (its token budget, or what is left, if less) and is told it (its `--token-budget`); an
 *   attempt that ends gives back what it did not use. With none left, a start waits for running
 *   tasks to give some back; when none runs, nothing more starts (`skipped_budget`).
 *
 * A task's `--token-budget` lets its last request pass it, so the batch may spend more than its
 * budget by at most one request per task running when the last one started.
 */
export interface AdmissionOptions {
  workers: number;
  /** `--budget-tokens`: input plus output tokens of the whole batch; absent, no budget. */
  budget: number | undefined;
  /** Tokens the batch's results already record (a resumed batch counts them). */
  spent: number;
  /** The batch stops: every wait ends, and nothing more starts. */
  signal: AbortSignal;
  say: (line: string) => void;
  clock?: AdmissionClock;
  /** The first backoff when the provider gave no `retry-after`; it doubles each pause in a row. */
  firstBackoffMs?: number;
  maxBackoffMs?: number;
}

/** Time and chance, given so a test decides them. */
export interface AdmissionClock {
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts. */
  delay(ms: number, signal: AbortSignal): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

/** What a worker may do: start (with the tokens reserved for it), skip for the budget, or stop. */
export type Entry =
  | { kind: "start"; reserved: number | undefined }
  | { kind: "budget" }
  | { kind: "stopped" };

/** A provider's "wait": a 429 or an overload a child met, where, and what it was asked. */
export interface Wait {
  errorKind: ErrorKind;
  retryAfterMs: number | undefined;
  reason: string;
  /** `leap #1`: the attempt that met it. */
  where: string;
}

export class Admission {
  private running = 0;
  private limit: number;
  private pausedUntil = Number.NEGATIVE_INFINITY;
  /** Pauses since the last attempt that ended without a 429 or an overload. */
  private streak = 0;
  private reserved = 0;
  private spentTokens: number;
  private stopReason: string | undefined;
  private waiting: (() => void)[] = [];
  /** The next caller's place in line, and the place of the one let through next. */
  private tickets = 0;
  private serving = 0;
  private readonly clock: AdmissionClock;

  constructor(private readonly options: AdmissionOptions) {
    this.limit = options.workers;
    this.spentTokens = options.spent;
    this.clock = options.clock ?? systemClock;
    options.signal.addEventListener("abort", () => this.changed(), { once: true });
  }

  /** Tokens spent so far, by the attempts that ended and those recorded before. */
  get spent(): number {
    return this.spentTokens;
  }

  /** Why the batch stopped starting tasks, once it did (`--max-consecutive-errors`). */
  get stopped(): string | undefined {
    return this.stopReason;
  }

  /**
   * Waits until a task that may spend `budget` tokens can start, and counts it running; with a
   * batch budget, `budget` is required (each task has one: the batch checks it first). Callers
   * are let through in the order they came, so tasks start in the order of the plan.
   */
  async enter(budget: number | undefined): Promise<Entry> {
    const ticket = this.tickets++;
    while (ticket !== this.serving) await this.change();
    const entry = await this.admit(budget);
    this.serving++;
    this.changed();
    return entry;
  }

  private async admit(budget: number | undefined): Promise<Entry> {
    for (;;) {
      if (this.options.signal.aborted || this.stopReason !== undefined) return { kind: "stopped" };
      const pause = this.pausedUntil - this.clock.now();
      if (pause > 0) {
        await this.change(pause);
        continue;
      }
      if (this.running >= this.limit) {
        await this.change();
        continue;
      }
      const { budget: total } = this.options;
      if (total === undefined) {
        this.running++;
        return { kind: "start", reserved: undefined };
      }
      const left = total - this.spentTokens - this.reserved;
      if (left <= 0) {
        if (this.running === 0) return { kind: "budget" };
        await this.change();
        continue;
      }
      const reserved = Math.min(budget ?? left, left);
      this.reserved += reserved;
      this.running++;
      return { kind: "start", reserved };
    }
  }

  /**
   * An attempt ended: it spent `tokens`, and gives back the rest of what it reserved; one that
   * met no 429 or overload gives back a slot of concurrency.
   */
  leave(entry: Entry & { kind: "start" }, tokens: number, waited: boolean): void {
    this.running--;
    this.reserved -= entry.reserved ?? 0;
    this.spentTokens += tokens;
    if (!waited) {
      this.streak = 0;
      if (this.limit < this.options.workers) {
        this.limit++;
        if (this.limit === this.options.workers)
          this.options.say(`batch: no 429 or overload since: ${this.limit} at once again`);
      }
    }
    this.changed();
  }

  /** A child met a 429 or an overload: new starts pause for what the provider asked. */
  wait(wait: Wait): void {
    const now = this.clock.now();
    const fresh = now >= this.pausedUntil;
    const ms = wait.retryAfterMs ?? this.backoff();
    this.pausedUntil = Math.max(this.pausedUntil, now + ms);
    if (fresh) {
      this.streak++;
      this.limit = Math.max(1, Math.floor(this.limit / 2));
      const asked = wait.retryAfterMs !== undefined ? "as retry-after asks" : "backing off";
      this.options.say(
        `batch: ${wait.where} met ${wait.errorKind === "overloaded" ? "an overload" : "a rate limit"} (${visible(headOf(wait.reason, 200))}): new starts paused for ${duration(ms)} ${asked}, then ${this.limit} at once`,
      );
    }
    this.changed();
  }

  /** Nothing more starts (`--max-consecutive-errors`); running tasks go on to their end. */
  stop(reason: string): void {
    this.stopReason ??= reason;
    this.changed();
  }

  /** 1 s, 2 s, 4 s… for the pauses in a row, at most the maximum, less a random part of up to half. */
  private backoff(): number {
    const { firstBackoffMs = 1000, maxBackoffMs = 60_000 } = this.options;
    const full = Math.min(maxBackoffMs, firstBackoffMs * 2 ** this.streak);
    return Math.round(full * (1 - this.clock.random() / 2));
  }

  /** Resolves at the next change of state, or after `ms` when given. */
  private async change(ms?: number): Promise<void> {
    const timer = new AbortController();
    const changed = new Promise<void>((resolve) => this.waiting.push(resolve));
    await (ms === undefined
      ? changed
      : Promise.race([changed, this.clock.delay(ms, timer.signal)]));
    timer.abort();
  }

  private changed(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }
}

const systemClock: AdmissionClock = {
  now: monotonicMs,
  delay: (ms, signal) =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    }),
  random: Math.random,
};

function duration(ms: number): string {
  return ms >= 1000 ? `${Number((ms / 1000).toFixed(1))} s` : `${Math.round(ms)} ms`;
}
