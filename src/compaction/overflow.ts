/**
 * The provider's "this request does not fit the context window", with the sizes it names:
 * - Anthropic: a 400 `invalid_request_error` whose message is
 *   `prompt is too long: 212000 tokens > 200000 maximum`;
 * - Anthropic: the stop reason `model_context_window_exceeded` (the adapter's error names it);
 * - OpenAI-compatible: the error code `context_length_exceeded`, or (vLLM and other local
 *   servers, without the code) the message `This model's maximum context length is 128000
 *   tokens. However, your messages resulted in 130000 tokens. …`.
 * Read by duck typing, so this file needs no provider SDK.
 */
export interface ContextOverflow {
  /** Tokens the provider counted in the refused request, when it said. */
  tokens?: number;
  /** The provider's maximum, when it said. */
  maximum?: number;
}

interface ErrorShape {
  message?: unknown;
  code?: unknown;
  error?: { message?: unknown; code?: unknown; error?: { message?: unknown; code?: unknown } };
}

export function contextOverflow(error: unknown): ContextOverflow | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const shape = error as ErrorShape;
  const layers = [shape, shape.error, shape.error?.error];
  const texts = layers.map((layer) => layer?.message).filter((m) => typeof m === "string");
  const codes = layers.map((layer) => layer?.code);
  const text = texts.join("\n");
  const anthropic = /prompt is too long: (\d+) tokens > (\d+) maximum/.exec(text);
  if (anthropic) return { tokens: Number(anthropic[1]), maximum: Number(anthropic[2]) };
  if (/prompt is too long|model_context_window_exceeded/.test(text)) return {};
  const openai =
    codes.includes("context_length_exceeded") ||
    /context_length_exceeded|maximum context length is \d+ tokens/.test(text);
  if (openai) {
    const maximum = /maximum context length is (\d+) tokens/.exec(text)?.[1];
    const tokens = /(?:resulted in|requested) (\d+) tokens/.exec(text)?.[1];
    return {
      ...(tokens !== undefined && { tokens: Number(tokens) }),
      ...(maximum !== undefined && { maximum: Number(maximum) }),
    };
  }
  return undefined;
}
