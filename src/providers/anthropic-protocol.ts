import type {
  Tool as AnthropicTool,
  ContentBlockParam,
  MessageParam,
  RawMessageStreamEvent,
  TextBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import type { Message, ModelEvent, ToolCall, ToolSpec, Usage } from "../types.js";
import { admitCalls, type RoundIds } from "./calls.js";
import { streamErrorFrom } from "./stream-error.js";

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
        add("user", textBlocks(message.content));
        break;
      case "assistant":
        add("assistant", [
          ...textBlocks(message.content),
          ...message.toolCalls.map((call) => ({
            type: "tool_use" as const,
            id: call.id,
            name: call.name,
            input: isObject(call.input) ? call.input : {},
          })),
        ]);
        break;
      case "tool":
        add("user", [
          {
            type: "tool_result",
            tool_use_id: message.toolCallId,
            ...(message.content !== "" && { content: message.content }),
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

type Block =
  | { kind: "text" }
  | { kind: "tool"; id: string; name: string; json: string; initial: unknown; done: boolean }
  | { kind: "ignored" };

interface StreamState {
  blocks: Map<number, Block>;
  calls: ToolCall[];
  stopReason: string | null | undefined;
  usage?: Usage;
  /** An invalid tool input seen at block stop, thrown once the stop reason is known. */
  pendingError?: Error;
}

/**
 * The state machine over raw stream events. Text streams out as it comes; tool calls are held
 * until `message_stop` confirms a supported stop reason, so a call cut short is never yielded,
 * and leave with ids and names the provider takes (`admitCalls`; `ids.taken` are the ids the
 * history already holds). Unknown event and block types are ignored; out-of-order events throw;
 * an `error` event throws a `ProviderStreamError`.
 */
export async function* toModelEvents(
  events: AsyncIterable<RawMessageStreamEvent>,
  ids: RoundIds = {},
): AsyncGenerator<ModelEvent> {
  const state: StreamState = { blocks: new Map(), calls: [], stopReason: undefined };
  for await (const event of events) {
    const emitted = step(state, event);
    if (emitted === "stop") {
      for (const call of admitCalls(state.calls, ids)) yield { type: "tool_call", call };
      yield state.usage ? { type: "done", usage: state.usage } : { type: "done" };
      return;
    }
    if (emitted) yield emitted;
  }
  if (state.pendingError) throw state.pendingError;
  throw new Error("the model stream ended before message_stop");
}

function step(state: StreamState, event: RawMessageStreamEvent): ModelEvent | "stop" | undefined {
  if ((event as { type: string }).type === "error") throw streamErrorFrom(event);
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
      const block = event.content_block;
      if (block.type === "text") {
        state.blocks.set(event.index, { kind: "text" });
        return block.text ? { type: "text", text: block.text } : undefined;
      }
      if (block.type === "tool_use") {
        const tool = {
          id: block.id,
          name: block.name,
          json: "",
          initial: block.input,
          done: false,
        };
        state.blocks.set(event.index, { kind: "tool", ...tool });
      } else state.blocks.set(event.index, { kind: "ignored" });
      return undefined;
    }
    case "content_block_delta": {
      const block = openBlock(state, event.index, event.type);
      if (event.delta.type === "text_delta" && block.kind === "text") {
        return event.delta.text ? { type: "text", text: event.delta.text } : undefined;
      }
      if (event.delta.type === "input_json_delta" && block.kind === "tool") {
        block.json += event.delta.partial_json;
      }
      return undefined;
    }
    case "content_block_stop": {
      const block = openBlock(state, event.index, event.type);
      if (block.kind === "tool") {
        block.done = true;
        const input = parseToolInput(block, event.index);
        if (input instanceof Error) state.pendingError ??= input;
        else state.calls.push({ id: block.id, name: block.name, input });
      }
      return undefined;
    }
    case "message_delta":
      state.stopReason = event.delta.stop_reason;
      if (state.usage && event.usage) state.usage.outputTokens = event.usage.output_tokens;
      if (state.stopReason !== "max_tokens" && state.pendingError) throw state.pendingError;
      return undefined;
    case "message_stop":
      checkStop(state);
      return "stop";
    default:
      return undefined;
  }
}

function openBlock(state: StreamState, index: number, type: string): Block {
  const block = state.blocks.get(index);
  if (!block) throw new Error(`${type} for content block ${index}, which never started`);
  if (block.kind === "tool" && block.done)
    throw new Error(`${type} after content block ${index} stopped`);
  return block;
}

function parseToolInput(block: { json: string; initial: unknown }, index: number) {
  let input: unknown = block.initial ?? {};
  if (block.json.trim() !== "") {
    try {
      input = JSON.parse(block.json);
    } catch {
      return new Error(`tool_use block ${index} returned invalid JSON input`);
    }
  }
  if (!isObject(input)) throw new Error(`tool_use block ${index} returned non-object input`);
  return input;
}

function checkStop(state: StreamState): void {
  const reason = state.stopReason;
  if (reason === undefined || reason === null) {
    throw new Error("the model stream ended without a stop_reason");
  }
  if (!(supportedStopReasons as readonly string[]).includes(reason)) {
    const open = [...state.blocks.values()].some((b) => b.kind === "tool");
    const base = stopReasonErrors[reason] ?? `unsupported stop_reason ${JSON.stringify(reason)}`;
    throw new Error(
      open && reason === "max_tokens" ? `${base}; the cut-off tool call was not run` : base,
    );
  }
  if (state.pendingError) throw state.pendingError;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
