import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { connectMcpServers, type McpServers } from "../src/mcp/index.js";

/**
 * Streamable HTTP's bounds, against a hostile loopback server: one message is at most 32 MB as
 * over stdio (an SSE event that never ends), and a call that timed out stops reading its response
 * (an event stream that goes on after the call gave up).
 */

interface Hostile {
  url: string;
  /** Each call's response: how many bytes were written to it, and once it is closed. */
  calls: { written: number; closed: Promise<unknown> }[];
  close(): void;
}

/** `endless`: one SSE event that never ends; `trickle`: small notifications, one after another, as fast as the client reads. */
async function hostileServer(): Promise<Hostile> {
  const calls: Hostile["calls"] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      if (request.method !== "POST") return response.writeHead(405).end();
      const message = JSON.parse(body) as {
        id?: number;
        method: string;
        params?: { protocolVersion?: string; name?: string };
      };
      if (message.id === undefined) return response.writeHead(202).end();
      if (message.method === "tools/call") return feed(response, message.params?.name ?? "");
      const schema = { type: "object" };
      const results: Record<string, unknown> = {
        initialize: {
          protocolVersion: message.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "hostile", version: "1.0.0" },
        },
        "tools/list": {
          tools: [
            { name: "endless", inputSchema: schema },
            { name: "trickle", inputSchema: schema },
          ],
        },
      };
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({ jsonrpc: "2.0", id: message.id, result: results[message.method] ?? {} }),
      );
    });
  });
  const feed = (response: ServerResponse, tool: string) => {
    const call = { written: 0, closed: once(response, "close") };
    calls.push(call);
    response.writeHead(200, { "content-type": "text/event-stream" });
    const piece =
      tool === "endless"
        ? "x".repeat(1024 * 1024)
        : `data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "y".repeat(1000) } })}\n\n`;
    if (tool === "endless") response.write("data: ");
    // Endless, as fast as the client reads: each piece once the last one has drained.
    const pump = () => {
      while (!response.destroyed) {
        call.written += piece.length;
        if (!response.write(piece)) return response.once("drain", pump);
      }
    };
    pump();
  };
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const open: { mcp: McpServers; server: Hostile }[] = [];
afterEach(async () => {
  for (const { mcp, server } of open.splice(0)) {
    await mcp.close();
    server.close();
  }
});

async function connect(timeout?: number) {
  const server = await hostileServer();
  const entry = { type: "http", url: server.url, ...(timeout !== undefined && { timeout }) };
  const mcp = await connectMcpServers({ mcpServers: { h: entry } }, { callTimeoutMs: 20_000 });
  open.push({ mcp, server });
  const call = (name: string) =>
    mcp
      .tools()
      .find((tool) => tool.mcp.tool === name)
      ?.execute({});
  return { mcp, server, call };
}

describe("Streamable HTTP's bounds", () => {
  it("ends a response whose message grows past 32 MB, says so, and reads no more of it", async () => {
    const { server, call } = await connect();
    const result = await call("endless");
    expect(result).toEqual({
      content:
        "mcp__h__endless failed: the server closed the connection (it sent a message larger than 32 MB and was disconnected)",
      isError: true,
    });
    await server.calls[0]?.closed;
    expect(server.calls[0]?.written).toBeLessThan(64 * 1024 * 1024);
  }, 30_000);

  it("stops reading the response of a call that timed out", async () => {
    const { server, call } = await connect(500);
    expect(await call("trickle")).toEqual({
      content: "mcp__h__trickle failed: timed out without progress",
      isError: true,
    });
    // The server sees its response closed: the client no longer reads it.
    await server.calls[0]?.closed;
  }, 30_000);
});
