import type {
  Tool as AnthropicTool,
  ContentBlockParam,
  ImageBlockParam,
  MessageParam,
  RawContentBlockStartEvent,
  RawMessageStreamEvent,
  TextBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import { assertNever } from "../assert-never.js";
import {
  admitCallEvents,
  type CallEvent,
  callFromArguments,
  type RoundIds,
} from "../history/calls.js";
import { holdBack } from "../images.js";
import type {
  Message,
  ModelEvent,
  Reasoning,
  ResultPart,
  ToolCall,
  ToolSpec,
  Usage,
} from "../types.js";
import { type ModelStop, ProviderError, streamErrorFrom } from "./provider-error.js";
import { isResponsesReasoning } from "./responses-reasoning.js";

/**
 * The Anthropic Messages translation, both ways, with no I/O: `toAnthropicMessages` for what we
 * send and `toModelEvents` for what comes back. `AnthropicModelClient` wires them to the SDK.
 */

type Ephemeral = { cache_control: { type: "ephemeral" } };
const ephemeral: Ephemeral = { cache_control: { type: "ephemeral" } };

/**
 * Our history as Messages API turns. Tool results become `tool_result` blocks in one `user`
 * message, results first (a user message that follows them joins after them); assistant calls
 * become `tool_use` blocks; empty text is dropped; consecutive turns of one role are merged.
 * An assistant round's reasoning goes back as it came (`assistantBlocks`).
 */
export function toAnthropicMessages(messages: readonly Message[]): MessageParam[] {
  const turns: { role: "user" | "assistant"; content: ContentBlockParam[] }[] = [];
  const add = (role: "user" | "assistant", blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case "user":
        add("user", message.parts ? partBlocks(message.parts) : textBlocks(message.content));
        break;
      case "assistant":
        add("assistant", assistantBlocks(message));
        break;
      case "tool":
        add("user", [
          {
            type: "tool_result",
            tool_use_id: message.toolCallId,
            ...resultContent(message),
            is_error: message.isError,
          },
        ]);
        break;
      default:
        assertNever(message);
    }
  }
  return turns;
}

/**
 * One assistant round as content blocks: its text, then its calls, with every signed thinking
 * block and every redacted one put back where it came (`Reasoning.at`), unchanged: the API
 * refuses a tool loop whose thinking is missing, moved or modified. Reasoning without a
 * signature, and OpenAI's encrypted reasoning (both from another provider), is not sent: the API
 * would refuse it.
 */
function assistantBlocks(message: Message & { role: "assistant" }): ContentBlockParam[] {
  const blocks: ContentBlockParam[] = [];
  let text = 0;
  let calls = 0;
  const upTo = (place: { text: number; calls: number }) => {
    const end = Math.min(place.text, message.content.length);
    if (end > text) blocks.push(...textBlocks(message.content.slice(text, end)));
    text = Math.max(text, end);
    for (; calls < Math.min(place.calls, message.toolCalls.length); calls++) {
      const call = message.toolCalls[calls] as ToolCall;
      const input = isObject(call.input) ? call.input : {};
      blocks.push({ type: "tool_use", id: call.id, name: call.name, input });
    }
  };
  for (const part of message.reasoning ?? []) {
    const block = reasoningBlock(part);
    if (!block) continue;
    upTo(part.at);
    blocks.push(block);
  }
  upTo({ text: message.content.length, calls: message.toolCalls.length });
  return blocks;
}

function reasoningBlock(part: Reasoning): ContentBlockParam | undefined {
  if (part.type === "redacted_thinking")
    return isResponsesReasoning(part.data)
      ? undefined
      : { type: "redacted_thinking", data: part.data };
  if (part.signature === undefined) return undefined;
  return { type: "thinking", thinking: part.text, signature: part.signature };
}

/**
 * A result's content: its text, or, when it holds images, its parts as text and `image` blocks
 * (base64 source) in order, which the API takes inside a `tool_result` that is not an error.
 */
function resultContent(message: Message & { role: "tool" }): {
  content?: string | (TextBlockParam | ImageBlockParam)[];
} {
  if (message.parts === undefined)
    return message.content === "" ? {} : { content: message.content };
  // An error's content must be text only: it goes as its text, each image's line saying it was
  // not shown (the model must not think it saw one).
  if (message.isError) {
    let content = message.content;
    for (const part of message.parts) {
      if (part.type === "image") content = holdBack(content, part, IMAGE_IN_ERROR).content;
    }
    return { content };
  }
  return { content: partBlocks(message.parts) };
}

/** Why an image of an error result is not sent to the Messages API. */
const IMAGE_IN_ERROR = "an error result carries only text to this provider";

/** Text and image parts as text blocks (empty text dropped) and `image` blocks, in order. */
function partBlocks(parts: readonly ResultPart[]): (TextBlockParam | ImageBlockParam)[] {
  return parts.flatMap((part): (TextBlockParam | ImageBlockParam)[] =>
    part.type === "text"
      ? textBlocks(part.text)
      : [
          {
            type: "image",
            source: { type: "base64", media_type: part.mediaType, data: part.data },
          },
        ],
  );
}

function textBlocks(text: string): TextBlockParam[] {
  return text.trim() === "" ? [] : [{ type: "text", text }];
}

export function toAnthropicTools(tools: ToolSpec[]): AnthropicTool[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema as AnthropicTool["input_schema"],
  }));
}

/**
 * Prompt caching: a breakpoint after the tools, after the system prompt and on the newest
 * message, so each round reads the prefix the previous round wrote.
 */
export function withCacheBreakpoints(request: {
  system: string;
  tools: AnthropicTool[];
  messages: MessageParam[];
}): { system: TextBlockParam[]; tools: AnthropicTool[]; messages: MessageParam[] } {
  const tools = request.tools.map((tool, i) =>
    i === request.tools.length - 1 ? { ...tool, ...ephemeral } : tool,
  );
  const system: TextBlockParam[] =
    request.system === "" ? [] : [{ type: "text", text: request.system, ...ephemeral }];
  const messages = request.messages.map((message, i) => {
    if (i !== request.messages.length - 1 || typeof message.content === "string") return message;
    const content = message.content.map((block, j) =>
      j === message.content.length - 1 ? { ...block, ...ephemeral } : block,
    );
    return { ...message, content } as MessageParam;
  });
  return { system, tools, messages };
}

const stopReasonErrors: Record<string, string> = {
  max_tokens:
    "the model reached its output token limit (stop_reason max_tokens) before finishing; raise the limit or ask for less",
  refusal: "the model declined to continue (stop_reason refusal)",
  model_context_window_exceeded:
    "the conversation no longer fits the model's context window (stop_reason model_context_window_exceeded); start a new session",
  pause_turn:
    "the model paused a long turn (stop_reason pause_turn), which mini-agent cannot resume",
  stop_sequence:
    "the model stopped at a stop sequence (stop_reason stop_sequence), which mini-agent never sets",
};

/** The stop reasons a round may end with; every other one throws its own message. */
export const supportedStopReasons = ["end_turn", "tool_use"] as const;

type Place = { text: number; calls: number };
type Block =
  | { kind: "text" }
  | { kind: "tool"; id: string; name: string; json: string; initial: unknown; done: boolean }
  | { kind: "thinking"; text: string; signature: string; at: Place }
  | { kind: "redacted"; data: string; at: Place }
  | { kind: "ignored" };

interface StreamState {
  blocks: Map<number, Block>;
  calls: CallEvent[];
  /** How much text and how many calls the round has had so far: where reasoning comes. */
  textLength: number;
  toolBlocks: number;
  /** The kind of the block started last, to say a round was cut while thinking. */
  lastKind?: Block["kind"];
  stopReason: string | null | undefined;
  usage?: Usage;
}

/**
 * The state machine over raw stream events. Text streams out as it comes; tool calls are held
 * until `message_stop` confirms a supported stop reason, so a call cut short is never yielded,
 * and leave with ids and names the provider takes (`admitCalls`; `ids.taken` are the ids the
 * history already holds). An input that is not a JSON object gives the call `{}` and
 * `invalidInput` (`callFromArguments`), so the loop answers it and the round stays whole.
 * Unknown event and block types are ignored; out-of-order events throw; an `error` event throws
 * a `ProviderError`.
 */
export async function* toModelEvents(
  events: AsyncIterable<RawMessageStreamEvent>,
  ids: RoundIds = {},
): AsyncGenerator<ModelEvent> {
  const state: StreamState = {
    blocks: new Map(),
    calls: [],
    textLength: 0,
    toolBlocks: 0,
    stopReason: undefined,
  };
  for await (const event of events) {
    const emitted = step(state, event);
    if (emitted === "stop") {
      yield* admitCallEvents(state.calls, ids);
      yield state.usage ? { type: "done", usage: state.usage } : { type: "done" };
      return;
    }
    if (emitted) yield emitted;
  }
  throw new Error("the model stream ended before message_stop");
}

function step(state: StreamState, event: RawMessageStreamEvent): ModelEvent | "stop" | undefined {
  if ((event as { type: string }).type === "error") throw streamErrorFrom("anthropic", event);
  switch (event.type) {
    case "message_start": {
      const usage = event.message?.usage;
      if (!usage) return undefined;
      state.usage = {
        inputTokens: usage.input_tokens,
        outputTokens: usage.output_tokens,
        ...(usage.cache_read_input_tokens != null && {
          cacheReadTokens: usage.cache_read_input_tokens,
        }),
        ...(usage.cache_creation_input_tokens != null && {
          cacheWriteTokens: usage.cache_creation_input_tokens,
        }),
      };
      return undefined;
    }
    case "content_block_start": {
      const block = startBlock(state, event.content_block);
      state.blocks.set(event.index, block);
      state.lastKind = block.kind;
      const content = event.content_block;
      if (content.type === "text") return streamedText(state, content.text);
      if (content.type === "thinking" && content.thinking)
        return { type: "thinking", text: content.thinking };
      return undefined;
    }
    case "content_block_delta": {
      const block = openBlock(state, event.index, event.type);
      const delta = event.delta;
      if (delta.type === "text_delta" && block.kind === "text")
        return streamedText(state, delta.text);
      if (delta.type === "input_json_delta" && block.kind === "tool")
        block.json += delta.partial_json;
      if (delta.type === "thinking_delta" && block.kind === "thinking" && delta.thinking) {
        block.text += delta.thinking;
        return { type: "thinking", text: delta.thinking };
      }
      if (delta.type === "signature_delta" && block.kind === "thinking")
        block.signature += delta.signature;
      return undefined;
    }
    case "content_block_stop": {
      const block = openBlock(state, event.index, event.type);
      if (block.kind === "thinking" || block.kind === "redacted") {
        state.blocks.set(event.index, { kind: "ignored" });
        return { type: "reasoning", part: finishedReasoning(block) };
      }
      if (block.kind === "tool") {
        block.done = true;
        state.calls.push(callFromArguments(block.id, block.name, block.json, block.initial ?? {}));
      }
      return undefined;
    }
    case "message_delta":
      state.stopReason = event.delta.stop_reason;
      if (state.usage && event.usage) state.usage.outputTokens = event.usage.output_tokens;
      return undefined;
    case "message_stop":
      checkStop(state);
      return "stop";
    default:
      return undefined;
  }
}

function startBlock(state: StreamState, block: RawContentBlockStartEvent["content_block"]): Block {
  const at = { text: state.textLength, calls: state.toolBlocks };
  switch (block.type) {
    case "text":
      return { kind: "text" };
    case "tool_use":
      state.toolBlocks++;
      return {
        kind: "tool",
        id: block.id,
        name: block.name,
        json: "",
        initial: block.input,
        done: false,
      };
    case "thinking":
      return { kind: "thinking", text: block.thinking ?? "", signature: block.signature ?? "", at };
    case "redacted_thinking":
      return { kind: "redacted", data: block.data, at };
    default:
      return { kind: "ignored" };
  }
}

function streamedText(state: StreamState, text: string | undefined): ModelEvent | undefined {
  if (!text) return undefined;
  state.textLength += text.length;
  return { type: "text", text };
}

/** A thinking block as it is kept; one that came without a signature keeps none. */
function finishedReasoning(block: Block & { kind: "thinking" | "redacted" }): Reasoning {
  if (block.kind === "redacted")
    return { type: "redacted_thinking", data: block.data, at: block.at };
  return {
    type: "thinking",
    text: block.text,
    ...(block.signature !== "" && { signature: block.signature }),
    at: block.at,
  };
}

function openBlock(state: StreamState, index: number, type: string): Block {
  const block = state.blocks.get(index);
  if (!block) throw new Error(`${type} for content block ${index}, which never started`);
  if (block.kind === "tool" && block.done)
    throw new Error(`${type} after content block ${index} stopped`);
  return block;
}

function checkStop(state: StreamState): void {
  const reason = state.stopReason;
  if (reason === undefined || reason === null) {
    throw new Error("the model stream ended without a stop_reason");
  }
  if (!(supportedStopReasons as readonly string[]).includes(reason)) {
    const open = [...state.blocks.values()].some((b) => b.kind === "tool");
    const base = stopReasonErrors[reason] ?? `unsupported stop_reason ${JSON.stringify(reason)}`;
    const stopped = (providerMessage: string, stop?: ModelStop) =>
      new ProviderError({
        provider: "anthropic",
        kind: "stop",
        type: reason,
        providerMessage,
        ...(stop && { stop }),
      });
    if (reason === "model_context_window_exceeded") throw stopped(base);
    if (reason === "refusal") throw stopped(base, "refusal");
    if (reason !== "max_tokens") throw new Error(base);
    if (open) throw stopped(`${base}; the cut-off tool call was not run`, "max_tokens");
    const thinking = state.lastKind === "thinking";
    throw stopped(thinking ? `${base}; it was cut off while thinking` : base, "max_tokens");
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
