import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local Messages API server for end-to-end tests: it speaks the streaming protocol frame by
 * frame, validates each request the way the real API does (answering 400 with the real error
 * texts), records every request, and injects faults on demand. Loopback only.
 */

export interface Frame {
  event: string;
  data: Record<string, unknown>;
}

export interface ScriptedCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** How the input JSON is split into `input_json_delta`s; default 3 pieces. */
  pieces?: number;
}

export interface TurnScript {
  text?: string[];
  calls?: ScriptedCall[];
  stopReason?: string;
}

/** What the server does for one request. */
export type Reply =
  | { kind: "stream"; frames: Frame[]; faults?: StreamFaults }
  | { kind: "status"; status: number; errorType: string; message: string; retryAfter?: number };

export interface StreamFaults {
  /** Send an `error` event after this many frames and end the response. */
  errorAfter?: number;
  errorType?: string;
  /** Destroy the connection after this many frames. */
  dropAfter?: number;
  /** Stop sending (keep the connection open) after this many frames. */
  stallAfter?: number;
  /** Wait this long between frames. */
  frameDelayMs?: number;
}

export interface RecordedRequest {
  headers: IncomingMessage["headers"];
  body: MessagesBody;
}

export interface MessagesBody {
  model?: unknown;
  max_tokens?: unknown;
  stream?: unknown;
  system?: unknown;
  tools?: unknown;
  messages?: unknown;
}

export type ReplyScript = Reply | ((body: MessagesBody) => Reply);

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
  if (script.text && script.text.length > 0) {
    frames.push(blockStart(index, { type: "text", text: "" }));
    for (const text of script.text) {
      frames.push(delta(index, { type: "text_delta", text }));
    }
    frames.push(blockStop(index));
    index++;
  }
  for (const call of script.calls ?? []) {
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

export const stream = (frames: Frame[], faults?: StreamFaults): Reply => ({
  kind: "stream",
  frames,
  ...(faults && { faults }),
});

export const status = (code: number, retryAfter?: number): Reply => {
  const known: Record<number, [string, string]> = {
    429: ["rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"],
    500: ["api_error", "Internal server error"],
    529: ["overloaded_error", "Overloaded"],
  };
  const [errorType, message] = known[code] ?? ["api_error", "error"];
  return {
    kind: "status",
    status: code,
    errorType,
    message,
    ...(retryAfter !== undefined && { retryAfter }),
  };
};

export interface AnthropicServer {
  url: string;
  requests: RecordedRequest[];
  /** 400 answers the server gave, with their messages. */
  rejections: string[];
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 with a script of replies, one per request, in order. */
export async function startAnthropicServer(script: ReplyScript[]): Promise<AnthropicServer> {
  const requests: RecordedRequest[] = [];
  const rejections: string[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer(async (req, res) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    const raw = await readBody(req);
    if (req.method !== "POST" || req.url !== "/v1/messages") {
      return sendError(res, 404, "not_found_error", `Not found: ${req.method} ${req.url}`);
    }
    if (!req.headers["x-api-key"] && !req.headers.authorization?.startsWith("Bearer ")) {
      return sendError(res, 401, "authentication_error", "x-api-key header is required");
    }
    let body: MessagesBody;
    try {
      body = JSON.parse(raw) as MessagesBody;
    } catch {
      return sendError(res, 400, "invalid_request_error", "There was an error parsing the body.");
    }
    requests.push({ headers: req.headers, body });
    const invalid = validate(body);
    if (invalid) {
      rejections.push(invalid);
      return sendError(res, 400, "invalid_request_error", invalid);
    }
    const entry = script[requests.length - 1];
    if (!entry) {
      return sendError(res, 500, "api_error", `test server: no scripted reply ${requests.length}`);
    }
    const reply = typeof entry === "function" ? entry(body) : entry;
    if (reply.kind === "status") {
      const headers =
        reply.retryAfter === undefined ? {} : { "retry-after": String(reply.retryAfter) };
      return sendError(res, reply.status, reply.errorType, reply.message, headers);
    }
    await sendStream(res, reply.frames, reply.faults ?? {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    rejections,
    close: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function sendError(
  res: ServerResponse,
  code: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(code, {
    "content-type": "application/json",
    "request-id": "req_local",
    ...headers,
  });
  res.end(JSON.stringify({ type: "error", error: { type, message }, request_id: "req_local" }));
}

async function sendStream(
  res: ServerResponse,
  frames: Frame[],
  faults: StreamFaults,
): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "request-id": "req_local",
  });
  for (const [i, frame] of frames.entries()) {
    if (i === faults.errorAfter) {
      const type = faults.errorType ?? "overloaded_error";
      const error = {
        type: "error",
        error: { type, message: type === "overloaded_error" ? "Overloaded" : "error" },
      };
      res.end(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
      return;
    }
    if (i === faults.dropAfter) {
      // Let the frames sent so far reach the client, then cut the connection mid-stream.
      await new Promise((resolve) => setTimeout(resolve, 50));
      res.socket?.destroy();
      return;
    }
    if (i === faults.stallAfter) return; // Leaves the response open; close() ends it.
    if (faults.frameDelayMs)
      await new Promise((resolve) => setTimeout(resolve, faults.frameDelayMs));
    if (res.destroyed) return;
    res.write(`event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`);
  }
  res.end();
}

/** The checks the real API makes that our adapter could get wrong, with the real error texts. */
export function validate(body: MessagesBody): string | undefined {
  if (typeof body.model !== "string") return "model: Field required";
  if (typeof body.max_tokens !== "number") return "max_tokens: Field required";
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return "messages: at least one message is required";
  }
  const messages = body.messages as { role?: unknown; content?: unknown }[];
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
  return undefined;
}

const unansweredCalls = (index: number, ids: string[]) =>
  `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;

function contentBlocks(content: unknown): Record<string, unknown>[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content as Record<string, unknown>[]) : [];
}
