import type { ErrorKind } from "../error-kind.js";
import { headOf } from "../text.js";
import { StreamStalledError } from "./idle.js";

const brand = Symbol.for("mini-agent.ProviderError");

/** The adapter that made the error: one per protocol. */
export type ProviderName = "anthropic" | "openai" | "openai-responses";

/**
 * What failed:
 * - `status`: the provider answered with an HTTP error status (`status`), once the SDK's own
 *   retries ran out;
 * - `stream`: the provider sent an error inside a stream that had started (Anthropic's
 *   `event: error`, an OpenAI-compatible in-band error, the Responses API's `error` event and
 *   `response.failed`);
 * - `stop`: the answer ended with a stop reason that is no answer: the model's output limit or a
 *   refusal (`stop` says which), or the request does not fit the context window (Anthropic's
 *   `model_context_window_exceeded`, `tooLong`);
 * - `connection`: no connection could be made (the SDK already tried again);
 * - `timeout`: no response headers in time (the SDK already tried again);
 * - `dropped`: the connection broke in the middle of the stream;
 * - `stalled`: the stream went quiet for longer than the adapter's idle limit;
 * - `invalid-http`: the server did not answer in valid HTTP (most often a wrong base URL).
 */
export type ProviderFailure =
  | "status"
  | "stream"
  | "stop"
  | "connection"
  | "timeout"
  | "dropped"
  | "stalled"
  | "invalid-http";

/**
 * Why a model stopped before its answer was whole, as every adapter names it: its output limit
 * (Anthropic's `max_tokens`, Chat Completions' `length`, the Responses API's
 * `max_output_tokens`) or a refusal (Anthropic's `refusal`, a `content_filter` of OpenAI's APIs).
 */
export type ModelStop = "max_tokens" | "refusal";

/** The provider's "this request does not fit the context window", with the sizes it names. */
export interface ContextOverflow {
  /** Tokens the provider counted in the refused request, when it said. */
  tokens?: number;
  /** The provider's maximum, when it said. */
  maximum?: number;
}

export interface ProviderErrorInit {
  provider: ProviderName;
  kind: ProviderFailure;
  /** The provider's own message (or the transport's), never a raw body. */
  providerMessage: string;
  status?: number | undefined;
  type?: string | undefined;
  code?: string | undefined;
  /** What the provider asked to wait before trying again (`retry-after-ms`, `retry-after`). */
  retryAfterMs?: number | undefined;
  /** The provider said not to try again (`x-should-retry: false`). */
  noRetry?: boolean;
  /** For `kind: "stop"`: the model's output limit or a refusal. */
  stop?: ModelStop;
  /** What the SDK or the transport threw. */
  cause?: unknown;
}

/**
 * Every failure of a provider, as the three adapters throw it: which provider, what failed, the
 * HTTP status if any, the provider's error type and code, its message, and two decisions made
 * here and nowhere else: whether trying again may help (`retryable`) and whether the provider
 * refused the request as too long for the context window (`tooLong`). What the SDK threw is the
 * `cause`. Like every thrown error, its text never reaches the session file.
 */
export class ProviderError extends Error {
  /**
   * Any copy of this class recognises the errors of another: the CLI's entry and its turn are
   * separate bundles, each with its own copy, and a program may hold two copies of the package.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && brand in value;
  }

  override readonly name = "ProviderError";
  readonly provider: ProviderName;
  readonly kind: ProviderFailure;
  /**
   * The provider's own message (or the transport's), on its own; the error's `message` is the
   * same, after the status for an error status (`429 Rate limit reached`), as the SDKs say it.
   */
  readonly providerMessage: string;
  /** The HTTP status, for `kind: "status"`. */
  readonly status: number | undefined;
  /** The provider's error type: `overloaded_error`, `invalid_request_error`, `server_error`, … */
  readonly type: string | undefined;
  /** The provider's error code, when it gives one: OpenAI's `context_length_exceeded`, … */
  readonly code: string | undefined;
  /**
   * Whether the same request may succeed later: a 408, 409, 429 or 5xx; an error event of type
   * `overloaded_error`, `api_error`, `rate_limit_error` or `server_error`; a connection dropped
   * mid-stream; a stalled stream. Never when the provider said not to (`x-should-retry: false`),
   * and not a connection that could not be made or a timeout before the headers: the SDK
   * already tried those again, and they most often mean a wrong address, better said at once.
   */
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  /**
   * Set when the provider refused the request as longer than the context window: Anthropic's
   * `prompt is too long: N tokens > M maximum` and stop reason `model_context_window_exceeded`,
   * OpenAI's code `context_length_exceeded` or (vLLM and other local servers, without the code)
   * `This model's maximum context length is M tokens. However, your messages resulted in N tokens.`
   */
  readonly tooLong: ContextOverflow | undefined;
  /** Why the model stopped, for `kind: "stop"` when it was its output limit or a refusal. */
  readonly stop: ModelStop | undefined;

  constructor(init: ProviderErrorInit) {
    const { status, providerMessage } = init;
    const message = init.kind === "status" ? `${status} ${providerMessage}` : providerMessage;
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    Object.defineProperty(this, brand, { value: true });
    this.provider = init.provider;
    this.providerMessage = providerMessage;
    this.kind = init.kind;
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.retryAfterMs = init.retryAfterMs;
    this.retryable = init.noRetry !== true && mayPass(init);
    this.tooLong = overflowOf(init);
    this.stop = init.stop;
  }
}

/** Types of an error event that pass with time: overload, server failure, rate limit. */
const passingTypes = new Set(["overloaded_error", "api_error", "rate_limit_error", "server_error"]);

function mayPass({ kind, status, type }: ProviderErrorInit): boolean {
  switch (kind) {
    case "status":
      return status === 408 || status === 409 || status === 429 || (status ?? 0) >= 500;
    case "stream":
      return type !== undefined && passingTypes.has(type);
    case "dropped":
    case "stalled":
      return true;
    case "stop":
    case "connection":
    case "timeout":
    case "invalid-http":
      return false;
  }
}

function overflowOf({
  kind,
  type,
  code,
  providerMessage: message,
}: ProviderErrorInit): ContextOverflow | undefined {
  if (kind !== "status" && kind !== "stream" && kind !== "stop") return undefined;
  const anthropic = /prompt is too long: (\d+) tokens > (\d+) maximum/.exec(message);
  if (anthropic) return { tokens: Number(anthropic[1]), maximum: Number(anthropic[2]) };
  if (/prompt is too long/.test(message) || type === "model_context_window_exceeded") return {};
  const openai =
    code === "context_length_exceeded" ||
    type === "context_length_exceeded" ||
    /context_length_exceeded|maximum context length is \d+ tokens/.test(message);
  if (!openai) return undefined;
  const maximum = /maximum context length is (\d+) tokens/.exec(message)?.[1];
  const tokens = /(?:resulted in|requested) (\d+) tokens/.exec(message)?.[1];
  return {
    ...(tokens !== undefined && { tokens: Number(tokens) }),
    ...(maximum !== undefined && { maximum: Number(maximum) }),
  };
}

type SdkAPIError = Error & {
  status: number | undefined;
  headers: Headers | undefined;
  error: unknown;
};

/**
 * The error classes of one official SDK. Anthropic's and OpenAI's are generated alike: an
 * `APIError` with the response's `status`, `headers` and JSON body as `error`; a connection
 * error, a timeout and an abort as its subclasses.
 */
export interface SdkErrors {
  APIError: abstract new (...args: never[]) => SdkAPIError;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIUserAbortError: abstract new (...args: never[]) => Error;
}

/**
 * What an adapter throws for `error`, which its SDK, its transport or its idle timer threw: a
 * `ProviderError`, or `error` itself when it is no failure of the provider (an abort, the
 * adapter's own protocol error).
 */
export function providerErrorFrom(provider: ProviderName, error: unknown, sdk: SdkErrors): unknown {
  if (error instanceof ProviderError || error instanceof sdk.APIUserAbortError) return error;
  if (error instanceof sdk.APIConnectionTimeoutError) return failure(provider, "timeout", error);
  if (error instanceof sdk.APIConnectionError)
    return notHTTP(provider, error) ?? failure(provider, "connection", error);
  if (error instanceof sdk.APIError) return answerError(provider, error);
  if (error instanceof StreamStalledError) return failure(provider, "stalled", error);
  if (!(error instanceof Error)) return error;
  return notHTTP(provider, error) ?? droppedError(provider, error) ?? error;
}

/** A failure told by the message of what the SDK or the transport threw. */
const failure = (provider: ProviderName, kind: ProviderFailure, error: Error) =>
  new ProviderError({ provider, kind, providerMessage: error.message, cause: error });

/** An error status, or an error event in the stream (no status), with what the headers ask. */
function answerError(provider: ProviderName, error: SdkAPIError): ProviderError {
  const fromHeaders = {
    retryAfterMs: retryAfterMs(error.headers),
    noRetry: error.headers?.get("x-should-retry") === "false",
    cause: error,
  };
  if (error.status === undefined) return streamErrorFrom(provider, error.error, fromHeaders);
  const { type, code, message } = bodyError(error.error);
  return new ProviderError({
    provider,
    kind: "status",
    status: error.status,
    type,
    code,
    // Without a message in the body, the SDK's own, which begins with the status: said once.
    providerMessage: message ?? error.message.replace(new RegExp(`^${error.status} `), ""),
    ...fromHeaders,
  });
}

const maxMessage = 1000;

/**
 * The error a stream carried, from its body: `{ type, message }` at the top (vLLM) or under
 * `error` (Anthropic, OpenAI), or a bare string. Its message is put on one line.
 */
export function streamErrorFrom(
  provider: ProviderName,
  body: unknown,
  extra: Pick<ProviderErrorInit, "retryAfterMs" | "noRetry" | "cause"> = {},
): ProviderError {
  const { type, code, message } = bodyError(body);
  const text = message ?? (nonEmpty(body) ? body : "the provider sent an error without a message");
  return new ProviderError({
    provider,
    kind: "stream",
    type: type ?? "error",
    code,
    providerMessage: headOf(text.replace(/\s+/g, " ").trim(), maxMessage),
    ...extra,
  });
}

/** The type, code and message of an error body, at its top or under `error`. */
function bodyError(body: unknown): { type?: string; code?: string; message?: string } {
  const outer = isObject(body) ? body : {};
  const inner = isObject(outer.error) ? outer.error : outer;
  const type = nonEmpty(inner.type) && inner.type !== "error" ? inner.type : undefined;
  return {
    ...(type !== undefined && { type }),
    ...(nonEmpty(inner.code) && { code: inner.code }),
    ...(nonEmpty(inner.message) && { message: inner.message }),
  };
}

/** Codes of a connection that broke mid-stream (the transport puts them on the error's `cause`). */
const brokenConnection = new Set([
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_BODY_TIMEOUT",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
]);

/** A connection that broke in the middle of the stream. */
function droppedError(provider: ProviderName, error: Error): ProviderError | undefined {
  const codes = causes(error).map((cause) => (cause as { code?: unknown }).code);
  const broken = codes.some((code) => typeof code === "string" && brokenConnection.has(code));
  return broken ? failure(provider, "dropped", error) : undefined;
}

/**
 * A server whose answer Node's HTTP parser refused, with its reason (`Header overflow`): the
 * transport's `TypeError("fetch failed")` (or, mid-body, `"terminated"`) has the parser's error,
 * coded `HPE_…`, as its cause, and the SDK wraps it in its connection error.
 */
function notHTTP(provider: ProviderName, error: Error): ProviderError | undefined {
  for (const cause of causes(error)) {
    const { code, reason } = cause as { code?: unknown; reason?: unknown };
    if (typeof code === "string" && code.startsWith("HPE_")) {
      const providerMessage = typeof reason === "string" && reason !== "" ? reason : code;
      return new ProviderError({ provider, kind: "invalid-http", providerMessage, cause: error });
    }
  }
  return undefined;
}

/** `error` and its causes, four deep. */
function causes(error: Error): object[] {
  const chain: object[] = [];
  let cause: unknown = error;
  for (let depth = 0; depth < 4 && typeof cause === "object" && cause !== null; depth++) {
    chain.push(cause);
    cause = (cause as { cause?: unknown }).cause;
  }
  return chain;
}

/** What the provider asked to wait, in whole ms, from `retry-after-ms` or `retry-after` (seconds or a date). */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  // Whole milliseconds, rounded up: a wait is never shorter than asked.
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const value = headers?.get("retry-after");
  if (value === undefined || value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000 - 1e-6);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function nonEmpty(value: unknown): value is string {
  return typeof value === "string" && value.trim() !== "";
}

/** The kind of `error`, or of the provider's failure that caused it (a compaction's summary request). */
export function errorKindOf(error: unknown): ErrorKind {
  const failure = providerFailureOf(error);
  if (failure === undefined) return "other";
  const { kind, status, type } = failure;
  if (status === 429 || type === "rate_limit_error") return "rate_limited";
  if (status === 529 || type === "overloaded_error") return "overloaded";
  if (status === 401 || status === 403 || type === "authentication_error") return "auth";
  if (type === "permission_error") return "auth";
  if (failure.tooLong !== undefined) return "too_long";
  switch (kind) {
    case "status":
      return (status ?? 0) >= 500 ? "server" : "refused";
    case "stream":
      return failure.retryable ? "server" : "refused";
    case "stop":
      return "model_stop";
    case "connection":
    case "timeout":
    case "dropped":
    case "stalled":
    case "invalid-http":
      return "network";
  }
}

/** The provider's failure behind `error` (itself, or a cause up to four deep). */
export function providerFailureOf(error: unknown): ProviderError | undefined {
  let cause = error;
  for (let depth = 0; depth < 5 && typeof cause === "object" && cause !== null; depth++) {
    if (cause instanceof ProviderError) return cause;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}
