import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgent } from "../src/agent.js";
import { call, done, FakeClient, text, toolCall } from "../src/testing/fake-client.js";
import type { Message, Tool } from "../src/types.js";
import { echoTool } from "./support/tools.js";

const user: Message = { role: "user", content: "look around" };

describe("runAgent", () => {
  it("returns a text-only answer and sends the system, history and tool specs", async () => {
    const client = new FakeClient([[text("Hel"), text("lo"), done]]);
    const tools = [echoTool()];
    const result = await runAgent({ client, tools, system: "be brief", messages: [user] });
    expect(result).toEqual({
      status: "completed",
      text: "Hello",
      messages: [user, { role: "assistant", content: "Hello", toolCalls: [] }],
    });
    expect(client.requests).toEqual([
      { system: "be brief", messages: [user], tools: [tools[0]?.spec] },
    ]);
  });

  it("runs one tool round and sends the calls with their results in the next request", async () => {
    const client = new FakeClient([
      [text("checking"), call("c1", "echo", { value: "a" }), done],
      [text("it said a"), done],
    ]);
    const result = await runAgent({ client, tools: [echoTool()], system: "", messages: [user] });
    const round1: Message[] = [
      user,
      {
        role: "assistant",
        content: "checking",
        toolCalls: [toolCall("c1", "echo", { value: "a" })],
      },
      { role: "tool", toolCallId: "c1", content: "echo: a", isError: false },
    ];
    expect(client.requests.map((request) => request.messages)).toEqual([[user], round1]);
    expect(result).toEqual({
      status: "completed",
      text: "it said a",
      messages: [...round1, { role: "assistant", content: "it said a", toolCalls: [] }],
    });
  });

  it("runs several calls one at a time in declared order", async () => {
    const order: string[] = [];
    const slow: Tool = {
      spec: { name: "slow", description: "", inputSchema: { type: "object" } },
      async execute(input) {
        const id = String((input as { id: string }).id);
        order.push(`start ${id}`);
        // The first gives way: were the calls run together, the others would start meanwhile.
        if (id === "1") await new Promise((resolve) => setImmediate(resolve));
        order.push(`end ${id}`);
        return { content: id };
      },
    };
    const client = new FakeClient([
      [
        call("a", "slow", { id: "1" }),
        call("b", "slow", { id: "2" }),
        call("c", "slow", { id: "3" }),
        done,
      ],
      [text("ok"), done],
    ]);
    const result = await runAgent({ client, tools: [slow], system: "", messages: [user] });
    expect(order).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
    expect(result.messages.slice(2)).toEqual([
      { role: "tool", toolCallId: "a", content: "1", isError: false },
      { role: "tool", toolCallId: "b", content: "2", isError: false },
      { role: "tool", toolCallId: "c", content: "3", isError: false },
      { role: "assistant", content: "ok", toolCalls: [] },
    ]);
  });

  it("keeps a tool's own isError result", async () => {
    const failing: Tool = {
      spec: { name: "fails", description: "", inputSchema: { type: "object" } },
      execute: async () => ({ content: "no such file", isError: true }),
    };
    const client = new FakeClient([
      [call("c1", "fails"), done],
      [text("sorry"), done],
    ]);
    const result = await runAgent({ client, tools: [failing], system: "", messages: [user] });
    expect(result.messages[2]).toEqual({
      role: "tool",
      toolCallId: "c1",
      content: "no such file",
      isError: true,
    });
  });

  it("accepts a stream with text but no done", async () => {
    const client = new FakeClient([[text("partial but fine")]]);
    const result = await runAgent({ client, tools: [], system: "", messages: [user] });
    expect(result.status).toBe("completed");
    expect(result.text).toBe("partial but fine");
  });

  it("accepts a stream with a tool call but no done", async () => {
    const client = new FakeClient([[call("c1", "echo", { value: "x" })], [text("ok"), done]]);
    const result = await runAgent({ client, tools: [echoTool()], system: "", messages: [user] });
    expect(result.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
  });

  it("throws on an empty round and commits nothing", async () => {
    const events: AgentEvent[] = [];
    const client = new FakeClient([[done]]);
    await expect(
      runAgent({
        client,
        tools: [],
        system: "",
        messages: [user],
        onEvent: (e) => void events.push(e),
      }),
    ).rejects.toThrow("model completed without text or tool calls");
    expect(events).toEqual([]);
  });

  it("reports text, committed messages and tool starts to the event callback in order", async () => {
    const events: AgentEvent[] = [];
    const client = new FakeClient([
      [text("a"), text("b"), call("c1", "echo", { value: "v" }), done],
      [text("end"), done],
    ]);
    await runAgent({
      client,
      tools: [echoTool()],
      system: "",
      messages: [user],
      onEvent: (event) => void events.push(event),
    });
    const calls = [toolCall("c1", "echo", { value: "v" })];
    expect(events).toEqual([
      { type: "text", text: "a" },
      { type: "text", text: "b" },
      { type: "message", message: { role: "assistant", content: "ab", toolCalls: calls } },
      { type: "tool_start", call: calls[0] },
      {
        type: "message",
        message: { role: "tool", toolCallId: "c1", content: "echo: v", isError: false },
      },
      { type: "text", text: "end" },
      { type: "message", message: { role: "assistant", content: "end", toolCalls: [] } },
    ]);
  });

  it("commits the assistant message before any tool runs", async () => {
    const seen: string[] = [];
    const probe: Tool = {
      spec: { name: "probe", description: "", inputSchema: { type: "object" } },
      execute: async () => {
        seen.push("execute");
        return { content: "ok" };
      },
    };
    const client = new FakeClient([
      [call("c1", "probe"), done],
      [text("done"), done],
    ]);
    await runAgent({
      client,
      tools: [probe],
      system: "",
      messages: [user],
      onEvent: async (event) => {
        if (event.type === "message") seen.push(`commit ${event.message.role}`);
      },
    });
    expect(seen).toEqual(["commit assistant", "execute", "commit tool", "commit assistant"]);
  });

  it("does not mutate the history it was given", async () => {
    const history: Message[] = [user];
    const client = new FakeClient([[text("hi"), done]]);
    await runAgent({ client, tools: [], system: "", messages: history });
    expect(history).toEqual([user]);
  });

  it("fails loudly when the fake script runs out", async () => {
    const client = new FakeClient([[call("c1", "echo", { value: "x" }), done]]);
    await expect(
      runAgent({ client, tools: [echoTool()], system: "", messages: [user] }),
    ).rejects.toThrow("fake client: no scripted round 2");
  });
  it("answers 500 calls of one round, each exactly once and in order", async () => {
    const calls = Array.from({ length: 500 }, (_, i) => call(`c${i}`, "echo", { value: `${i}` }));
    const client = new FakeClient([
      [...calls, done],
      [text("all done"), done],
    ]);
    const result = await runAgent({ client, tools: [echoTool()], system: "", messages: [user] });
    expect(result.status).toBe("completed");
    const results = result.messages.filter((message) => message.role === "tool");
    expect(results).toEqual(
      Array.from({ length: 500 }, (_, i) => ({
        role: "tool",
        toolCallId: `c${i}`,
        content: `echo: ${i}`,
        isError: false,
      })),
    );
    expect(client.requests[1]?.messages).toHaveLength(502);
  });
});
