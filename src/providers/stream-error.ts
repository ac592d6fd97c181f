import { headOf } from "../text.js";

/**
 * An error the provider sent inside a stream that had already started (Anthropic's
 * `event: error`, an OpenAI-compatible in-band error). `type` is the provider's error type
 * (`overloaded_error`, `api_error`, `server_error`, …; `error` when it gave none) and `message`
 * its own text on one line, never the raw JSON. The round committed nothing.
 */
export class ProviderStreamError extends Error {
  override readonly name = "ProviderStreamError";

  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const maxMessage = 1000;

/**
 * The error a stream carried, from its body: `{ type, message }` at the top (vLLM) or under
 * `error` (Anthropic, OpenAI), or a bare string.
 */
export function streamErrorFrom(body: unknown): ProviderStreamError {
  const outer = isObject(body) ? body : {};
  const inner = isObject(outer.error) ? outer.error : outer;
  const type = nonEmpty(inner.type) && inner.type !== "error" ? inner.type : "error";
  const text = nonEmpty(inner.message)
    ? inner.message
    : nonEmpty(body)
      ? body
      : "the provider sent an error without a message";
  return new ProviderStreamError(type, headOf(text.replace(/\s+/g, " ").trim(), maxMessage));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function nonEmpty(value: unknown): value is string {
  return typeof value === "string" && value.trim() !== "";
}
