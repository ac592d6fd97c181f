import { bodyTokens, type ScriptedCall, type ServerOptions } from "./anthropic-server.js";
import { chatImageProblem, openaiMaxBody } from "./image-rules.js";
import {
  type Body,
  type Reply,
  type ReplyScript,
  replyFor,
  type ScriptedServer,
  type SseFrame,
  type StreamFaults,
  stream as sseStream,
  startScriptedServer,
} from "./sse-server.js";

/**
 * A local Chat Completions server: data-only SSE chunks ending in `[DONE]`, strict validation
 * with OpenAI's real error texts, and quirk modes that mimic what local servers send.
 */

export interface Quirks {
  /** Ollama: each call arrives whole in one chunk. */
  wholeArguments?: boolean;
  /** Arguments as a JSON object instead of a string. */
  argumentsAsObject?: boolean;
  /** No `id` on tool calls. */
  noIds?: boolean;
  /** Every parallel call at `index: 0`. */
  reuseIndexZero?: boolean;
  /** `finish_reason: "stop"` even when the turn has calls. */
  stopWithCalls?: boolean;
  /** The stream ends without `data: [DONE]`. */
  noDone?: boolean;
}

export interface CompletionScript {
  /** Reasoning pieces streamed before the text, in `reasoningField` (default `reasoning_content`). */
  reasoning?: string[];
  reasoningField?: "reasoning_content" | "reasoning";
  /** The answer, whole or as the pieces it streams in. */
  text?: string | string[];
  calls?: ScriptedCall[];
  finishReason?: string | null;
  quirks?: Quirks;
}

const base = {
  id: "chatcmpl-local",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "local-model",
};
const chunk = (
  choice: Record<string, unknown> | undefined,
  extra: Record<string, unknown> = {},
): SseFrame => ({
  data: {
    ...base,
    choices: choice ? [{ index: 0, finish_reason: null, ...choice }] : [],
    ...extra,
  },
});

/** The chunks of one streamed completion, with a final usage chunk and `[DONE]`. */
export function completion(script: CompletionScript): SseFrame[] {
  const quirks = script.quirks ?? {};
  const frames: SseFrame[] = [chunk({ delta: { role: "assistant", content: "" } })];
  const field = script.reasoningField ?? "reasoning_content";
  for (const piece of script.reasoning ?? []) frames.push(chunk({ delta: { [field]: piece } }));
  const pieces = typeof script.text === "string" ? [script.text] : (script.text ?? []);
  for (const text of pieces) frames.push(chunk({ delta: { content: text } }));
  for (const [i, call] of (script.calls ?? []).entries()) {
    const index = quirks.reuseIndexZero ? 0 : i;
    const id = quirks.noIds ? {} : { id: call.id };
    const json = JSON.stringify(call.input);
    if (quirks.wholeArguments || quirks.argumentsAsObject) {
      const args = quirks.argumentsAsObject ? call.input : json;
      frames.push(
        chunk({
          delta: {
            tool_calls: [
              { index, ...id, type: "function", function: { name: call.name, arguments: args } },
            ],
          },
        }),
      );
      continue;
    }
    frames.push(
      chunk({
        delta: {
          tool_calls: [
            { index, ...id, type: "function", function: { name: call.name, arguments: "" } },
          ],
        },
      }),
    );
    const pieces = call.pieces ?? 3;
    const size = Math.ceil(json.length / pieces) || 1;
    for (let at = 0; at < json.length; at += size) {
      frames.push(
        chunk({
          delta: { tool_calls: [{ index, function: { arguments: json.slice(at, at + size) } }] },
        }),
      );
    }
  }
  const calls = script.calls?.length ?? 0;
  const finish =
    script.finishReason !== undefined
      ? script.finishReason
      : calls > 0 && !quirks.stopWithCalls
        ? "tool_calls"
        : "stop";
  if (finish !== null) frames.push(chunk({ delta: {}, finish_reason: finish }));
  frames.push(
    chunk(undefined, { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }),
  );
  if (!quirks.noDone) frames.push({ data: "[DONE]" });
  return frames;
}

/** A streamed reply; `errorAfter` sends an in-band error chunk, OpenAI's or vLLM's shape. */
export const stream = (
  frames: SseFrame[],
  faults?: StreamFaults & { errorShape?: "openai" | "vllm" },
): Reply => {
  if (faults?.errorAfter === undefined) return sseStream(frames, faults);
  const data =
    faults.errorShape === "vllm"
      ? {
          object: "error",
          message: "The model is overloaded",
          type: "ServiceUnavailableError",
          code: 503,
        }
      : {
          error: {
            message: "The server had an error while processing your request",
            type: "server_error",
          },
        };
  return sseStream(frames, { ...faults, errorFrame: { data } });
};

export const status = (code: number, message = "error"): Reply => {
  const tooLong = message.startsWith("This model's maximum context length is");
  const unsupported = message === maxTokensRefused;
  const badEffort = message.startsWith("Unsupported value: 'reasoning_effort'");
  const param = tooLong
    ? "messages"
    : unsupported
      ? "max_tokens"
      : message.startsWith("Function tools with reasoning_effort") || badEffort
        ? "reasoning_effort"
        : null;
  return {
    kind: "status",
    status: code,
    body: {
      error: {
        message,
        type: code === 400 ? "invalid_request_error" : "server_error",
        param,
        code: tooLong
          ? "context_length_exceeded"
          : unsupported
            ? "unsupported_parameter"
            : badEffort
              ? "unsupported_value"
              : null,
      },
    },
  };
};

/** OpenAI's refusal of a request longer than the window (code `context_length_exceeded`). */
export const contextTooLong = (tokens: number, maximum: number) =>
  `This model's maximum context length is ${maximum} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`;

export type OpenAIServer = ScriptedServer;

export interface OpenAIServerOptions extends ServerOptions {
  /**
   * What the server does with `reasoning_content` in the assistant messages it is sent:
   * `required`, as DeepSeek's thinking mode does (every assistant message that called tools must
   * carry it back, or the request is refused with DeepSeek's text); `refused`, as a server that
   * allows no field beyond the standard ones does.
   */
  reasoningBack?: "required" | "refused";
  /**
   * Refuse as OpenAI's current reasoning models (gpt-5.x) do on this endpoint: function tools
   * with a `reasoning_effort` other than `none` (`effortWithTools`; gpt-5.6 refuses a request that
   * sends none too, its default effort not being `none`), and `max_tokens` (`maxTokensRefused`).
   */
  reasoningModel?: boolean;
  /**
   * Refuse as OpenAI's gpt-6 family does on this endpoint: what `reasoningModel` refuses, but
   * function tools at every `reasoning_effort` (`effortWithTools`), and the efforts it does not
   * take, `none`, `minimal` and `max` (`effortUnsupported`), before that.
   */
  toolsRefused?: boolean;
}

/**
 * gpt-5.x's refusal of function tools with reasoning on Chat Completions (param
 * `reasoning_effort`, code null). Confirmed: the text of gpt-5.6 models in public reports
 * (GEMISIS/leviath#333, BerriAI/litellm#34569); gpt-5.4 and 5.5 ended it "Please use
 * /v1/responses instead." (pipecat-ai/pipecat#4043, charmbracelet/crush#2913).
 */
export const effortWithTools = (model: string) =>
  `Function tools with reasoning_effort are not supported for ${model} in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.`;

/** OpenAI's refusal of `max_tokens` by its reasoning models (code `unsupported_parameter`); confirmed. */
export const maxTokensRefused =
  "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";

/**
 * A reasoning model's refusal of an effort it does not take (code `unsupported_value`); confirmed
 * in shape (Kilo-Org/cloud#3807), the gpt-6 lists in public reports (genkit-ai/genkit#6303, on
 * Chat Completions; UKGovernmentBEIS/inspect_ai#5254, with `max`, on the Responses API).
 */
export const effortUnsupported = (param: string, value: string, supported: string[]) =>
  `Unsupported value: '${param}' does not support '${value}' with this model. Supported values are: ${supported
    .slice(0, -1)
    .map((level) => `'${level}'`)
    .join(", ")}, and '${supported.at(-1)}'.`;

function reasoningModelProblem(body: Body, toolsRefused: boolean): string | undefined {
  if ("max_tokens" in body) return maxTokensRefused;
  const effort = body.reasoning_effort;
  const levels = ["low", "medium", "high", "xhigh"];
  if (toolsRefused && typeof effort === "string" && !levels.includes(effort))
    return effortUnsupported("reasoning_effort", effort, levels);
  const tools = Array.isArray(body.tools) && body.tools.length > 0;
  if (tools && (toolsRefused || effort !== "none")) return effortWithTools(String(body.model));
  return undefined;
}

/** DeepSeek's refusal of a tool loop whose reasoning was not sent back. */
export const reasoningMissing =
  "The `reasoning_content` in the thinking mode must be passed back to the API.";
/** A strict server's refusal of the field. */
export const reasoningUnexpected = (index: number) =>
  `Additional properties are not allowed ('reasoning_content' was unexpected) - 'messages.${index}'`;

function reasoningProblem(
  body: Body,
  mode: OpenAIServerOptions["reasoningBack"],
): string | undefined {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Record<string, unknown>[];
  for (const [i, message] of messages.entries()) {
    if (message.role !== "assistant") continue;
    const has = typeof message.reasoning_content === "string";
    if (mode === "refused" && "reasoning_content" in message) return reasoningUnexpected(i);
    const called = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    if (mode === "required" && called && !has) return reasoningMissing;
  }
  return undefined;
}

/**
 * Starts the server; with `contextLimit`, requests are counted as `bodyTokens` counts them, one
 * over the limit is refused with OpenAI's `context_length_exceeded` error, and each completion's
 * usage chunk reports the count as `prompt_tokens`.
 */
export function startOpenAIServer(
  script: ReplyScript[],
  options: OpenAIServerOptions = {},
): Promise<OpenAIServer> {
  const limit = options.contextLimit;
  const reasoningBack = options.reasoningBack;
  return startScriptedServer(
    {
      path: "/v1/chat/completions",
      authorized: () => true,
      error: (code, message) => status(code, message) as Reply & { kind: "status" },
      validate: (body) => {
        const invalid =
          validate(body) ??
          chatImageProblem(body, options.refuseImages === true) ??
          reasoningProblem(body, reasoningBack) ??
          (options.reasoningModel || options.toolsRefused
            ? reasoningModelProblem(body, options.toolsRefused === true)
            : undefined);
        if (invalid !== undefined || limit === undefined) return invalid;
        const tokens = bodyTokens(body);
        return tokens > limit ? contextTooLong(tokens, limit) : undefined;
      },
      loneSurrogate: () => notJson,
      maxBody: openaiMaxBody,
    },
    limit === undefined ? script : script.map((entry, index) => reportingTokens(entry, index + 1)),
    options.port,
  );
}

/** `entry` with the request's token count as the `prompt_tokens` of its usage chunk. */
function reportingTokens(entry: ReplyScript, index: number): ReplyScript {
  return (body) => {
    const reply = replyFor(entry, body, index);
    if (reply.kind !== "stream") return reply;
    const frames = reply.frames.map((frame) => {
      const data = frame.data as { usage?: object };
      if (typeof data !== "object" || data === null || !data.usage) return frame;
      return {
        ...frame,
        data: { ...data, usage: { ...data.usage, prompt_tokens: bodyTokens(body) } },
      };
    });
    return { ...reply, frames };
  };
}

/** OpenAI's answer to a body its JSON parser refuses (a lone surrogate escape, for one). */
export const notJson =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)";

interface WireMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: { id?: unknown; function?: { arguments?: unknown } }[];
  tool_call_id?: unknown;
}

/** The checks OpenAI makes that an adapter could get wrong, with its real error texts. */
export function validate(body: Body): string | undefined {
  if (typeof body.model !== "string") return "you must provide a model parameter";
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.";
  }
  const messages = body.messages as WireMessage[];
  let open: string[] = [];
  for (const [i, message] of messages.entries()) {
    if (!["system", "user", "assistant", "tool"].includes(String(message.role))) {
      return `Invalid value: '${String(message.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`;
    }
    if (message.role === "tool") {
      const id = String(message.tool_call_id);
      if (!open.includes(id)) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
      open = open.filter((other) => other !== id);
      continue;
    }
    if (open.length > 0) return unanswered(open);
    for (const [j, call] of (message.tool_calls ?? []).entries()) {
      const id = String(call.id);
      if (id.length > 40) {
        return `Invalid 'messages[${i}].tool_calls[${j}].id': string too long. Expected a string with maximum length 40, but got a string with length ${id.length} instead.`;
      }
      const args = call.function?.arguments;
      if (typeof args !== "string") {
        return `Invalid type for 'messages[${i}].tool_calls[${j}].function.arguments': expected a string, but got ${Array.isArray(args) ? "an array" : `an ${typeof args}`} instead.`;
      }
    }
    open = (message.tool_calls ?? []).map((call) => String(call.id));
  }
  return open.length > 0 ? unanswered(open) : chatImageProblem(body, false);
}

const unanswered = (ids: string[]) =>
  `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${ids.join(", ")}`;
