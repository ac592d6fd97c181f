import { within } from "../paths.js";
import { ProviderError, type ProviderName } from "../providers/provider-error.js";
import { secretRedactor } from "../secrets.js";
import { stateHome } from "../state-home.js";
import { systemErrorMeaning } from "../system-errors.js";
import { scrubURLs, shownURL } from "../url.js";
import { visible } from "../visible.js";

const keyVariables: Record<ProviderName, string> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  "openai-responses": "OPENAI_API_KEY",
};

const hintsByStatus: Record<number, string> = {
  400: "the provider rejected the request",
  403: "the key is not allowed to use this model or endpoint",
  404: "check --model and --base-url",
  413: "the request is too large; start a new session",
  429: "rate limited: wait a little and try again",
  500: "the provider failed; try again later",
  529: "the provider is overloaded; try again later",
};

const hintsByType: Record<string, string> = {
  invalid_request_error: "the provider rejected the request",
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
  return visible(secretRedactor(env)(scrubURLs(describe(error, baseURL, env), baseURL)));
}

function describe(error: unknown, baseURL: string | undefined, env: NodeJS.ProcessEnv): string {
  if (isCompactionError(error) && error.cause !== undefined)
    return `${error.message}: ${describe(error.cause, baseURL, env)}`;
  // The provider refused images: why it did, then what the session does from now on.
  if (error instanceof Error && error.name === "ImagesRefusedError" && error.cause !== undefined)
    return `${describe(error.cause, baseURL, env)}; ${error.message}`;
  if (error instanceof ProviderError) return describeProviderError(error, baseURL);
  if (isFailedCall(error)) return describeFailedCall(error, stateHome(env));
  return error instanceof Error ? error.message : String(error);
}

/** A system call's failure as Node words it (`ENOTDIR: not a directory, scandir '/x'`). */
interface FailedCall extends Error {
  code: string;
  syscall: string;
  path: string;
}

function isFailedCall(error: unknown): error is FailedCall {
  if (!(error instanceof Error)) return false;
  const { code, syscall, path } = error as Partial<FailedCall>;
  return (
    typeof code === "string" &&
    typeof syscall === "string" &&
    typeof path === "string" &&
    error.message.startsWith(`${code}: `)
  );
}

const callVerbs: Record<string, string> = {
  scandir: "list",
  opendir: "list",
  mkdir: "make the folder",
  unlink: "remove",
  rmdir: "remove",
  stat: "look at",
  lstat: "look at",
  realpath: "resolve",
  readlink: "read the link",
};

/**
 * What a call that nothing else described was doing, where, and why, in words; a path in the
 * state folder names it (`MINI_AGENT_HOME` chooses another).
 */
function describeFailedCall(error: FailedCall, state: string): string {
  const { syscall, path } = error;
  const verb = callVerbs[syscall] ?? syscall;
  const where = within(state, path) ? `; it is in the state folder ${state} (MINI_AGENT_HOME)` : "";
  return `cannot ${verb} ${path}: ${systemErrorText(error)}${where}`;
}

/**
 * Known by name: the class's module brings the session's schemas with it, which the command's
 * light entry (it reports what escapes a turn) does not load.
 */
function isCompactionError(error: unknown): error is Error {
  return error instanceof Error && error.name === "CompactionError";
}

/** A provider's failure with what to do about it; a refused key names the provider's variable. */
function describeProviderError(error: ProviderError, baseURL: string | undefined): string {
  const where = baseURL === undefined ? "the provider" : shownURL(baseURL);
  const keyHint = `check the API key (${keyVariables[error.provider]})`;
  switch (error.kind) {
    case "invalid-http":
      return `${where} did not answer in valid HTTP (${error.providerMessage}): check --base-url`;
    case "connection":
    case "timeout":
      return `could not reach ${where} (${error.providerMessage.replace(/\.$/, "")}): check --base-url and the network`;
    case "status": {
      const status = error.status ?? 0;
      const hint =
        status === 401
          ? keyHint
          : (hintsByStatus[status] ??
            (status >= 500 ? "the provider failed; try again later" : ""));
      return `provider error ${status}${error.type ? ` ${error.type}` : ""}: ${error.providerMessage}${hint ? ` (${hint})` : ""}`;
    }
    case "stream": {
      const type = error.type ?? "error";
      const hint =
        type === "authentication_error"
          ? keyHint
          : (hintsByType[type] ?? "the answer stopped mid-stream; try again");
      return `provider error ${type}: ${error.providerMessage} (${hint})`;
    }
    case "stop":
    case "dropped":
    case "stalled":
      return error.providerMessage;
  }
}

/** `no space left on device (ENOSPC)`: what a failed system call means, and its code. */
export function systemErrorText(error: Error & { code?: string | undefined }): string {
  return error.code ? `${systemErrorMeaning(error.code)} (${error.code})` : error.message;
}
