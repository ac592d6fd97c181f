// biome-ignore-all lint/suspicious/noTemplateCurlyInString: configuration values with ${VAR} references
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpServers, type McpServers } from "../src/mcp/index.js";
import { freePort, startEverything } from "./support/mcp.js";
import { until } from "./support/until.js";

/** Streamable HTTP, on loopback: the reference server, and the headers a server receives. */

let server: ChildProcess;
let url = "";
let mcp: McpServers;
const progress: number[] = [];

beforeAll(async () => {
  const port = await freePort();
  server = await startEverything(port);
  url = `http://127.0.0.1:${port}/mcp`;
  mcp = await connectMcpServers(
    { mcpServers: { web: { type: "http", url: "${EVERYTHING_URL}" } } },
    {
      env: { EVERYTHING_URL: url },
      callTimeoutMs: 1500,
      onProgress: (event) => progress.push(event.progress),
    },
  );
}, 30_000);
afterAll(async () => {
  await mcp?.close();
  server?.kill("SIGKILL");
});

const tool = (name: string) => {
  const found = mcp.tools().find((candidate) => candidate.mcp.tool === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};

describe("the reference MCP server over Streamable HTTP", () => {
  it("is up with its tools, from a url expanded from the environment", () => {
    expect(mcp.status()).toEqual([
      { name: "web", state: "up", late: false, stderr: [], tools: 13, restarts: 0 },
    ]);
    expect(mcp.tools()[0]?.spec.name).toBe("mcp__web__echo");
  });

  it("calls echo and get-sum", async () => {
    expect(await tool("echo").execute({ message: "over http" })).toEqual({
      content: "Echo: over http",
      isError: false,
    });
    expect(await tool("get-sum").execute({ a: 40, b: 2 })).toEqual({
      content: "The sum of 40 and 2 is 42.",
      isError: false,
    });
  });

  it("extends the call timeout on progress, and aborts a call mid-way", async () => {
    progress.length = 0;
    expect(await tool("trigger-long-running-operation").execute({ duration: 2, steps: 4 })).toEqual(
      {
        content: "Long running operation completed. Duration: 2 seconds, Steps: 4.",
        isError: false,
      },
    );
    expect(progress.slice(0, 3)).toEqual([1, 2, 3]);
    progress.length = 0;
    const controller = new AbortController();
    const running = tool("trigger-long-running-operation").execute(
      { duration: 10, steps: 20 },
      controller.signal,
    );
    await until(() => progress.length > 0);
    controller.abort();
    expect(await running).toEqual({
      content:
        "mcp__web__trigger-long-running-operation aborted: the server was asked to cancel the call",
      isError: true,
    });
    expect(await tool("echo").execute({ message: "after" })).toEqual({
      content: "Echo: after",
      isError: false,
    });
  });
});

describe("an HTTP server that restarts", () => {
  it("fails the call it lost, and is connected again at the next call", async () => {
    const port = await freePort();
    let child = await startEverything(port);
    const mcp = await connectMcpServers({
      mcpServers: { web: { type: "http", url: `http://127.0.0.1:${port}/mcp` } },
    });
    try {
      const echo = () =>
        mcp
          .tools()
          .find((tool) => tool.mcp.tool === "echo")
          ?.execute({ message: "x" });
      expect(await echo()).toEqual({ content: "Echo: x", isError: false });
      child.kill("SIGKILL");
      await once(child, "exit");
      child = await startEverything(port);
      // The new server knows nothing of the old session.
      expect((await echo())?.isError).toBe(true);
      expect(await echo()).toEqual({ content: "Echo: x", isError: false });
      expect(mcp.status()[0]).toMatchObject({ state: "up", restarts: 1 });
    } finally {
      await mcp.close();
      child.kill("SIGKILL");
    }
  });
});

describe("an HTTP server entry", () => {
  it("sends its headers, expanded from the environment, with every request", async () => {
    const received: IncomingHttpHeaders[] = [];
    const fake = createServer((request, response) => {
      received.push(request.headers);
      response.writeHead(500).end();
    });
    fake.listen(0, "127.0.0.1");
    await once(fake, "listening");
    const { port } = fake.address() as AddressInfo;
    const failed = await connectMcpServers(
      {
        mcpServers: {
          api: {
            type: "http",
            url: `http://127.0.0.1:${port}/mcp`,
            headers: { Authorization: "Bearer ${API_TOKEN}", "X-Team": "${TEAM:-core}" },
          },
        },
      },
      { env: { API_TOKEN: "tok-1234567890" } },
    );
    await failed.close();
    fake.close();
    expect(received[0]).toMatchObject({ authorization: "Bearer tok-1234567890", "x-team": "core" });
    expect(failed.status()[0]).toMatchObject({ name: "api", state: "closed" });
  });

  it("redacts every header value of the entry in what the server sends back", async () => {
    // A minimal Streamable HTTP server answering with JSON: its one tool echoes the headers.
    const echo = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on("end", () => {
        // No event stream (GET) and no session to end (DELETE): only POSTed messages.
        if (request.method !== "POST") return response.writeHead(405).end();
        const message = JSON.parse(body) as {
          id?: number;
          method: string;
          params?: { protocolVersion?: string };
        };
        if (message.id === undefined) return response.writeHead(202).end();
        const results: Record<string, unknown> = {
          initialize: {
            protocolVersion: message.params?.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "echo-headers", version: "1.0.0" },
          },
          "tools/list": { tools: [{ name: "headers", inputSchema: { type: "object" } }] },
          "tools/call": { content: [{ type: "text", text: JSON.stringify(request.headers) }] },
        };
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({ jsonrpc: "2.0", id: message.id, result: results[message.method] ?? {} }),
        );
      });
    });
    echo.listen(0, "127.0.0.1");
    await once(echo, "listening");
    const { port } = echo.address() as AddressInfo;
    const mcp = await connectMcpServers({
      mcpServers: {
        h: {
          type: "http",
          url: `http://127.0.0.1:${port}/mcp`,
          headers: { Authorization: "Bearer literal-token-0123456789", "X-Plain": "visible-value" },
        },
      },
    });
    const result = await mcp.tools()[0]?.execute({});
    await mcp.close();
    echo.close();
    const headers = JSON.parse(result?.content ?? "{}") as Record<string, string>;
    expect(headers.authorization).toBe("[redacted]");
    expect(headers["x-plain"]).toBe("[redacted]");
    expect(headers.host).toBe(`127.0.0.1:${port}`);
  });

  it("is reported failed, by name and reason, when nothing listens", async () => {
    const port = await freePort();
    const down = await connectMcpServers({
      mcpServers: { gone: { type: "http", url: `http://127.0.0.1:${port}/mcp` } },
    });
    expect(down.status()).toEqual([
      {
        name: "gone",
        state: "failed",
        late: false,
        reason: "fetch failed (ECONNREFUSED)",
        stderr: [],
        tools: 0,
        restarts: 0,
      },
    ]);
    await down.close();
  });
});
