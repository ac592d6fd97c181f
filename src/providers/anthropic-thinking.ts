import type {
  ContentBlockParam,
  MessageParam,
  OutputConfig,
  ThinkingConfigParam,
} from "@anthropic-ai/sdk/resources/messages/messages";
import type { ThinkingLevel } from "../types.js";

/**
 * `--thinking` in the Messages API's terms. Two modes exist, and a model takes one of them:
 * - adaptive thinking (`thinking: {type: "adaptive"}` with `output_config.effort`): Claude 4.6
 *   and every later model; 4.7 and later refuse the manual mode with a 400;
 * - manual extended thinking (`thinking: {type: "enabled", budget_tokens}`): Claude 3.7 and the
 *   Claude 4 models up to 4.5, its only mode there. The budget is added to the output limit
 *   (`max_tokens` must exceed it), and the interleaved-thinking beta lets the model think
 *   between tool calls, as adaptive thinking does by itself.
 * `off` asks for `{type: "disabled"}`; unset sends nothing, leaving the model's default.
 * mini-agent never sets `temperature` or forces a tool (`tool_choice`), both refused with
 * thinking on.
 */
export interface AnthropicThinking {
  thinking?: ThinkingConfigParam;
  output_config?: OutputConfig;
  /** Added to the output token limit. */
  extraTokens: number;
  headers: Record<string, string>;
}

/** Thinking tokens per level in the manual mode (the API's minimum is 1024). */
export const thinkingBudgets = { low: 2048, medium: 8192, high: 24576 } as const;

export const interleavedThinkingBeta = "interleaved-thinking-2025-05-14";

/** Models that take only the manual mode: Claude 3.7 and Claude 4 up to 4.5. */
const manualOnly = /^claude-(3-|(opus|sonnet|haiku)-4-[015](\b|-)|(opus|sonnet)-4-20\d{6})/;

export function anthropicThinking(
  model: string,
  level: ThinkingLevel | undefined,
): AnthropicThinking {
  if (level === undefined) return { extraTokens: 0, headers: {} };
  if (level === "off") return { thinking: { type: "disabled" }, extraTokens: 0, headers: {} };
  if (!manualOnly.test(model)) {
    return {
      thinking: { type: "adaptive" },
      output_config: { effort: level },
      extraTokens: 0,
      headers: {},
    };
  }
  const budget = thinkingBudgets[level];
  return {
    thinking: { type: "enabled", budget_tokens: budget },
    extraTokens: budget,
    headers: { "anthropic-beta": interleavedThinkingBeta },
  };
}

/**
 * The thinking of one request, and its messages, under the API's rule for tool loops: a loop is
 * one assistant turn and keeps one thinking configuration. A request inside a loop (its last user
 * message holds tool results) asks for thinking only when the loop's first assistant message
 * starts with thinking that goes back; a loop begun without it (thinking was off, its thinking
 * could not be sent back, another provider answered) is finished with thinking off, and the level
 * applies again from the next prompt. A loop finished with thinking off goes back without its
 * thinking blocks, as the API asks of a turn without thinking. `undefined` (the model's default)
 * is left to the model.
 */
export function loopThinking(
  messages: MessageParam[],
  level: ThinkingLevel | undefined,
): { level: ThinkingLevel | undefined; messages: MessageParam[] } {
  const start = loopStart(messages);
  if (start === undefined || level === undefined) return { level, messages };
  const thought = isThinking(blocksOf(messages[start])[0]);
  if (level !== "off" && thought) return { level, messages };
  const unthought = messages.map((message, i) =>
    i < start || message.role !== "assistant"
      ? message
      : { ...message, content: blocksOf(message).filter((block) => !isThinking(block)) },
  );
  return { level: "off", messages: unthought };
}

/**
 * The index of the first assistant message of the tool loop the history ends in: back from the
 * last message over user messages that hold tool results and the assistant messages between
 * them. `undefined` when the last message holds no tool result (a prompt starts a new turn).
 */
function loopStart(messages: MessageParam[]): number | undefined {
  let start: number | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as MessageParam;
    if (message.role === "assistant") start = i;
    else if (!blocksOf(message).some((block) => block.type === "tool_result")) break;
  }
  return start;
}

function blocksOf(message: MessageParam | undefined): ContentBlockParam[] {
  if (message === undefined) return [];
  return typeof message.content === "string"
    ? [{ type: "text", text: message.content }]
    : message.content;
}

const isThinking = (block: ContentBlockParam | undefined) =>
  block?.type === "thinking" || block?.type === "redacted_thinking";
