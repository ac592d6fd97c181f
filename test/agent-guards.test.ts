import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { call, done, FakeClient, text, toolCall } from "../src/testing/fake-client.js";
import type { BeforeToolCall, Message, ModelEvent, Tool } from "../src/types.js";
import { echoTool } from "./support/tools.js";

const user: Message = { role: "user", content: "do it" };

/** A policy written in plain JavaScript: it may answer anything. */
const answering =
  (answer: unknown): BeforeToolCall =>
  () =>
    answer as ReturnType<BeforeToolCall>;

describe("runAgent against parts that break their contracts", () => {
  it("fails closed on a denial whose reason is not a string, like a policy without an answer", async () => {
    for (const reason of [{ code: 403 }, 7, null]) {
      const messages: Message[] = [];
      const run = runAgent({
        client: new FakeClient([[call("c1", "echo", { value: "x" }), call("c2", "echo"), done]]),
        tools: [echoTool([])],
        system: "",
        messages: [user],
        beforeToolCall: answering({ approved: false, reason }),
        onEvent: (event) => void (event.type === "message" && messages.push(event.message)),
      });
      await expect(run).rejects.toThrow("beforeToolCall returned no { approved: boolean }");
      expect(messages.slice(1)).toEqual([
        { role: "tool", toolCallId: "c1", content: "tool approval failed", isError: true },
        {
          role: "tool",
          toolCallId: "c2",
          content: "not executed after an earlier failure",
          isError: true,
        },
      ]);
    }
  });

  it("fails closed on a tool result whose isError is not a boolean", async () => {
    const loose: Tool = {
      spec: { name: "loose", description: "", inputSchema: { type: "object" } },
      execute: async () => ({ content: "done", isError: "yes" as unknown as boolean }),
    };
    const run = runAgent({
      client: new FakeClient([[call("c1", "loose"), done]]),
      tools: [loose],
      system: "",
      messages: [user],
    });
    await expect(run).rejects.toThrow("tool loose returned an isError that is not a boolean");
  });

  it("ends a run aborted while the policy never answers, every call with its receipt", async () => {
    const controller = new AbortController();
    const never: BeforeToolCall = () => {
      // Aborted once the loop awaits the answer that never comes.
      setImmediate(() => controller.abort());
      return new Promise(() => {});
    };
    const result = await runAgent({
      client: new FakeClient([[call("c1", "echo"), call("c2", "echo"), done]]),
      tools: [echoTool([])],
      system: "",
      messages: [user],
      beforeToolCall: never,
      signal: controller.signal,
    });
    expect(result.status).toBe("aborted");
    expect(result.messages.slice(2)).toEqual([
      { role: "tool", toolCallId: "c1", content: "aborted before execution", isError: true },
      { role: "tool", toolCallId: "c2", content: "aborted before execution", isError: true },
    ]);
  });

  it("refuses a round whose tool calls the adapters would never yield, committing nothing", async () => {
    const odd: [string, ModelEvent][] = [
      [
        "an id that is no string",
        { type: "tool_call", call: { ...toolCall("c1", "echo"), id: 7 as unknown as string } },
      ],
      ["an empty id", call("", "echo")],
      [
        "a name that is no string",
        {
          type: "tool_call",
          call: { ...toolCall("c1", "echo"), name: undefined as unknown as string },
        },
      ],
      [
        "a reasoning part without its place",
        { type: "reasoning", part: { type: "thinking", text: "hm" } as never },
      ],
    ];
    for (const [what, event] of odd) {
      const committed: Message[] = [];
      const ran: string[] = [];
      const run = runAgent({
        client: new FakeClient([[text("let me"), event, done]]),
        tools: [echoTool(ran)],
        system: "",
        messages: [user],
        onEvent: (e) => void (e.type === "message" && committed.push(e.message)),
      });
      await expect(run, what).rejects.toThrow(/^model client returned an invalid /);
      expect({ what, committed, ran }).toEqual({ what, committed: [], ran: [] });
    }
  });

  it("keeps a call whose input is not an object as one with {}, answered with a receipt saying why", async () => {
    const ran: string[] = [];
    const given = (input: unknown): ModelEvent => ({
      type: "tool_call",
      call: { id: `c${String(input)}`, name: "echo", input: input as Record<string, unknown> },
    });
    const result = await runAgent({
      client: new FakeClient([
        [given([1, 2]), given("text"), done],
        [text("ok"), done],
      ]),
      tools: [echoTool(ran)],
      system: "",
      messages: [user],
    });
    expect(ran).toEqual([]);
    expect(result.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: "",
        toolCalls: [toolCall("c1,2", "echo", {}), toolCall("ctext", "echo", {})],
      },
      {
        role: "tool",
        toolCallId: "c1,2",
        content: "invalid echo input: input must be an object, not an array",
        isError: true,
      },
      {
        role: "tool",
        toolCallId: "ctext",
        content: "invalid echo input: input must be an object, not a string",
        isError: true,
      },
      { role: "assistant", content: "ok", toolCalls: [] },
    ]);
  });

  it("refuses a round that declares one call id twice", async () => {
    const run = runAgent({
      client: new FakeClient([[call("c1", "echo"), call("c1", "echo"), done]]),
      tools: [echoTool([])],
      system: "",
      messages: [user],
    });
    await expect(run).rejects.toThrow(
      "model client returned an invalid tool call: the id c1 twice",
    );
  });
});
