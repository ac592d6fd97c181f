import type {
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
