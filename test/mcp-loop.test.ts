import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { connectMcpServers, type McpServers } from "../src/mcp/index.js";
import { assertValidHistory, call, done, FakeClient, text } from "../src/testing/index.js";
import type { ToolCall } from "../src/types.js";
import { everythingServer } from "./support/mcp.js";

/** MCP tools in the loop: asked of the policy like any tool, each call answered once. */

let mcp: McpServers;
beforeAll(async () => {
  mcp = await connectMcpServers({
    mcpServers: { everything: { command: process.execPath, args: [everythingServer(), "stdio"] } },
  });
}, 30_000);
afterAll(() => mcp?.close());

describe("MCP tools in runAgent", () => {
  it("asks the policy for each call, read-only hints or not, and pairs every receipt", async () => {
    const asked: ToolCall[] = [];
    const client = new FakeClient([
      [
        call("c1", "mcp__everything__echo", { message: "hi" }),
        call("c2", "mcp__everything__get-sum", { a: 1, b: 2 }),
        done,
      ],
      [text("done"), done],
    ]);
    const result = await runAgent({
      client,
      tools: mcp.tools(),
      system: "test",
      messages: [{ role: "user", content: "go" }],
      beforeToolCall: (toolCall) => {
        asked.push(toolCall);
        return toolCall.name.endsWith("get-sum")
          ? { approved: false, reason: "not now" }
          : { approved: true };
      },
    });
    expect(asked.map((toolCall) => toolCall.name)).toEqual([
      "mcp__everything__echo",
      "mcp__everything__get-sum",
    ]);
    expect(result.status).toBe("completed");
    expect(result.messages.filter((message) => message.role === "tool")).toEqual([
      { role: "tool", toolCallId: "c1", content: "Echo: hi", isError: false },
      { role: "tool", toolCallId: "c2", content: "not now", isError: true },
    ]);
    assertValidHistory(result.messages);
    expect(client.requests[0]?.tools.map((tool) => tool.name)).toContain("mcp__everything__echo");
  });
});
