import type {
  FunctionTool,
  ResponseFunctionCallOutputItem,
  ResponseInputItem,
  ResponseInputMessageContentList,
  ResponseStreamEvent,
  ResponseUsage,
} from "openai/resources/responses/responses";
import { assertNever } from "../assert-never.js";
import { admitCallEvents, callFromArguments, type RoundIds } from "../history/calls.js";
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
import { responsesReasoningData, responsesReasoningFor } from "./responses-reasoning.js";

/**
 * The OpenAI Responses API translation, both ways, with no I/O: `toResponsesInput` for what we
 * send and `toModelEventsFromResponses` for what comes back. `OpenAIResponsesModelClient` wires
 * them to the SDK.
 */

type Assistant = Message & { role: "assistant" };

/**
 * Our history as Responses input items: user messages as `message` items, each assistant round
 * as its text (`message`) and calls (`function_call`, arguments as a JSON string) with its
 * encrypted reasoning put back where it came (`Reasoning.at`), results as `function_call_output`
 * by `call_id`. Only reasoning that `model` wrote through this API goes back
 * (`responsesReasoningFor`): readable reasoning, another provider's and another model's are left
 * out, and so is an item that nothing followed in its round (the API refuses "a reasoning item
 * without its required following item").
 */
export function toResponsesInput(messages: readonly Message[], model: string): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
        items.push({
          type: "message",
          role: "user",
          content: message.parts ? inputParts(message.parts) : message.content,
        });
        break;
      case "assistant":
        items.push(...roundItems(message, model));
        break;
      case "tool":
        items.push({
          type: "function_call_output",
          call_id: message.toolCallId,
          output: outputOf(message),
        });
        break;
      default:
        assertNever(message);
    }
  }
  return items;
}

/**
 * A result as the output of its call: its text, or, when it holds images, its parts as
 * `input_text` and `input_image` (a data URL) in order, which the API takes there.
 */
function outputOf(message: Message & { role: "tool" }): string | ResponseFunctionCallOutputItem[] {
  const error = message.isError ? "Error: " : "";
  if (message.parts === undefined) return `${error}${message.content}`;
  const items: ResponseFunctionCallOutputItem[] = error
    ? [{ type: "input_text", text: error }]
    : [];
  for (const part of message.parts) {
    if (part.type === "text") items.push({ type: "input_text", text: part.text });
    else
      items.push({ type: "input_image", image_url: `data:${part.mediaType};base64,${part.data}` });
  }
  return items;
}

/**
 * A user message's text and image parts as `input_text` and `input_image` (a data URL, with the
 * API's default `detail`, which the SDK's type of a message's image requires).
 */
function inputParts(parts: readonly ResultPart[]): ResponseInputMessageContentList {
  return parts.map((part) =>
    part.type === "text"
      ? { type: "input_text", text: part.text }
      : {
          type: "input_image",
          image_url: `data:${part.mediaType};base64,${part.data}`,
          detail: "auto",
        },
  );
}

function roundItems(message: Assistant, model: string): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  let text = 0;
  let calls = 0;
  const upTo = (place: { text: number; calls: number }) => {
    const end = Math.min(place.text, message.content.length);
    if (end > text) items.push(assistantText(message.content.slice(text, end)));
    text = Math.max(text, end);
    for (; calls < Math.min(place.calls, message.toolCalls.length); calls++) {
      const call = message.toolCalls[calls] as ToolCall;
      items.push({
        type: "function_call",
        call_id: call.id,
        name: call.name,
        arguments: JSON.stringify(call.input ?? {}),
      });
    }
  };
  for (const part of message.reasoning ?? []) {
    const item = part.type === "redacted_thinking" && responsesReasoningFor(model, part.data);
    if (!item) continue;
    upTo(part.at);
    items.push({
      type: "reasoning",
      id: item.id,
      summary: [],
      encrypted_content: item.encrypted_content,
    });
  }
  upTo({ text: message.content.length, calls: message.toolCalls.length });
  while (items.at(-1)?.type === "reasoning") items.pop();
  return items;
}

const assistantText = (text: string): ResponseInputItem => ({
  type: "message",
  role: "assistant",
  content: text,
});

export function toResponsesTools(tools: ToolSpec[]): FunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: tool.inputSchema,
    strict: false,
  }));
}

const incompleteErrors: Record<string, string> = {
  max_output_tokens:
    "the model reached its output token limit (response.incomplete max_output_tokens) before finishing; raise the limit or ask for less",
  content_filter:
    "the provider's content filter stopped the answer (response.incomplete content_filter)",
};

interface PendingCall {
  id: string;
  name: string;
  args: string;
}

/** A reasoning item as it streams: where it began, its readable summary so far. */
interface PendingReasoning {
  at: { text: number; calls: number };
  summary: string;
}

/** The round so far: the state `toModelEventsFromResponses` folds each event into. */
interface RoundState {
  textLength: number;
  /** Calls by output index, in the order they were added. */
  calls: Map<number, PendingCall>;
  reasoning: Map<number, PendingReasoning>;
  /** Finished reasoning parts, in the order they came. */
  parts: Reasoning[];
}

/**
 * The state machine over streamed Responses events. Text and reasoning summaries stream out;
 * function calls are assembled by output index (arguments appended from their deltas, replaced
 * by the whole text of `.done` events) and released after `response.completed`, with ids and
 * names the provider takes (`admitCalls`); arguments that are not a JSON object give the call
 * `{}` and `invalidInput` (`callFromArguments`). Each reasoning item becomes a readable `thinking`
 * part (its summary, when it has one) and a `redacted_thinking` part holding its encrypted
 * content for `model` (`responsesReasoningData`), both at the place it came. It throws on
 * `response.incomplete` (a call cut by the limit is never yielded), `response.failed`, the
 * `error` event, and a stream that ends before `response.completed`; other events are ignored.
 */
export async function* toModelEventsFromResponses(
  events: AsyncIterable<ResponseStreamEvent>,
  options: RoundIds & { model: string },
): AsyncGenerator<ModelEvent> {
  const state: RoundState = { textLength: 0, calls: new Map(), reasoning: new Map(), parts: [] };
  for await (const event of events) {
    switch (event.type) {
      case "response.output_text.delta":
      case "response.refusal.delta":
        state.textLength += event.delta.length;
        if (event.delta !== "") yield { type: "text", text: event.delta };
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const pending = state.reasoning.get(event.output_index);
        if (pending) pending.summary += event.delta;
        if (event.delta !== "") yield { type: "thinking", text: event.delta };
        break;
      }
      case "response.reasoning_summary_part.added": {
        // A second summary part of one item starts on a line of its own.
        const pending = state.reasoning.get(event.output_index);
        if (pending && pending.summary !== "") {
          pending.summary += "\n\n";
          yield { type: "thinking", text: "\n\n" };
        }
        break;
      }
      case "response.output_item.added":
        itemAdded(state, event.output_index, event.item);
        break;
      case "response.function_call_arguments.delta": {
        const call = state.calls.get(event.output_index);
        if (call) call.args += event.delta;
        break;
      }
      case "response.function_call_arguments.done": {
        const call = state.calls.get(event.output_index);
        if (call) call.args = event.arguments;
        break;
      }
      case "response.output_item.done":
        itemDone(state, event.output_index, event.item, options.model);
        break;
      case "response.completed":
        yield* finish(state, options, usageOf(event.response.usage));
        return;
      case "response.incomplete": {
        const reason = event.response.incomplete_details?.reason ?? "unknown";
        const failure =
          incompleteErrors[reason] ?? `the response ended incomplete (${JSON.stringify(reason)})`;
        const stopped = (providerMessage: string, stop: ModelStop) =>
          new ProviderError({
            provider: "openai-responses",
            kind: "stop",
            type: reason,
            providerMessage,
            stop,
          });
        if (reason === "content_filter") throw stopped(failure, "refusal");
        if (reason !== "max_output_tokens") throw new Error(failure);
        if (state.calls.size > 0)
          throw stopped(`${failure}; the cut-off tool call was not run`, "max_tokens");
        const thinking = state.reasoning.size > 0 && state.textLength === 0;
        throw stopped(
          thinking ? `${failure}; it was cut off while thinking` : failure,
          "max_tokens",
        );
      }
      case "response.failed": {
        const error = event.response.error;
        throw streamErrorFrom("openai-responses", {
          type: error?.code ?? "error",
          message: error?.message ?? "the response failed",
        });
      }
      case "error":
        throw streamErrorFrom("openai-responses", {
          type: event.code ?? "error",
          message: event.message,
        });
      default:
        break;
    }
  }
  throw new Error("the model stream ended before response.completed");
}

type OutputItem = Extract<ResponseStreamEvent, { type: "response.output_item.added" }>["item"];

function itemAdded(state: RoundState, index: number, item: OutputItem): void {
  if (item.type === "function_call") {
    state.calls.set(index, { id: item.call_id, name: item.name, args: item.arguments ?? "" });
  } else if (item.type === "reasoning") {
    const at = { text: state.textLength, calls: state.calls.size };
    state.reasoning.set(index, { at, summary: "" });
  }
}

function itemDone(state: RoundState, index: number, item: OutputItem, model: string): void {
  if (item.type === "function_call") {
    state.calls.set(index, { id: item.call_id, name: item.name, args: item.arguments });
    return;
  }
  if (item.type !== "reasoning") return;
  const pending = state.reasoning.get(index) ?? {
    at: { text: state.textLength, calls: state.calls.size },
    summary: "",
  };
  if (pending.summary !== "")
    state.parts.push({ type: "thinking", text: pending.summary, at: pending.at });
  if (typeof item.encrypted_content === "string" && item.encrypted_content !== "") {
    const data = responsesReasoningData(model, {
      id: item.id,
      encrypted_content: item.encrypted_content,
    });
    state.parts.push({ type: "redacted_thinking", data, at: pending.at });
  }
}

function* finish(
  state: RoundState,
  ids: RoundIds,
  usage: Usage | undefined,
): Generator<ModelEvent> {
  const calls = [...state.calls.values()].map((call) =>
    callFromArguments(call.id, call.name, call.args),
  );
  for (const part of state.parts) yield { type: "reasoning", part };
  yield* admitCallEvents(calls, ids);
  yield usage ? { type: "done", usage } : { type: "done" };
}

/**
 * The API counts cached tokens inside `input_tokens`; ours are apart, as Anthropic's are, and
 * told, like reasoning tokens (inside `output_tokens`), only when there were some.
 */
function usageOf(usage: ResponseUsage | undefined): Usage | undefined {
  if (!usage) return undefined;
  const cached = usage.input_tokens_details?.cached_tokens ?? 0;
  const reasoning = usage.output_tokens_details?.reasoning_tokens ?? 0;
  return {
    inputTokens: usage.input_tokens - cached,
    outputTokens: usage.output_tokens,
    ...(cached > 0 && { cacheReadTokens: cached }),
    ...(reasoning > 0 && { reasoningTokens: reasoning }),
  };
}
