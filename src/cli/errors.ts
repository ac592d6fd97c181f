import { UsageError } from "./args.js";

interface ProviderError extends Error {
  status?: number;
  /** Anthropic nests the error one level deeper than OpenAI. */
  error?: { error?: { type?: string; message?: string }; type?: string; message?: string };
}

const hints: Record<number, string> = {
  400: "the provider rejected the request",
  401: "check the API key (ANTHROPIC_API_KEY or OPENAI_API_KEY)",
  403: "the key is not allowed to use this model or endpoint",
  404: "check --model and --base-url",
  413: "the request is too large; start a new session",
  429: "rate limited: wait a little and try again",
  500: "the provider failed; try again later",
  529: "the provider is overloaded; try again later",
};

/** One line for the person at the terminal; no stack, no request body. */
export function describeError(error: unknown, baseURL: string | undefined): string {
  if (error instanceof UsageError) return error.message;
  const err: ProviderError = error instanceof Error ? error : new Error(String(error));
  if (err.name === "APIConnectionError" || err.name === "APIConnectionTimeoutError") {
    const where = baseURL ?? "the provider";
    return `could not reach ${where} (${err.message.replace(/\.$/, "")}): check --base-url and the network`;
  }
  if (typeof err.status === "number") {
    const body = err.error?.error ?? err.error;
    const detail = body?.message ?? err.message;
    const hint =
      hints[err.status] ?? (err.status >= 500 ? "the provider failed; try again later" : "");
    return `provider error ${err.status}${body?.type ? ` ${body.type}` : ""}: ${detail}${hint ? ` (${hint})` : ""}`;
  }
  return err.message;
}
