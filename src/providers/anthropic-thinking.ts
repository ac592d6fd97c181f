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
 * `off` asks for `{type: "disabled"}`, or what the model takes instead (`modelThinking`); unset
 * sends nothing, leaving the model's default. mini-agent never sets `temperature` or forces a
 * tool (`tool_choice`), both refused with thinking on.
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

/**
 * Why `model` cannot think at `level`, or undefined: `xhigh` and `max` are values of the adaptive
 * mode's `output_config.effort`; a model of the manual mode has a token budget per level and none
 * beyond `high`.
 */
export function manualEffortProblem(model: string, level: ThinkingLevel | undefined) {
  if ((level !== "xhigh" && level !== "max") || !manualOnly.test(canonicalModel(model)))
    return undefined;
  return `--thinking ${level} is not taken by ${model}, which thinks within a token budget: use low, medium or high`;
}

/**
 * What a model takes beyond the two modes, by its name; the first pattern that matches wins, and
 * a model none matches keeps `disabled` and the API's default display.
 * - `off`: what `--thinking off` sends. `disabled` by default. Claude Sonnet 5.5 refuses it with
 *   a 400 and takes `{type: "between_tools"}` instead, its lowest setting: no thinking up front,
 *   only short progress notes between tool calls, which come back as thinking blocks with their
 *   text and go back unchanged ("What's new in Claude Sonnet 5.5", its migration guide).
 *   Claude Opus 5.5 and Claude Fable 5.1 think always ("Adaptive (always on)" in the models
 *   overview; `disabled` is refused): `off` sends no `thinking` and the lowest effort, `low`.
 * - `summarize`: the model's default `display` is `"omitted"` (thinking blocks come back with an
 *   empty text and their signature): Claude Sonnet 5 and 5.5 (the Sonnet 5.5 migration guide's
 *   table), Opus 5.5 and Fable 5.1. A level asks for `display: "summarized"` there, always, so
 *   the thinking shown and kept in the session has its text, as on the models before them.
 */
interface ModelThinking {
  off: "disabled" | "between_tools" | "lowest";
  summarize: boolean;
}

const modelThinking: [RegExp, ModelThinking][] = [
  [/^claude-sonnet-5-5(\b|-)/, { off: "between_tools", summarize: true }],
  [/^claude-sonnet-5(\b|-)/, { off: "disabled", summarize: true }],
  [/^claude-(opus-5-5|fable-5-1)(\b|-)/, { off: "lowest", summarize: true }],
];

/**
 * A model's name as the patterns above read it. Gateways spell the same models their own way:
 * OpenRouter `anthropic/claude-sonnet-4.5`, Bedrock `us.anthropic.claude-sonnet-4-5-…-v1:0`,
 * Vertex `claude-opus-4-1@20250805`; here each becomes `claude-…` with hyphens between the
 * version's numbers.
 */
export function canonicalModel(model: string): string {
  return model
    .toLowerCase()
    .replace(/^.*\//, "")
    .replace(/^(?:[a-z]{2,4}\.)?anthropic\./, "")
    .replace(/(\d)\.(\d)/g, "$1-$2");
}

const thinkingOf = (model: string): ModelThinking =>
  modelThinking.find(([pattern]) => pattern.test(canonicalModel(model)))?.[1] ?? {
    off: "disabled",
    summarize: false,
  };

/**
 * The request fields for `level` on `model`. `effort` is the session's level when a tool loop is
 * finished without thinking (`loopThinking`): `between_tools` keeps it, as the effort of a
 * conversation under `between_tools` must not change.
 */
export function anthropicThinking(
  model: string,
  level: ThinkingLevel | undefined,
  effort?: Exclude<ThinkingLevel, "off">,
): AnthropicThinking {
  const none = { extraTokens: 0, headers: {} };
  if (level === undefined) return none;
  const rules = thinkingOf(model);
  if (level === "off") {
    if (rules.off === "between_tools")
      return {
        thinking: { type: "between_tools" },
        ...(effort !== undefined && { output_config: { effort } }),
        ...none,
      };
    if (rules.off === "lowest") return { output_config: { effort: "low" }, ...none };
    return { thinking: { type: "disabled" }, ...none };
  }
  if (!manualOnly.test(canonicalModel(model))) {
    return {
      thinking: rules.summarize
        ? { type: "adaptive", display: "summarized" }
        : { type: "adaptive" },
      output_config: { effort: level },
      ...none,
    };
  }
  if (level === "xhigh" || level === "max") throw new Error(manualEffortProblem(model, level));
  const budget = thinkingBudgets[level];
  return {
    thinking: { type: "enabled", budget_tokens: budget },
    extraTokens: budget,
    headers: { "anthropic-beta": interleavedThinkingBeta },
  };
}

/**
 * The thinking of one request on `model`, and its messages, under the API's rule for tool loops:
 * a loop is one assistant turn and keeps one thinking configuration. A request inside a loop (its
 * last user message holds tool results) asks for thinking only when the loop's first assistant
 * message starts with thinking that goes back; a loop begun without it (thinking was off, its
 * thinking could not be sent back, another provider answered) is finished with thinking off, and
 * the level applies again from the next prompt. A loop finished with `disabled` goes back without
 * its thinking blocks, as the API asks of a turn without thinking; under `between_tools` (or on a
 * model that thinks always) they go back unchanged, as the progress notes must. `undefined` (the
 * model's default) is left to the model.
 */
export function loopThinking(
  model: string,
  messages: MessageParam[],
  level: ThinkingLevel | undefined,
): { thinking: AnthropicThinking; messages: MessageParam[] } {
  const start = loopStart(messages);
  const asked = { thinking: anthropicThinking(model, level), messages };
  if (start === undefined || level === undefined) return asked;
  const thought = isThinking(blocksOf(messages[start])[0]);
  if (level !== "off" && thought) return asked;
  const thinking = anthropicThinking(model, "off", level === "off" ? undefined : level);
  if (thinking.thinking?.type !== "disabled") return { thinking, messages };
  const unthought = messages.map((message, i) =>
    i < start || message.role !== "assistant"
      ? message
      : { ...message, content: blocksOf(message).filter((block) => !isThinking(block)) },
  );
  return { thinking, messages: unthought };
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
