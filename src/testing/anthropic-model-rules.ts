import type { SseFrame } from "./sse-server.js";

/**
 * The thinking configurations the Messages API refuses for a model, by its name, as the strict
 * server checks them. From Anthropic's model pages ("What's new in Claude Sonnet 5.5", the Claude
 * Sonnet 5.5 migration guide, "Troubleshooting thinking", the models overview):
 * - only Claude Sonnet 5.5 takes `thinking: {type: "between_tools"}`, in place of `disabled`,
 *   which it refuses with a 400 `invalid_request_error` whose message points to `between_tools`;
 *   `between_tools` works at effort low, medium and high and is refused at xhigh and max; manual
 *   thinking budgets (`enabled`) are refused too;
 * - Claude Opus 5.5 and Claude Fable 5.1 think always (adaptive): `disabled` and `enabled` are
 *   refused. Other models are held to the general rules only.
 * The docs quote none of these refusals word for word: every text below is this server's own,
 * written to say what the docs say the API's message says.
 */
export function modelThinkingProblem(
  model: string,
  thinking: { type?: unknown },
  effort: unknown,
): string | undefined {
  const type = thinking.type;
  if (type === undefined) return undefined;
  if (sonnet55.test(model)) {
    if (type === "disabled")
      return 'thinking.type: "disabled" is not supported on this model. To turn off up-front thinking, send "between_tools".';
    if (type === "enabled")
      return 'thinking.type: "enabled" is not supported on this model. Use "adaptive" or "between_tools", with `output_config.effort`.';
    if (type === "between_tools" && (effort === "xhigh" || effort === "max"))
      return `thinking.type: "between_tools" is not supported at effort "${effort}". Use "adaptive" thinking at this effort.`;
    return undefined;
  }
  if (alwaysAdaptive.test(model) && type !== "adaptive")
    return `thinking.type: "${String(type)}" is not supported on this model. Use "adaptive" and \`output_config.effort\` to control thinking.`;
  if (type === "between_tools")
    return 'thinking.type: "between_tools" is not supported on this model.';
  return undefined;
}

/**
 * Whether the model answers `body` with its thinking text omitted: `display` defaults to
 * `"omitted"` on Claude Sonnet 5 and 5.5 (the Sonnet 5.5 migration guide's table), Opus 5.5 and
 * Fable 5.1, whether `thinking` is sent or left out (they think by default). The blocks then come
 * back with an empty text and a signature. `display: "summarized"` returns the text, and so does
 * `between_tools` for its progress notes ("What's new in Claude Sonnet 5.5").
 */
export function omitsThinking(body: { model?: unknown; thinking?: unknown }): boolean {
  const thinking = (body.thinking ?? {}) as { type?: unknown; display?: unknown };
  if (thinking.type === "between_tools" || thinking.type === "disabled") return false;
  return displayOmitted.test(String(body.model)) && thinking.display !== "summarized";
}

const displayOmitted = /^claude-(sonnet-5|opus-5-5|fable-5-1)(\b|-)/;
const sonnet55 = /^claude-sonnet-5-5(\b|-)/;
const alwaysAdaptive = /^claude-(opus-5-5|fable-5-1)(\b|-)/;

/** `frames` with every thinking block's text left out and `signature` as its signature. */
export function withThinkingOmitted(frames: SseFrame[], signature: string): SseFrame[] {
  return frames.flatMap((frame) => {
    const data = frame.data as { delta?: { type?: string } };
    if (data.delta?.type === "thinking_delta") return [];
    if (data.delta?.type !== "signature_delta") return [frame];
    return [{ ...frame, data: { ...data, delta: { ...data.delta, signature } } }];
  });
}
