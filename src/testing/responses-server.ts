import { createHash } from "node:crypto";
import type { ScriptedCall } from "./anthropic-server.js";
import { openaiMaxBody, responsesImageProblem } from "./image-rules.js";
import { effortUnsupported, notJson } from "./openai-server.js";
import {
  type Body,
  type Reply,
  type ReplyScript,
  type ScriptedServer,
  type SseFrame,
  type StreamFaults,
  stream as sseStream,
  startScriptedServer,
} from "./sse-server.js";

/**
 * A local OpenAI Responses API server (`POST /v1/responses`): typed SSE events as the API streams
 * them, and strict validation of what the real API refuses, each text marked confirmed (seen in
 * the API's answers, as quoted in public reports) or approximate (the rule is the API's, the
 * wording ours). Its encrypted reasoning is verifiable: it takes back only what it wrote for the
 * same model.
 */

export interface ResponseScript {
  /** A reasoning item first, its summary streamed in these pieces (none: an empty summary). */
  reasoning?: string[];
  text?: string[];
  calls?: ScriptedCall[];
  /** `incomplete` ends with `response.incomplete` for `incompleteReason`. */
  status?: "completed" | "incomplete";
  incompleteReason?: "max_output_tokens" | "content_filter";
  usage?: { input: number; cached?: number; output: number; reasoning?: number };
}

/** The encrypted content this server writes for reasoning item `id` of `model`. */
export function encryptedReasoning(model: string, id: string): string {
  const payload = Buffer.from(JSON.stringify({ model, id })).toString("base64");
  const mac = createHash("sha256").update(`local-responses:${payload}`).digest("base64");
  return `gAAAA${payload}.${mac}`;
}

/** The model an encrypted content was written for, when this server wrote it. */
function decrypted(content: string): { model: string; id: string } | undefined {
  const payload = content.replace(/^gAAAA/, "").split(".")[0] ?? "";
  try {
    const value = JSON.parse(Buffer.from(payload, "base64").toString()) as Record<string, unknown>;
    const { model, id } = value;
    if (typeof model !== "string" || typeof id !== "string") return undefined;
    return content === encryptedReasoning(model, id) ? { model, id } : undefined;
  } catch {
    return undefined;
  }
}

let nextItem = 1;
const itemId = (prefix: string) => `${prefix}_local${String(nextItem++).padStart(4, "0")}`;

/** The events of one streamed response for `model`, `response.completed` (or incomplete) last. */
export function response(script: ResponseScript, model = "local-model"): SseFrame[] {
  const events: Record<string, unknown>[] = [];
  const output: Record<string, unknown>[] = [];
  const responseId = itemId("resp");
  const shell = (status: string) => ({
    id: responseId,
    object: "response",
    created_at: 1_700_000_000,
    model,
    status,
    output,
  });
  events.push({ type: "response.created", response: shell("in_progress") });
  events.push({ type: "response.in_progress", response: shell("in_progress") });
  const item = (
    added: Record<string, unknown>,
    done: Record<string, unknown>,
    body: () => void,
  ) => {
    const output_index = output.length;
    events.push({ type: "response.output_item.added", output_index, item: added });
    body();
    events.push({ type: "response.output_item.done", output_index, item: done });
    output.push(done);
  };
  if (script.reasoning) {
    const id = itemId("rs");
    const text = script.reasoning.join("");
    const summary = text === "" ? [] : [{ type: "summary_text", text }];
    const output_index = output.length;
    item(
      { id, type: "reasoning", summary: [] },
      { id, type: "reasoning", summary, encrypted_content: encryptedReasoning(model, id) },
      () => {
        if (text === "") return;
        const at = { item_id: id, output_index, summary_index: 0 };
        events.push({
          type: "response.reasoning_summary_part.added",
          ...at,
          part: { type: "summary_text", text: "" },
        });
        for (const delta of script.reasoning ?? [])
          events.push({ type: "response.reasoning_summary_text.delta", ...at, delta });
        events.push({ type: "response.reasoning_summary_text.done", ...at, text });
        events.push({ type: "response.reasoning_summary_part.done", ...at, part: summary[0] });
      },
    );
  }
  if (script.text && script.text.length > 0) {
    const id = itemId("msg");
    const text = script.text.join("");
    const output_index = output.length;
    const part = { type: "output_text", text, annotations: [] };
    const message = { id, type: "message", role: "assistant" };
    item(
      { ...message, status: "in_progress", content: [] },
      { ...message, status: "completed", content: [part] },
      () => {
        const at = { item_id: id, output_index, content_index: 0 };
        events.push({ type: "response.content_part.added", ...at, part: { ...part, text: "" } });
        for (const delta of script.text ?? [])
          events.push({ type: "response.output_text.delta", ...at, delta, logprobs: [] });
        events.push({ type: "response.output_text.done", ...at, text, logprobs: [] });
        events.push({ type: "response.content_part.done", ...at, part });
      },
    );
  }
  for (const call of script.calls ?? []) {
    const id = itemId("fc");
    const json = JSON.stringify(call.input);
    const output_index = output.length;
    const base = { id, type: "function_call", call_id: call.id, name: call.name };
    item(
      { ...base, arguments: "", status: "in_progress" },
      { ...base, arguments: json, status: "completed" },
      () => {
        const size = Math.ceil(json.length / (call.pieces ?? 3)) || 1;
        for (let at = 0; at < json.length; at += size) {
          const delta = json.slice(at, at + size);
          events.push({
            type: "response.function_call_arguments.delta",
            item_id: id,
            output_index,
            delta,
          });
        }
        events.push({
          type: "response.function_call_arguments.done",
          item_id: id,
          output_index,
          arguments: json,
        });
      },
    );
  }
  const usage = script.usage ?? { input: 10, output: 5 };
  const final = {
    ...shell(script.status ?? "completed"),
    incomplete_details:
      script.status === "incomplete"
        ? { reason: script.incompleteReason ?? "max_output_tokens" }
        : null,
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: usage.cached ?? 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
      total_tokens: usage.input + usage.output,
    },
  };
  events.push({ type: `response.${script.status ?? "completed"}`, response: final });
  return events.map((data, sequence_number) => ({
    event: String(data.type),
    data: { ...data, sequence_number },
  }));
}

/**
 * A streamed reply; `errorAfter` sends the API's `error` event (`failed: true`: a
 * `response.failed` event instead).
 */
export const stream = (frames: SseFrame[], faults?: StreamFaults & { failed?: boolean }): Reply => {
  if (faults?.errorAfter === undefined) return sseStream(frames, faults);
  const message = "The server had an error processing your request. Sorry about that!";
  const errorFrame: SseFrame = faults.failed
    ? {
        event: "response.failed",
        data: {
          type: "response.failed",
          response: {
            id: "resp_failed",
            status: "failed",
            error: { code: "server_error", message },
          },
        },
      }
    : { event: "error", data: { type: "error", code: "server_error", message, param: null } };
  return sseStream(frames, { ...faults, errorFrame });
};

export const status = (code: number, message = "error", param: string | null = null): Reply => ({
  kind: "status",
  status: code,
  body: {
    error: {
      message,
      type: code === 400 ? "invalid_request_error" : "server_error",
      param,
      code: message.startsWith("Unknown parameter")
        ? "unknown_parameter"
        : message.startsWith("Unsupported value")
          ? "unsupported_value"
          : null,
    },
  },
});

export type ResponsesServer = ScriptedServer;

export interface ResponsesServerOptions {
  /**
   * Refuse as a model without reasoning does (gpt-4o, gpt-4.1, gpt-5-chat-latest): a request
   * that asks for encrypted reasoning gets `encryptedUnsupported`.
   */
  noReasoning?: boolean;
  /** Refuse every request that holds an image, as a model without vision would (400). */
  refuseImages?: boolean;
  /**
   * Refuse as OpenAI's gpt-6 family does: `reasoning.effort` `none` and `minimal`
   * (`effortUnsupported`); it takes `low` to `xhigh` and `max`.
   */
  alwaysReasons?: boolean;
}

/** A model without reasoning refuses `include: ["reasoning.encrypted_content"]` (param `include`); confirmed. */
export const encryptedUnsupported = "Encrypted content is not supported with this model.";

/** Starts the server on 127.0.0.1 with a script of replies, one per request, in order. */
export function startResponsesServer(
  script: ReplyScript[],
  options: ResponsesServerOptions = {},
): Promise<ResponsesServer> {
  return startScriptedServer(
    {
      path: "/v1/responses",
      authorized: () => true,
      error: (code, message) =>
        status(
          code,
          message,
          message === encryptedUnsupported
            ? "include"
            : message.startsWith("Unsupported value: 'reasoning.effort'")
              ? "reasoning.effort"
              : null,
        ) as Reply & {
          kind: "status";
        },
      validate: (body) => {
        const asked =
          Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content");
        if (options.noReasoning && asked) return encryptedUnsupported;
        const effort = (body.reasoning as { effort?: unknown } | undefined)?.effort;
        const levels = ["low", "medium", "high", "xhigh", "max"];
        if (options.alwaysReasons && typeof effort === "string" && !levels.includes(effort))
          return effortUnsupported("reasoning.effort", effort, levels);
        return validate(body) ?? responsesImageProblem(body, options.refuseImages === true);
      },
      // Approximate: the Responses API's parser refuses the body as Chat Completions' does.
      loneSurrogate: () => notJson,
      maxBody: openaiMaxBody,
    },
    script,
  );
}

const parameters = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "stream",
  "store",
  "include",
  "prompt_cache_key",
  "reasoning",
  "max_output_tokens",
  "temperature",
  "top_p",
  "text",
  "metadata",
  "previous_response_id",
  "truncation",
  "user",
  "service_tier",
  "stream_options",
  "background",
  "safety_identifier",
  "prompt_cache_retention",
  "max_tool_calls",
]);
const itemFields: Record<string, string[]> = {
  message: ["type", "role", "content", "id", "status"],
  function_call: ["type", "call_id", "name", "arguments", "id", "status"],
  function_call_output: ["type", "call_id", "output", "id", "status"],
  reasoning: ["type", "id", "summary", "encrypted_content", "content", "status"],
};

/** The checks the Responses API makes that an adapter could get wrong. */
export function validate(body: Body): string | undefined {
  // Confirmed: the API's texts for an unknown and a missing parameter.
  for (const key of Object.keys(body))
    if (!parameters.has(key)) return `Unknown parameter: '${key}'.`;
  if (typeof body.model !== "string") return "Missing required parameter: 'model'.";
  if (!Array.isArray(body.input))
    return "Invalid type for 'input': expected an array of input items.";
  const items = body.input as Record<string, unknown>[];
  return (
    itemsProblem(items, body) ??
    callsProblem(items) ??
    toolsProblem(body.tools) ??
    responsesImageProblem(body, false)
  );
}

function itemsProblem(items: Record<string, unknown>[], body: Body): string | undefined {
  const ids = new Set<string>();
  for (const [i, item] of items.entries()) {
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    const fields = itemFields[String(type)];
    // Approximate: the API names every input type it takes.
    if (!fields)
      return `Invalid value: '${String(type)}'. Supported values are: 'message', 'function_call', 'function_call_output', 'reasoning', and others.`;
    for (const key of Object.keys(item))
      if (!fields.includes(key)) return `Unknown parameter: 'input[${i}].${key}'.`;
    if (typeof item.id === "string") {
      // Confirmed.
      if (ids.has(item.id))
        return `Duplicate item found with id ${item.id}. Remove duplicate items from your input and try again.`;
      ids.add(item.id);
    }
    if (type === "function_call" && typeof item.arguments !== "string") {
      return `Invalid type for 'input[${i}].arguments': expected a string, but got ${typeof item.arguments} instead.`;
    }
    if (type === "reasoning") {
      const problem = reasoningProblem(item, items[i + 1], body);
      if (problem) return problem;
    }
  }
  return undefined;
}

function reasoningProblem(
  item: Record<string, unknown>,
  next: Record<string, unknown> | undefined,
  body: Body,
): string | undefined {
  const id = String(item.id);
  if (typeof item.encrypted_content !== "string" && body.store === false) {
    // Confirmed.
    return `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`;
  }
  const content =
    typeof item.encrypted_content === "string" ? decrypted(item.encrypted_content) : undefined;
  // Approximate: the API refuses encrypted content it cannot decrypt for this model and item.
  if (!content || content.model !== body.model || content.id !== id)
    return `The encrypted content for item ${id} could not be verified.`;
  const followed =
    next !== undefined &&
    (next.type === "function_call" || (next.role === "assistant" && next.type !== "reasoning"));
  // Confirmed text (coder/mux#59); the rule (a call or the answer must follow) approximate.
  if (!followed)
    return `Item '${id}' of type 'reasoning' was provided without its required following item.`;
  return undefined;
}

/** Every output answers a call made before it, and every call has its output. */
function callsProblem(items: Record<string, unknown>[]): string | undefined {
  const open = new Set<string>();
  for (const item of items) {
    const id = String(item.call_id);
    if (item.type === "function_call") open.add(id);
    if (item.type !== "function_call_output") continue;
    // Confirmed.
    if (!open.has(id)) return `No tool call found for function call output with call_id ${id}.`;
    open.delete(id);
  }
  // Confirmed.
  for (const id of open) return `No tool output found for function call ${id}.`;
  return undefined;
}

function toolsProblem(tools: unknown): string | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return "Invalid type for 'tools': expected an array.";
  const fields = ["type", "name", "description", "parameters", "strict"];
  for (const [i, tool] of (tools as Record<string, unknown>[]).entries()) {
    for (const key of Object.keys(tool))
      if (!fields.includes(key)) return `Unknown parameter: 'tools[${i}].${key}'.`;
    if (tool.type !== "function" || typeof tool.name !== "string")
      return `Missing required parameter: 'tools[${i}].name'.`;
  }
  return undefined;
}
