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
export type ReplyScript = Reply | ((body: Body) => Reply);

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
}

export const stream = (frames: SseFrame[], faults?: StreamFaults): Reply => ({
  kind: "stream",
  frames,
  ...(faults && { faults }),
});

export async function startScriptedServer(
  protocol: Protocol,
  script: ReplyScript[],
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
    const entry = script[requests.length - 1];
    if (!entry)
      return send(res, protocol.error(500, `test server: no scripted reply ${requests.length}`));
    const reply = typeof entry === "function" ? entry(body) : entry;
    if (reply.kind === "status") return send(res, reply);
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
