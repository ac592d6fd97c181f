import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpServers, type McpServers } from "../src/mcp/index.js";
import type { McpTool } from "../src/mcp/tools.js";
import { everythingServer } from "./support/mcp.js";
import { until } from "./support/until.js";

/**
 * Against the real reference server, `@modelcontextprotocol/server-everything`, over stdio: the
 * tools it lists, calls and their receipts, progress, abort, and the secrets rule.
 */

const secret = "sk-live-0123456789abcdef";
let mcp: McpServers;
const progress: number[] = [];

beforeAll(async () => {
  mcp = await connectMcpServers(
    {
      mcpServers: {
        everything: {
          command: process.execPath,
          args: [everythingServer(), "stdio"],
          env: { EVERYTHING_API_KEY: secret },
        },
      },
    },
    {
      env: { ...process.env, GH_TOKEN: "ghp_agent_token_never_passed_on" },
      callTimeoutMs: 1500,
      onProgress: (event) => progress.push(event.progress),
    },
  );
}, 30_000);
afterAll(() => mcp?.close());

const tool = (name: string): McpTool => {
  const found = mcp.tools().find((candidate) => candidate.mcp.tool === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};

describe("the reference MCP server over stdio", () => {
  it("is up, and lists its tools as mcp__everything__<tool>, sorted", () => {
    expect(mcp.status()).toEqual([
      {
        name: "everything",
        state: "up",
        late: false,
        stderr: ["Starting default (STDIO) server..."],
        tools: 13,
        restarts: 0,
      },
    ]);
    expect(mcp.tools().map((t) => t.spec.name)).toEqual([
      "mcp__everything__echo",
      "mcp__everything__get-annotated-message",
      "mcp__everything__get-env",
      "mcp__everything__get-resource-links",
      "mcp__everything__get-resource-reference",
      "mcp__everything__get-structured-content",
      "mcp__everything__get-sum",
      "mcp__everything__get-tiny-image",
      "mcp__everything__gzip-file-as-resource",
      "mcp__everything__simulate-research-query",
      "mcp__everything__toggle-simulated-logging",
      "mcp__everything__toggle-subscriber-updates",
      "mcp__everything__trigger-long-running-operation",
    ]);
  });

  it("passes the server's schema through, and keeps annotations for display", () => {
    const sum = tool("get-sum");
    expect(sum.spec.description).toBe("Returns the sum of two numbers");
    expect(sum.spec.inputSchema).toMatchObject({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    });
    expect(sum.mcp).toEqual({
      server: "everything",
      tool: "get-sum",
      title: "Get Sum Tool",
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    });
  });

  it("returns the server's instructions for the system prompt", () => {
    const [instructions] = mcp.instructions();
    expect(instructions?.server).toBe("everything");
    expect(instructions?.text).toMatch(/^# Everything Server/);
    expect(instructions?.text.length).toBeLessThanOrEqual(2000 + 60);
  });

  it("calls echo and get-sum", async () => {
    expect(await tool("echo").execute({ message: "hello" })).toEqual({
      content: "Echo: hello",
      isError: false,
    });
    expect(await tool("get-sum").execute({ a: 2, b: 3 })).toEqual({
      content: "The sum of 2 and 3 is 5.",
      isError: false,
    });
  });

  it("checks the arguments before the call", async () => {
    expect(await tool("get-sum").execute({ a: "2", b: 3 })).toEqual({
      content: "invalid mcp__everything__get-sum input: a must be a number",
      isError: true,
    });
    expect(await tool("get-sum").execute({ a: 2 })).toEqual({
      content: "invalid mcp__everything__get-sum input: b is required",
      isError: true,
    });
    expect(await tool("echo").execute([1])).toEqual({
      content: "invalid mcp__everything__echo input: input must be an object",
      isError: true,
    });
  });

  it("turns get-tiny-image's image into an image part, with a placeholder line in the text", async () => {
    const result = await tool("get-tiny-image").execute({});
    const image = result.parts?.[1];
    const data = image?.type === "image" ? image.data : "";
    expect(result).toEqual({
      content:
        "Here's the image you requested:\n[image: image/png, 20x20, 3.9 KB]\nThe image above is the MCP logo.",
      isError: false,
      parts: [
        { type: "text", text: "Here's the image you requested:" },
        { type: "image", mediaType: "image/png", data },
        { type: "text", text: "The image above is the MCP logo." },
      ],
    });
    // The logo itself: a 20x20 PNG of 3.9 KB.
    const bytes = Buffer.from(data, "base64");
    expect([
      bytes.toString("latin1", 1, 4),
      bytes.readUInt32BE(16),
      bytes.readUInt32BE(20),
    ]).toEqual(["PNG", 20, 20]);
    expect((bytes.length / 1024).toFixed(1)).toBe("3.9");
  });

  it("gives the server none of the agent's secret variables, and redacts the entry's own", async () => {
    const { content } = await tool("get-env").execute({});
    const env = JSON.parse(content) as Record<string, string>;
    expect(env.GH_TOKEN).toBeUndefined();
    expect(env.EVERYTHING_API_KEY).toBe("[redacted]");
    expect(content).not.toContain(secret);
  });

  it("completes a long call whose progress keeps extending the call timeout", async () => {
    progress.length = 0;
    // 3 s in 6 steps against a 1.5 s timeout: each progress notification resets it.
    const result = await tool("trigger-long-running-operation").execute({ duration: 3, steps: 6 });
    expect(result).toEqual({
      content: "Long running operation completed. Duration: 3 seconds, Steps: 6.",
      isError: false,
    });
    // The last notification may come after the result, when the call's handler is gone.
    expect(progress.slice(0, 5)).toEqual([1, 2, 3, 4, 5]);
  });

  it("times out a call that makes no progress within the call timeout", async () => {
    const result = await tool("trigger-long-running-operation").execute({ duration: 3, steps: 1 });
    expect(result).toEqual({
      content: "mcp__everything__trigger-long-running-operation failed: timed out without progress",
      isError: true,
    });
  });

  it("ends a call at its overall limit even while it makes progress", async () => {
    const limited = await connectMcpServers(
      {
        mcpServers: {
          everything: { command: process.execPath, args: [everythingServer(), "stdio"] },
        },
      },
      { callTimeoutMs: 1500, maxCallMs: 1200 },
    );
    try {
      const long = limited.tools().find((t) => t.mcp.tool === "trigger-long-running-operation");
      expect(await long?.execute({ duration: 3, steps: 6 })).toEqual({
        content:
          "mcp__everything__trigger-long-running-operation failed: took longer than the limit of 1.2 s for one call",
        isError: true,
      });
    } finally {
      await limited.close();
    }
  });

  it("aborts a call mid-way, and the server stays usable", async () => {
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
        "mcp__everything__trigger-long-running-operation aborted: the server was asked to cancel the call",
      isError: true,
    });
    expect(await tool("echo").execute({ message: "still here" })).toEqual({
      content: "Echo: still here",
      isError: false,
    });
    expect(mcp.status()[0]?.state).toBe("up");
  });
});
