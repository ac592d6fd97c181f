import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The part the local provider servers share: a loopback HTTP server answering one scripted reply
 * per request, streaming Server-Sent Events frame by frame with injectable faults, recording
 * every request and every 400 it gave.
 */

export interface SseFrame {
  /** The `event:` line; absent for protocols that send data lines only. */
  event?: string;
  /** JSON-encoded unless already a string (`[DONE]`). */
  data: unknown;
}

export interface StreamFaults {
  /** Send `errorFrame` after this many frames and end the response. */
  errorAfter?: number;
  errorFrame?: SseFrame;
  /** Destroy the connection after this many frames (once they reached the client). */
  dropAfter?: number;
  /** Stop sending, keeping the connection open, after this many frames. */
  stallAfter?: number;
  /** Wait this long before each frame. */
  frameDelayMs?: number;
}

export type Reply =
  | { kind: "stream"; frames: SseFrame[]; faults?: StreamFaults }
  | { kind: "status"; status: number; body: unknown; headers?: Record<string, string> };

export type Body = Record<string, unknown>;
/** A reply, or the frames of one turn (a well-formed stream), or a function of the request. */
export type ReplyScript = Reply | SseFrame[] | ((body: Body) => Reply | SseFrame[]);

/**
 * The reply `entry` gives for `body`: frames become a stream. Anything else a plain JavaScript
 * script could hold is a 500 naming what was given, never a crash of the server.
 */
export function replyFor(entry: ReplyScript, body: Body, index: number): Reply {
  const reply = typeof entry === "function" ? entry(body) : entry;
  if (Array.isArray(reply)) return stream(reply);
  if (reply?.kind === "stream" && Array.isArray(reply.frames)) return reply;
  if (reply?.kind === "status") return reply;
  return {
    kind: "status",
    status: 500,
    body: {
      error: `test server: scripted reply ${index} is not a reply (give a turn's frames or stream(...))`,
    },
  };
}

export interface RecordedRequest {
  headers: IncomingMessage["headers"];
  body: Body;
}

export interface ScriptedServer {
  url: string;
  requests: RecordedRequest[];
  /** The messages of the 400 answers given for invalid requests. */
  rejections: string[];
  close(): Promise<void>;
}

export interface Protocol {
  path: string;
  authorized(req: IncomingMessage): boolean;
  /** The status and body for an error, in the protocol's own shape. */
  error(status: number, message: string): Reply & { kind: "status" };
  /** The real API's message for an invalid request, or undefined. */
  validate(body: Body): string | undefined;
  /** The real API's message for a body that escapes half of a surrogate pair alone. */
  loneSurrogate(where: LoneSurrogate): string;
  /** The most bytes a request body may have, and the 413 message over it. */
  maxBody?: { bytes: number; message: string };
}

/** Where a JSON text first escapes half of a surrogate pair alone, as a JSON parser counts. */
export interface LoneSurrogate {
  half: "high" | "low";
  line: number;
  /** 1-based, at the backslash of the escape. */
  column: number;
  /** 0-based offset of the backslash in the text. */
  char: number;
}

/**
 * The first `\uD800`–`\uDFFF` escape in `raw` that is not one half of a pair. JavaScript's
 * `JSON.parse` takes it, the providers' parsers refuse the whole request; `JSON.stringify` (and
 * so every SDK) writes a lone surrogate as exactly such an escape.
 */
export function findLoneSurrogate(raw: string): LoneSurrogate | undefined {
  const unitAt = (at: number) =>
    raw[at] === "\\" && raw[at + 1] === "u" ? Number.parseInt(raw.slice(at + 2, at + 6), 16) : NaN;
  const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
  const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;
  let at = raw.indexOf("\\");
  while (at !== -1) {
    const unit = unitAt(at);
    let half: LoneSurrogate["half"] | undefined;
    if (isHigh(unit)) {
      if (isLow(unitAt(at + 6))) at += 6;
      else half = "high";
    } else if (isLow(unit)) half = "low";
    if (half) {
      const lineStart = raw.lastIndexOf("\n", at) + 1;
      const line = raw.slice(0, lineStart).split("\n").length;
      return { half, line, column: at - lineStart + 1, char: at };
    }
    // Past this escape: `\\` and `\"` are two characters, `\uXXXX` six.
    at = raw.indexOf("\\", at + (raw[at + 1] === "u" ? 6 : 2));
  }
  return undefined;
}

export const stream = (frames: SseFrame[], faults?: StreamFaults): Reply => ({
  kind: "stream",
  frames,
  ...(faults && { faults }),
});

export async function startScriptedServer(
  protocol: Protocol,
  script: ReplyScript[],
  port = 0,
  everyRequest?: ReplyScript,
): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const rejections: string[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer(async (req, res) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    const raw = await readBody(req);
    if (req.method !== "POST" || req.url !== protocol.path) {
      return send(res, protocol.error(404, `Not found: ${req.method} ${req.url}`));
    }
    if (!protocol.authorized(req)) return send(res, protocol.error(401, "missing API key"));
    if (protocol.maxBody !== undefined && Buffer.byteLength(raw) > protocol.maxBody.bytes) {
      rejections.push(protocol.maxBody.message);
      return send(res, protocol.error(413, protocol.maxBody.message));
    }
    const lone = findLoneSurrogate(raw);
    if (lone) {
      const message = protocol.loneSurrogate(lone);
      rejections.push(message);
      return send(res, protocol.error(400, message));
    }
    let body: Body;
    try {
      body = JSON.parse(raw) as Body;
    } catch {
      return send(res, protocol.error(400, "There was an error parsing the body."));
    }
    requests.push({ headers: req.headers, body });
    const invalid = protocol.validate(body);
    if (invalid) {
      rejections.push(invalid);
      return send(res, protocol.error(400, invalid));
    }
    const entry = everyRequest ?? script[requests.length - 1];
    if (!entry)
      return send(res, protocol.error(500, `test server: no scripted reply ${requests.length}`));
    const reply = replyFor(entry, body, requests.length);
    if (reply.kind === "status") return send(res, reply);
    await sendStream(res, reply.frames, reply.faults ?? {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
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

function send(res: ServerResponse, reply: Reply & { kind: "status" }): void {
  res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
  res.end(JSON.stringify(reply.body));
}

const encode = (frame: SseFrame) =>
  `${frame.event ? `event: ${frame.event}\n` : ""}data: ${typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data)}\n\n`;

async function sendStream(
  res: ServerResponse,
  frames: SseFrame[],
  faults: StreamFaults,
): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [i, frame] of frames.entries()) {
    if (i === faults.errorAfter && faults.errorFrame) {
      res.end(encode(faults.errorFrame));
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
    res.write(encode(frame));
  }
  res.end();
}

/** Posts `text` as it is (no SDK in between) and returns the status and the answer's text. */
export async function postRaw(
  url: string,
  text: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: text,
  });
  return { status: response.status, text: await response.text() };
}
