import { CompactionError } from "../compaction/record.js";
import { errorKindOf, ProviderError, providerFailureOf } from "../providers/provider-error.js";
import { secretRedactor } from "../secrets.js";
import type { ModelClient, ModelEvent, ModelRequest } from "../types.js";
import { scrubURLs } from "../url.js";
import type { RetryNotice } from "./events.js";

export interface RetryPolicy {
  /** Attempts of one round in all, the first included. */
  attempts: number;
  /** The wait before the second attempt; it doubles for each next one. */
  firstDelayMs: number;
  /** No wait is longer, whatever `retry-after` asks. */
  maxDelayMs: number;
}

export const retryPolicy: RetryPolicy = { attempts: 4, firstDelayMs: 1000, maxDelayMs: 60_000 };

export interface LostRoundOptions<T> {
  client: ModelClient;
  /** Runs the loop once, through `client`, on the history as it is now. */
  run: (client: ModelClient) => Promise<T>;
  /** How many messages the history holds now (committed messages join it as they come). */
  historyLength: () => number;
  /** The turn's signal: an abort ends a wait at once. */
  signal: AbortSignal;
  /** Awaited before the wait: the CLI records the notice in the session, then shows it. */
  notify: (notice: RetryNotice) => void | Promise<void>;
  /** Its credentials never appear in a reason. */
  baseURL?: string | undefined;
  /** The variables whose secret values never appear in a reason (default: the process's). */
  env?: NodeJS.ProcessEnv;
  policy?: RetryPolicy;
}

/**
 * Runs the loop again when a round was lost to a passing provider failure: an overload, a rate
 * limit, a 5xx, a connection dropped mid-stream or a stream stalled (`isRetryable`). The SDKs retry only
 * before the first event; an error in the middle of a stream ends the run, though the round
 * committed nothing and the history is as valid as before it.
 *
 * "Nothing committed" is checked, not assumed: the error must have come out of the model's
 * stream, and the history must still be exactly as long as when that round's request was sent.
 * A failure after a commit (a tool or a policy that threw, whatever its error looks like) is
 * never retried, and neither is an error that is not passing (a 400, a refused key).
 *
 * Each lost round gets `policy.attempts` attempts, waiting between them as `retry-after` asks
 * when the error carries it, else 1 s, 2 s, 4 s…, never longer than `policy.maxDelayMs`; each is
 * announced through `notify` before the wait, its reason already without secrets. An abort during the wait ends it at once: the
 * next run sees the aborted signal and returns at once (the loop checks it before any request).
 * The loop itself never retries.
 */
export async function retryLostRound<T>(options: LostRoundOptions<T>): Promise<T> {
  const { signal, policy = retryPolicy } = options;
  const watch = new RoundWatch(options.client);
  const redact = secretRedactor(options.env);
  let lostAt: number | undefined;
  let attempt = 1;
  for (;;) {
    try {
      return await options.run(watch);
    } catch (error) {
      const length = options.historyLength();
      if (length !== lostAt) attempt = 1;
      lostAt = length;
      const lost = watch.sentWith(error) === length && isRetryable(error);
      if (!lost || signal.aborted || attempt >= policy.attempts) throw error;
      attempt++;
      const retryAfterMs = providerFailureOf(error)?.retryAfterMs;
      const delayMs = Math.min(
        retryAfterMs ?? policy.firstDelayMs * 2 ** (attempt - 2),
        policy.maxDelayMs,
      );
      const reason = redact(scrubURLs(reasonOf(error), options.baseURL));
      await options.notify({
        attempt,
        attempts: policy.attempts,
        delayMs,
        reason,
        errorKind: errorKindOf(error),
        ...(retryAfterMs !== undefined && { retryAfterMs }),
      });
      await sleep(delayMs, signal);
    }
  }
}

/**
 * A client that remembers, for each error its stream threw, how many messages that round's
 * request carried: the evidence that the round failed before committing anything.
 */
class RoundWatch implements ModelClient {
  private readonly sent = new WeakMap<object, number>();

  constructor(private readonly inner: ModelClient) {}

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const length = request.messages.length;
    try {
      yield* this.inner.stream(request);
    } catch (error) {
      if (typeof error === "object" && error !== null) this.sent.set(error, length);
      throw error;
    }
  }

  sentWith(error: unknown): number | undefined {
    return typeof error === "object" && error !== null ? this.sent.get(error) : undefined;
  }
}

/**
 * A failure that may pass if tried again (`ProviderError.retryable`), or a compaction that failed
 * of one (its summary request was lost; a compaction that could not shrink the request is not).
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof CompactionError)
    return error.cause !== undefined && isRetryable(error.cause);
  return error instanceof ProviderError && error.retryable;
}

/** The failure in a few words: `overloaded_error: Overloaded`, `529 overloaded_error: Overloaded`. */
function reasonOf(error: unknown): string {
  if (error instanceof CompactionError) return `${error.message}: ${reasonOf(error.cause)}`;
  if (!(error instanceof ProviderError))
    return error instanceof Error ? error.message : String(error);
  const said = error.providerMessage;
  switch (error.kind) {
    case "status":
      return `${error.status}${error.type ? ` ${error.type}` : ""}: ${said}`;
    case "stream":
      return `${error.type}: ${said}`;
    case "dropped":
      return `connection lost: ${said.replace(/\.$/, "")}`;
    case "stop":
    case "connection":
    case "timeout":
    case "stalled":
    case "invalid-http":
      return said;
  }
}

/**
 * Waits `ms`, or less when `signal` aborts. Not `node:timers/promises`, whose module a run that
 * never retries would load for nothing.
 */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
