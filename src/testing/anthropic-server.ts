import { createHash } from "node:crypto";
import {
  modelThinkingProblem,
  omitsThinking,
  withThinkingOmitted,
} from "./anthropic-model-rules.js";
import { anthropicImageProblem } from "./image-rules.js";
import { bodyTokens } from "./image-tokens.js";
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
 * A local Messages API server for end-to-end tests: it speaks the streaming protocol frame by
 * frame (every frame with its `event:` line), validates each request the way the real API does
 * (answering 400 with the real error texts), records every request, and injects faults.
 */

export type { Reply, ReplyScript };
export type Frame = SseFrame & { event: string; data: Record<string, unknown> };
export type AnthropicServer = ScriptedServer;

export interface ScriptedCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** How the input JSON is split into `input_json_delta`s; default 3 pieces. */
  pieces?: number;
  /** A thinking block streamed just before this call (interleaved thinking). */
  thinking?: string[];
}

/** A thinking block as streamed pieces, or a redacted one holding `redacted` as its secret. */
export type ThinkingScript = string[] | { redacted: string };

export interface TurnScript {
  /** Thinking blocks streamed first, in order, each signed as the real API signs it. */
  thinking?: ThinkingScript[];
  /** The answer, whole or as the pieces it streams in. */
  text?: string | string[];
  calls?: ScriptedCall[];
  stopReason?: string;
}

/**
 * The signature this server gives a thinking block: it proves the server wrote that exact text,
 * as the real API's does, so a block sent back changed or with another block's signature is
 * refused.
 */
export const thinkingSignature = (thinking: string) =>
  `sig${createHash("sha256").update(`local-model:${thinking}`).digest("base64")}`;

/** The opaque `data` of a redacted thinking block this server wrote around `secret`. */
export const redactedData = (secret: string) => {
  const payload = Buffer.from(secret).toString("base64");
  return `${payload}.${thinkingSignature(payload)}`;
};

const isRedactedData = (data: unknown) =>
  typeof data === "string" &&
  data === redactedData(Buffer.from(data.split(".")[0] ?? "", "base64").toString());

/** The frames of one well-formed streamed turn. */
export function turn(script: TurnScript): Frame[] {
  const frames: Frame[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: "msg_local",
          type: "message",
          role: "assistant",
          model: "local-model",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 1 },
        },
      },
    },
    { event: "ping", data: { type: "ping" } },
  ];
  let index = 0;
  const think = (block: ThinkingScript) => {
    if (!Array.isArray(block)) {
      frames.push(
        blockStart(index, { type: "redacted_thinking", data: redactedData(block.redacted) }),
      );
    } else {
      frames.push(blockStart(index, { type: "thinking", thinking: "", signature: "" }));
      for (const piece of block)
        frames.push(delta(index, { type: "thinking_delta", thinking: piece }));
      const signature = thinkingSignature(block.join(""));
      frames.push(delta(index, { type: "signature_delta", signature }));
    }
    frames.push(blockStop(index));
    index++;
  };
  for (const block of script.thinking ?? []) think(block);
  const pieces = typeof script.text === "string" ? [script.text] : (script.text ?? []);
  if (pieces.length > 0) {
    frames.push(blockStart(index, { type: "text", text: "" }));
    for (const text of pieces) {
      frames.push(delta(index, { type: "text_delta", text }));
    }
    frames.push(blockStop(index));
    index++;
  }
  for (const call of script.calls ?? []) {
    if (call.thinking) think(call.thinking);
    frames.push(blockStart(index, { type: "tool_use", id: call.id, name: call.name, input: {} }));
    const json = JSON.stringify(call.input);
    const pieces = call.pieces ?? 3;
    const size = Math.ceil(json.length / pieces);
    for (let at = 0; at < json.length; at += size) {
      frames.push(
        delta(index, { type: "input_json_delta", partial_json: json.slice(at, at + size) }),
      );
    }
    frames.push(blockStop(index));
    index++;
  }
  const stopReason = script.stopReason ?? (script.calls?.length ? "tool_use" : "end_turn");
  frames.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 5 },
    },
  });
  frames.push({ event: "message_stop", data: { type: "message_stop" } });
  return frames;
}

export const blockStart = (index: number, block: Record<string, unknown>): Frame => ({
  event: "content_block_start",
  data: { type: "content_block_start", index, content_block: block },
});
export const delta = (index: number, value: Record<string, unknown>): Frame => ({
  event: "content_block_delta",
  data: { type: "content_block_delta", index, delta: value },
});
export const blockStop = (index: number): Frame => ({
  event: "content_block_stop",
  data: { type: "content_block_stop", index },
});

/** A streamed reply; `errorAfter` sends the Messages API's mid-stream `error` event. */
export const stream = (frames: Frame[], faults?: StreamFaults & { errorType?: string }): Reply => {
  if (faults?.errorAfter === undefined) return sseStream(frames, faults);
  const type = faults.errorType ?? "overloaded_error";
  const error = {
    type: "error",
    error: { type, message: type === "overloaded_error" ? "Overloaded" : "error" },
  };
  return sseStream(frames, { ...faults, errorFrame: { event: "error", data: error } });
};

const errorTypes: Record<number, [string, string]> = {
  400: ["invalid_request_error", ""],
  401: ["authentication_error", ""],
  404: ["not_found_error", ""],
  413: ["request_too_large", "Request exceeds the maximum size"],
  429: ["rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"],
  500: ["api_error", "Internal server error"],
  529: ["overloaded_error", "Overloaded"],
};

function errorReply(
  code: number,
  message: string,
  headers?: Record<string, string>,
): Reply & { kind: "status" } {
  const [type] = errorTypes[code] ?? ["api_error"];
  return {
    kind: "status",
    status: code,
    body: { type: "error", error: { type, message }, request_id: "req_local" },
    headers: { "request-id": "req_local", ...headers },
  };
}

/** An error answer as the real API gives it, with `retry-after` in seconds when asked. */
export const status = (code: number, retryAfter?: number, message?: string): Reply =>
  errorReply(
    code,
    message ?? errorTypes[code]?.[1] ?? "error",
    retryAfter === undefined ? undefined : { "retry-after": String(retryAfter) },
  );

export interface ServerOptions {
  /**
   * The model's context window in tokens, as this server counts them: one token per 4 bytes of
   * the request body as JSON, an image as the API counts it from its pixel size (`bodyTokens`). A request over it is refused as the real API does
   * (400 `invalid_request_error`, `prompt is too long: N tokens > M maximum`), and every streamed
   * reply reports the count as its `input_tokens`.
   */
  contextLimit?: number;
  /** The port to listen on, on 127.0.0.1; default any free one. */
  port?: number;
  /** Refuse every request that holds an image, as a model without vision would (400). */
  refuseImages?: boolean;
  /**
   * One script that answers every request, in place of the list (which is then ignored): a
   * function of the request, such as `taskModels`, which tells conversations apart by their body.
   */
  everyRequest?: ReplyScript;
}

export { bodyTokens };

/** The real API's refusal of a request longer than the window. */
export const promptTooLong = (tokens: number, maximum: number) =>
  `prompt is too long: ${tokens} tokens > ${maximum} maximum`;

/** Starts the server on 127.0.0.1 with a script of replies, one per request, in order. */
export function startAnthropicServer(
  script: ReplyScript[],
  options: ServerOptions = {},
): Promise<AnthropicServer> {
  const limit = options.contextLimit;
  return startScriptedServer(
    {
      path: "/v1/messages",
      authorized: (req) =>
        Boolean(req.headers["x-api-key"] || req.headers.authorization?.startsWith("Bearer ")),
      error: (code, message) =>
        errorReply(code, code === 401 ? "x-api-key header is required" : message),
      validate: (body) => {
        const invalid =
          validate(body) ?? anthropicImageProblem(body, options.refuseImages === true);
        if (invalid !== undefined || limit === undefined) return invalid;
        const tokens = bodyTokens(body);
        return tokens > limit ? promptTooLong(tokens, limit) : undefined;
      },
      // Confirmed text (earendil-works/pi#401); the size is the documented 32 MB.
      maxBody: { bytes: 32_000_000, message: "Request exceeds the maximum size" },
      loneSurrogate: ({ half, line, column, char }) =>
        `The request body is not valid JSON: ${half === "high" ? "no low" : "invalid high"} surrogate in string: line ${line} column ${column} (char ${char})`,
    },
    script.map((entry, index) => {
      const displayed = displaying(entry, index + 1);
      return limit === undefined ? displayed : reportingTokens(displayed);
    }),
    options.port,
    options.everyRequest && displaying(options.everyRequest, 0),
  );
}

/**
 * `entry` as the model displays its thinking for the request (`omitsThinking`): when omitted,
 * every thinking block streams no text, and its signature is the one of that empty text.
 */
function displaying(entry: ReplyScript, index: number): ReplyScript {
  return (body) => {
    const reply = replyFor(entry, body, index);
    if (reply.kind !== "stream" || !omitsThinking(body)) return reply;
    return { ...reply, frames: withThinkingOmitted(reply.frames, thinkingSignature("")) };
  };
}

/** `entry` with the request's token count as the `input_tokens` of its `message_start`. */
function reportingTokens(entry: ReplyScript): ReplyScript {
  return (body) => {
    const reply = replyFor(entry, body, 0);
    if (reply.kind !== "stream") return reply;
    const frames = reply.frames.map((frame) => {
      const data = frame.data as { type?: string; message?: { usage?: object } };
      if (data.type !== "message_start" || !data.message) return frame;
      const usage = { ...data.message.usage, input_tokens: bodyTokens(body) };
      return { ...frame, data: { ...data, message: { ...data.message, usage } } };
    });
    return { ...reply, frames };
  };
}

/** The checks the real API makes that our adapter could get wrong, with the real error texts. */
export function validate(body: Body): string | undefined {
  if (typeof body.model !== "string") return "model: Field required";
  if (typeof body.max_tokens !== "number") return "max_tokens: Field required";
  const thinking = thinkingProblem(body);
  if (thinking !== undefined) return thinking;
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return "messages: at least one message is required";
  }
  const messages = body.messages as { role?: unknown; content?: unknown }[];
  const callIds = new Set<string>();
  for (const [i, message] of messages.entries()) {
    if (message.role !== "user" && message.role !== "assistant") {
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    }
    const blocks =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : message.content;
    if (!Array.isArray(blocks)) return `messages.${i}.content: Input should be a valid list`;
    for (const [j, block] of (blocks as Record<string, unknown>[]).entries()) {
      if (block.type === "text" && (typeof block.text !== "string" || block.text.trim() === "")) {
        return "messages: text content blocks must be non-empty";
      }
      if (block.type === "tool_use") {
        if (typeof block.id !== "string" || !/^[a-zA-Z0-9_-]+$/.test(block.id)) {
          return `messages.${i}.content.${j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
        }
        if (callIds.has(block.id))
          return `messages.${i}.content.${j}: \`tool_use\` ids must be unique`;
        callIds.add(block.id);
        const input = block.input;
        if (typeof input !== "object" || input === null || Array.isArray(input)) {
          return `messages.${i}.content.${j}.tool_use.input: Input should be a valid dictionary`;
        }
      }
    }
  }
  if (messages[0]?.role !== "user") return 'messages: first message must use the "user" role';
  for (const [i, message] of messages.entries()) {
    const blocks = contentBlocks(message.content);
    const previous = i > 0 ? contentBlocks(messages[i - 1]?.content) : [];
    const calledBefore = previous.filter((b) => b.type === "tool_use").map((b) => String(b.id));
    for (const [j, block] of blocks.entries()) {
      if (block.type === "tool_result" && !calledBefore.includes(String(block.tool_use_id))) {
        return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
    const calls = blocks.filter((b) => b.type === "tool_use").map((b) => String(b.id));
    if (calls.length === 0) continue;
    const next = messages[i + 1];
    const nextBlocks = next ? contentBlocks(next.content) : [];
    const answered = nextBlocks
      .filter((b) => b.type === "tool_result")
      .map((b) => String(b.tool_use_id));
    const missing = calls.filter((id) => !answered.includes(id));
    if (next && missing.length > 0) return unansweredCalls(i, missing);
    if (next) {
      const leading = nextBlocks
        .slice(0, calls.length)
        .filter((b) => b.type === "tool_result").length;
      if (leading < calls.length) {
        return `messages.${i + 1}: Did not find ${calls.length} \`tool_result\` block(s) at the beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of \`tool_result\` blocks.`;
      }
    }
  }
  const last = messages.at(-1);
  if (
    last?.role === "assistant" &&
    contentBlocks(last.content).some((b) => b.type === "tool_use")
  ) {
    const i = messages.length - 1;
    const ids = contentBlocks(last.content)
      .filter((b) => b.type === "tool_use")
      .map((b) => String(b.id));
    return unansweredCalls(i, ids);
  }
  return anthropicImageProblem(body, false);
}

const docs = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

/**
 * The API's thinking rules, with its texts: the configuration (a budget of at least 1024 under
 * `max_tokens`, no temperature but 1); every thinking block signed by the model for its exact
 * text, an assistant message that holds one starting with one, and the latest assistant
 * message's blocks exactly as they were sent. A tool loop is one assistant turn with one thinking
 * configuration: with thinking on, the first assistant message of the loop a request ends in (its
 * last message holds tool results) starts with its thinking; with thinking disabled, none of the
 * loop's assistant messages holds thinking (the docs' rule for a turn without thinking: the text
 * of this refusal is this server's own, not one the API is known to give). `between_tools` asks
 * for no thinking up front, so a loop under it may start either way. What a model refuses of these
 * configurations by its name: `modelThinkingProblem`.
 */
function thinkingProblem(body: Body): string | undefined {
  const config = (body.thinking ?? {}) as { type?: unknown; budget_tokens?: unknown };
  const effort = (body.output_config as { effort?: unknown } | undefined)?.effort;
  const refused = modelThinkingProblem(String(body.model), config, effort);
  if (refused !== undefined) return refused;
  const on = config.type === "enabled" || config.type === "adaptive";
  if (config.type === "enabled") {
    const budget = Number(config.budget_tokens);
    if (!(budget >= 1024))
      return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    if (Number(body.max_tokens) <= budget)
      return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${docs}#max-tokens-and-context-window-size`;
  }
  if (on && body.temperature !== undefined && body.temperature !== 1)
    return `\`temperature\` may only be set to 1 when thinking is enabled. Please consult our documentation at ${docs}#important-considerations-when-using-extended-thinking`;
  const messages = (Array.isArray(body.messages) ? body.messages : []) as {
    role?: unknown;
    content?: unknown;
  }[];
  const latest = messages.map((m) => m.role).lastIndexOf("assistant");
  for (const [i, message] of messages.entries()) {
    if (message.role !== "assistant") continue;
    const blocks = contentBlocks(message.content);
    const thought = blocks.some(isThinking);
    if (thought && !isThinking(blocks[0] ?? {}))
      return `messages.${i}.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found ${String(blocks[0]?.type)}.`;
    for (const [j, block] of blocks.entries()) {
      const intact =
        block.type === "thinking"
          ? block.signature === thinkingSignature(String(block.thinking))
          : block.type !== "redacted_thinking" || isRedactedData(block.data);
      if (intact) continue;
      if (i === latest)
        return `messages.${i}.content.${j}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`;
      return block.type === "thinking"
        ? `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`
        : `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`;
    }
  }
  const start = loopStart(messages);
  if (start === undefined) return undefined;
  const first = contentBlocks(messages[start]?.content)[0];
  if (on && !isThinking(first ?? {}))
    return `messages.${start}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at ${docs}`;
  if (config.type !== "disabled") return undefined;
  for (const [i, message] of messages.entries()) {
    if (i < start || message.role !== "assistant") continue;
    const j = contentBlocks(message.content).findIndex(isThinking);
    if (j !== -1)
      return `messages.${i}.content.${j}: When \`thinking\` is disabled, a final \`assistant\` turn (the tool use loop the request ends in) must not contain \`thinking\` or \`redacted_thinking\` blocks. Please consult our documentation at ${docs}`;
  }
  return undefined;
}

/**
 * The first assistant message of the tool loop a request ends in (its last message holds tool
 * results): a loop is one assistant turn, back to the last user message without tool results.
 */
function loopStart(messages: { role?: unknown; content?: unknown }[]): number | undefined {
  let start: number | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === "assistant") start = i;
    else if (!contentBlocks(message?.content).some((b) => b.type === "tool_result")) break;
  }
  return start;
}

const isThinking = (block: Record<string, unknown>) =>
  block.type === "thinking" || block.type === "redacted_thinking";

const unansweredCalls = (index: number, ids: string[]) =>
  `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;

function contentBlocks(content: unknown): Record<string, unknown>[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content as Record<string, unknown>[]) : [];
}
