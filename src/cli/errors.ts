import { secretRedactor } from "../secrets.js";
import { systemErrorMeaning } from "../system-errors.js";
import { scrubURLs, shownURL } from "../url.js";
import { visible } from "../visible.js";
import { UsageError } from "./args.js";

/**
 * What a provider error may carry. An HTTP error has a `status`; an error event in the middle of
 * a stream has none, only a string `type` (`overloaded_error`) and the provider's `message`.
 * Anthropic nests the body's error one level deeper than OpenAI.
 */
interface ProviderError extends Error {
  status?: number;
  type?: unknown;
  error?: { error?: { type?: string; message?: string }; type?: string; message?: string };
}

const hintsByStatus: Record<number, string> = {
  400: "the provider rejected the request",
  401: "check the API key (ANTHROPIC_API_KEY or OPENAI_API_KEY)",
  403: "the key is not allowed to use this model or endpoint",
  404: "check --model and --base-url",
  413: "the request is too large; start a new session",
  429: "rate limited: wait a little and try again",
  500: "the provider failed; try again later",
  529: "the provider is overloaded; try again later",
};

const hintsByType: Record<string, string> = {
  invalid_request_error: "the provider rejected the request",
  authentication_error: "check the API key (ANTHROPIC_API_KEY or OPENAI_API_KEY)",
  permission_error: "the key is not allowed to use this model or endpoint",
  not_found_error: "check --model and --base-url",
  request_too_large: "the request is too large; start a new session",
  rate_limit_error: "rate limited: wait a little and try again",
  api_error: "the provider failed; try again later",
  overloaded_error: "the provider is overloaded; try again later",
};

/**
 * One line for the person at the terminal; no stack, no request body. Control characters are
 * made visible, the base URL's credentials never appear, and neither does the value of a secret
 * variable of `env` (a provider may echo the key it was sent), so the line is also safe to put in
 * the JSON result.
 */
export function describeError(
  error: unknown,
  baseURL: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return visible(secretRedactor(env)(scrubURLs(describe(error, baseURL), baseURL)));
}

function describe(error: unknown, baseURL: string | undefined): string {
  if (error instanceof UsageError) return error.message;
  const err: ProviderError = error instanceof Error ? error : new Error(String(error));
  if (err.name === "CompactionError" && err.cause !== undefined)
    return `${err.message}: ${describe(err.cause, baseURL)}`;
  if (err.name === "ImagesRefusedError" && err.cause !== undefined)
    return `${describe(err.cause, baseURL)}; ${err.message}`;
  const where = baseURL === undefined ? "the provider" : shownURL(baseURL);
  const parse = httpParseError(err);
  if (parse !== undefined)
    return `${where} did not answer in valid HTTP (${parse}): check --base-url`;
  if (err.name === "APIConnectionError" || err.name === "APIConnectionTimeoutError") {
    return `could not reach ${where} (${err.message.replace(/\.$/, "")}): check --base-url and the network`;
  }
  const body = err.error?.error ?? err.error;
  if (typeof err.status === "number") {
    const detail = body?.message ?? err.message;
    const hint =
      hintsByStatus[err.status] ??
      (err.status >= 500 ? "the provider failed; try again later" : "");
    return `provider error ${err.status}${body?.type ? ` ${body.type}` : ""}: ${detail}${hint ? ` (${hint})` : ""}`;
  }
  const type = typeof body?.type === "string" && body.type !== "error" ? body.type : err.type;
  if (typeof type === "string") {
    const detail = body?.message ?? err.message;
    const hint = hintsByType[type] ?? "the answer stopped mid-stream; try again";
    return `provider error ${type}: ${detail} (${hint})`;
  }
  return err.message;
}

/**
 * Why Node's HTTP parser refused the server's answer (`Header overflow`), when that is what
 * `error` comes from: the SDKs wrap the transport's `TypeError("fetch failed")` (or, mid-body,
 * `"terminated"`), whose cause is the parser's error, coded `HPE_…`.
 */
function httpParseError(error: Error): string | undefined {
  let cause: unknown = error;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth++, cause = cause.cause) {
    const { code, reason } = cause as Error & { code?: unknown; reason?: unknown };
    if (typeof code === "string" && code.startsWith("HPE_"))
      return typeof reason === "string" && reason !== "" ? reason : code;
  }
  return undefined;
}

/** `no space left on device (ENOSPC)`: what a failed system call means, and its code. */
export function systemErrorText(error: Error & { code?: string }): string {
  return error.code ? `${systemErrorMeaning(error.code)} (${error.code})` : error.message;
}
