import { setTimeout as sleep } from "node:timers/promises";
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
      const delayMs = Math.min(
        retryAfterMs(error) ?? policy.firstDelayMs * 2 ** (attempt - 2),
        policy.maxDelayMs,
      );
      const reason = redact(scrubURLs(reasonOf(error), options.baseURL));
      await options.notify({ attempt, attempts: policy.attempts, delayMs, reason });
      await sleep(delayMs, undefined, { signal }).catch(() => {});
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

interface ErrorFields {
  name?: unknown;
  type?: unknown;
  status?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: { code?: unknown };
  headers?: unknown;
  error?: { error?: { type?: unknown; message?: unknown } };
}

const fields = (error: unknown): ErrorFields =>
  typeof error === "object" && error !== null ? (error as ErrorFields) : {};

/**
 * Types of a mid-stream provider error (`ProviderStreamError`) that pass with time: Anthropic's
 * overload, server failure and rate limit, and the OpenAI-compatible server failure.
 */
const passingTypes = new Set(["overloaded_error", "api_error", "rate_limit_error", "server_error"]);

/** Codes of a connection that broke mid-stream (Node's fetch puts them on the error's `cause`). */
const brokenConnection = new Set([
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_BODY_TIMEOUT",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
]);

/**
 * A failure that may pass if tried again, or a compaction that failed of one (its summary request
 * was lost; a compaction that could not shrink the request is not): a mid-stream error of type `overloaded_error`,
 * `api_error`, `rate_limit_error` or `server_error`; an HTTP 408, 409, 429 or 5xx (what the SDKs retry before
 * the first event, once their own retries ran out); a connection that broke mid-stream; a stream
 * that stalled. Not when the server said `x-should-retry: false`, and not a connection that could
 * not be made (`APIConnectionError`): the SDK already tried it again, and it is most often a
 * wrong address, which is better said at once.
 */
export function isRetryable(error: unknown): boolean {
  const { name, type, status, code, cause } = fields(error);
  // A compaction whose summary request was lost that way: the round is run again, and so is it.
  if (name === "CompactionError") return cause !== undefined && isRetryable(cause);
  if (header(error, "x-should-retry") === "false") return false;
  if (name === "ProviderStreamError") return typeof type === "string" && passingTypes.has(type);
  if (typeof status === "number")
    return status === 408 || status === 409 || status === 429 || status >= 500;
  if (name === "StreamStalledError") return true;
  if (name === "APIConnectionError" || name === "APIConnectionTimeoutError") return false;
  return [code, cause?.code].some((c) => typeof c === "string" && brokenConnection.has(c));
}

/** What the provider asked to wait, from `retry-after-ms` or `retry-after` (seconds or a date). */
export function retryAfterMs(error: unknown, now = Date.now()): number | undefined {
  const ms = Number.parseFloat(header(error, "retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = header(error, "retry-after");
  if (value === undefined || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A response header the error carries (the SDKs keep the response's `Headers`). */
function header(error: unknown, name: string): string | undefined {
  const { headers } = fields(error);
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  if (typeof headers !== "object" || headers === null) return undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

/** The failure in a few words: `overloaded_error: Overloaded`, `529 overloaded_error: Overloaded`. */
function reasonOf(error: unknown): string {
  const { name, type, status, message, error: body, cause } = fields(error);
  const text = typeof message === "string" ? message : String(error);
  if (name === "CompactionError") return `${text}: ${reasonOf(cause)}`;
  if (name === "ProviderStreamError") return `${String(type)}: ${text}`;
  if (typeof status === "number") {
    const inner = body?.error;
    const kind = typeof inner?.type === "string" ? ` ${inner.type}` : "";
    // OpenAI's SDK begins its message with the status (`500 test server: …`): said once.
    const said = typeof inner?.message === "string" ? inner.message : text;
    return `${status}${kind}: ${said.startsWith(`${status} `) ? said.slice(`${status} `.length) : said}`;
  }
  if (name === "StreamStalledError") return text;
  return `connection lost: ${text.replace(/\.$/, "")}`;
}
