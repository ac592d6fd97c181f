import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { admitCallEvents, callFromArguments, type RoundIds } from "../history/calls.js";
import type { Message, ModelEvent, Reasoning, ResultPart, ToolSpec, Usage } from "../types.js";
import { type ModelStop, ProviderError, streamErrorFrom } from "./provider-error.js";
import { isResponsesReasoning } from "./responses-reasoning.js";

/**
 * The OpenAI Chat Completions translation, both ways, with no I/O. It follows OpenAI and
 * tolerates what local servers (Ollama, vLLM, llama.cpp) do differently.
 */

/**
 * Our history as Chat Completions messages; `arguments` always goes back as a JSON string. With
 * `replayReasoning`, a history from a server that reasons (some round holds reasoning) sends each
 * round's reasoning back as `reasoning_content`, and an empty one on a round that called tools
 * without reasoning, as DeepSeek's thinking mode requires of a tool loop (it refuses the request
 * otherwise); a history without reasoning, and servers that refuse the field, get none.
 */
export function toOpenAIMessages(
  system: string,
  messages: readonly Message[],
  options: { replayReasoning?: boolean } = {},
): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] =
    system === "" ? [] : [{ role: "system", content: system }];
  const reasons =
    options.replayReasoning === true &&
    messages.some((message) => message.role === "assistant" && ownReasoning(message) !== undefined);
  // Tool messages take text only: their images follow them in one user message.
  let images: ChatCompletionContentPart[] = [];
  const flushImages = () => {
    if (images.length > 0) out.push({ role: "user", content: images });
    images = [];
  };
  for (const message of messages) {
    if (message.role !== "tool") flushImages();
    switch (message.role) {
      case "user":
        out.push({
          role: "user",
          content: message.parts ? chatParts(message.parts) : message.content,
        });
        break;
      case "assistant": {
        const reasoning = reasons ? reasoningText(ownReasoning(message)) : "";
        const replay = reasoning !== "" || (reasons && message.toolCalls.length > 0);
        out.push({
          role: "assistant",
          content: message.content === "" ? null : message.content,
          ...(replay && { reasoning_content: reasoning }),
          ...(message.toolCalls.length > 0 && {
            tool_calls: message.toolCalls.map((call) => ({
              id: call.id,
              type: "function" as const,
              function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) },
            })),
          }),
        });
        break;
      }
      case "tool":
        // Chat Completions has no error flag: the model reads it from the text.
        out.push({
          role: "tool",
          tool_call_id: message.toolCallId,
          content: message.isError ? `Error: ${message.content}` : message.content,
        });
        images.push(...imageParts(message));
        break;
    }
  }
  flushImages();
  return out;
}

/** Text and image parts as `text` and `image_url` parts (data URLs), in order. */
function chatParts(parts: readonly ResultPart[]): ChatCompletionContentPart[] {
  return parts.map((part) =>
    part.type === "text"
      ? { type: "text", text: part.text }
      : { type: "image_url", image_url: { url: `data:${part.mediaType};base64,${part.data}` } },
  );
}

/** A result's images as `image_url` parts (data URLs), after a line naming its call. */
function imageParts(message: Message & { role: "tool" }): ChatCompletionContentPart[] {
  const urls = (message.parts ?? []).flatMap((part) =>
    part.type === "image" ? [`data:${part.mediaType};base64,${part.data}`] : [],
  );
  if (urls.length === 0) return [];
  return [
    { type: "text", text: `The images of tool call ${message.toolCallId}'s result:` },
    ...urls.map((url) => ({ type: "image_url" as const, image_url: { url } })),
  ];
}

/**
 * A round's reasoning, unless the Responses API wrote it (its encrypted item is there): that
 * reasoning belongs to OpenAI's other protocol and is never replayed as `reasoning_content`.
 */
function ownReasoning(message: Message & { role: "assistant" }): Reasoning[] | undefined {
  const parts = message.reasoning;
  const fromResponses = parts?.some(
    (part) => part.type === "redacted_thinking" && isResponsesReasoning(part.data),
  );
  return fromResponses ? undefined : parts;
}

/** The readable reasoning of a round, its parts joined; redacted parts have none. */
function reasoningText(parts: readonly Reasoning[] = []): string {
  return parts.map((part) => (part.type === "thinking" ? part.text : "")).join("");
}

export function toOpenAITools(tools: ToolSpec[]): ChatCompletionTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  }));
}

const finishReasonErrors: Record<string, string> = {
  length:
    "the model reached its output token limit (finish_reason length) before finishing; raise the limit or ask for less",
  content_filter: "the provider's content filter stopped the answer (finish_reason content_filter)",
};

interface PendingCall {
  id?: string;
  name?: string;
  /** String pieces appended in order, or a whole object from servers that send one. */
  args: string;
  object?: unknown;
}

/** A chunk as local servers may send it: arguments as an object, errors in band, reasoning. */
type LooseChunk = Omit<ChatCompletionChunk, "object"> & {
  object?: string;
  message?: string;
  error?: unknown;
};

/**
 * The reasoning piece a delta carries: `reasoning_content` (DeepSeek, vLLM, llama.cpp) or
 * `reasoning` (OpenRouter, Ollama); OpenAI's own models stream none.
 */
function reasoningPiece(delta: object): string {
  const { reasoning_content: content, reasoning } = delta as Record<string, unknown>;
  if (typeof content === "string") return content;
  return typeof reasoning === "string" ? reasoning : "";
}

/**
 * The state machine over streamed chunks. Text streams out; tool-call fragments are assembled
 * by `index` (id and name set once, arguments appended) and released at the end, after the
 * stream proved complete, with ids and names the provider takes (`admitCalls`: a missing id is
 * generated, `ids.taken` are the ids the history already holds); arguments that are not a JSON
 * object (`"null"`, cut-off JSON) give the call `{}` and `invalidInput` (`callFromArguments`), so
 * the loop answers it and the round stays whole. A round with calls is a tool
 * round whatever `finish_reason` says. Reasoning streams out as `thinking` pieces and is kept
 * as one part, released with the calls. An in-band error throws a `ProviderError`.
 */
export async function* toModelEventsFromOpenAI(
  chunks: AsyncIterable<ChatCompletionChunk>,
  ids: RoundIds = {},
): AsyncGenerator<ModelEvent> {
  const calls: PendingCall[] = [];
  const slotByIndex = new Map<number, number>();
  let finishReason: string | undefined;
  let usage: Usage | undefined;
  let textLength = 0;
  let reasoning: Reasoning & { type: "thinking" } = {
    type: "thinking",
    text: "",
    at: { text: 0, calls: 0 },
  };

  for await (const raw of chunks as AsyncIterable<LooseChunk>) {
    if (raw.object === "error" || raw.error) throw streamErrorFrom("openai", raw);
    if (raw.usage) {
      usage = {
        inputTokens: raw.usage.prompt_tokens,
        outputTokens: raw.usage.completion_tokens,
        ...(raw.usage.prompt_tokens_details?.cached_tokens != null && {
          cacheReadTokens: raw.usage.prompt_tokens_details.cached_tokens,
        }),
        ...reasoningTokensOf(raw.usage.completion_tokens_details?.reasoning_tokens),
      };
    }
    const choice = raw.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta ?? {};
    const thought = reasoningPiece(delta);
    if (thought !== "") {
      if (reasoning.text === "")
        reasoning = { ...reasoning, at: { text: textLength, calls: calls.length } };
      reasoning.text += thought;
      yield { type: "thinking", text: thought };
    }
    if (typeof delta.content === "string" && delta.content !== "") {
      textLength += delta.content.length;
      yield { type: "text", text: delta.content };
    }
    for (const [position, fragment] of (delta.tool_calls ?? []).entries()) {
      const index = typeof fragment.index === "number" ? fragment.index : position;
      let slot = slotByIndex.get(index);
      const current = slot === undefined ? undefined : calls[slot];
      // Some servers number every parallel call 0: a new id, or a name arriving after a call
      // whose arguments are already complete, starts a new call at a used index.
      const newId = Boolean(fragment.id && current?.id && fragment.id !== current.id);
      const newName = Boolean(
        !fragment.id && fragment.function?.name && current && isComplete(current),
      );
      if (current === undefined || newId || newName) {
        slot = calls.push({ args: "" }) - 1;
        slotByIndex.set(index, slot);
      }
      const call = calls[slot ?? 0] as PendingCall;
      if (fragment.id && !call.id) call.id = fragment.id;
      if (fragment.function?.name && !call.name) call.name = fragment.function.name;
      const args: unknown = fragment.function?.arguments;
      if (typeof args === "string") call.args += args;
      else if (args !== undefined && args !== null) call.object = args;
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }

  if (finishReason === undefined) throw new Error("the model stream ended without a finish_reason");
  const failure = finishReasonErrors[finishReason];
  if (failure) {
    const stopped = (providerMessage: string, stop: ModelStop) =>
      new ProviderError({
        provider: "openai",
        kind: "stop",
        type: finishReason,
        providerMessage,
        stop,
      });
    if (finishReason !== "length") throw stopped(failure, "refusal");
    if (calls.length > 0)
      throw stopped(`${failure}; the cut-off tool call was not run`, "max_tokens");
    const thinking = reasoning.text !== "" && textLength === 0;
    throw stopped(thinking ? `${failure}; it was cut off while thinking` : failure, "max_tokens");
  }
  if (!["stop", "tool_calls", "function_call"].includes(finishReason)) {
    throw new Error(`unsupported finish_reason ${JSON.stringify(finishReason)}`);
  }
  const complete = calls.map((call) =>
    callFromArguments(call.id ?? "", call.name ?? "", call.args, call.object ?? {}),
  );
  if (reasoning.text !== "") yield { type: "reasoning", part: reasoning };
  yield* admitCallEvents(complete, ids);
  yield usage ? { type: "done", usage } : { type: "done" };
}

/** Reasoning tokens, told only when a model counted some. */
function reasoningTokensOf(tokens: number | undefined): { reasoningTokens?: number } {
  return tokens !== undefined && tokens > 0 ? { reasoningTokens: tokens } : {};
}

function isComplete(call: PendingCall): boolean {
  if (call.object !== undefined) return true;
  try {
    JSON.parse(call.args);
    return true;
  } catch {
    return false;
  }
}
