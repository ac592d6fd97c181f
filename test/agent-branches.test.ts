import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgent } from "../src/agent.js";
import { denyBashByDefault } from "../src/approval.js";
import { call, done, FakeClient, text, toolCall } from "../src/testing/fake-client.js";
import type { Message, ModelEvent } from "../src/types.js";
import { echoTool, scriptedTool } from "./support/tools.js";

const user: Message = { role: "user", content: "do it" };
const receipt = (toolCallId: string, content: string): Message => ({
  role: "tool",
  toolCallId,
  content,
  isError: true,
});
const assistant = (content: string, ...calls: ReturnType<typeof toolCall>[]): Message => ({
  role: "assistant",
  content,
  toolCalls: calls,
});

describe("runAgent failure branches", () => {
  it("records a denied call with the policy's reason and continues", async () => {
    const ran: string[] = [];
    const client = new FakeClient([
      [call("c1", "echo", { value: "no" }), call("c2", "echo", { value: "yes" }), done],
      [text("ok"), done],
    ]);
    const result = await runAgent({
      client,
      tools: [echoTool(ran)],
      system: "",
      messages: [user],
      beforeToolCall: (c) =>
        c.input.value === "no" ? { approved: false, reason: "not that one" } : { approved: true },
    });
    expect(ran).toEqual(["yes"]);
    expect(client.requests[1]?.messages).toEqual([
      user,
      assistant(
        "",
        toolCall("c1", "echo", { value: "no" }),
        toolCall("c2", "echo", { value: "yes" }),
      ),
      receipt("c1", "not that one"),
      { role: "tool", toolCallId: "c2", content: "echo: yes", isError: false },
    ]);
    expect(result.status).toBe("completed");
  });

  it("records a denial without a reason as tool call rejected", async () => {
    const client = new FakeClient([
      [call("c1", "echo", { value: "x" }), done],
      [text("ok"), done],
    ]);
    const result = await runAgent({
      client,
      tools: [echoTool()],
      system: "",
      messages: [user],
      beforeToolCall: () => ({ approved: false }),
    });
    expect(result.messages[2]).toEqual(receipt("c1", "tool call rejected"));
  });

  it("denies bash by default with a reason saying how to allow it", async () => {
    const ran: string[] = [];
    const bash = scriptedTool("bash", async () => {
      ran.push("bash");
      return { content: "ran" };
    });
    const client = new FakeClient([
      [call("c1", "bash", { command: "ls" }), done],
      [text("ok"), done],
    ]);
    const result = await runAgent({
      client,
      tools: [bash, echoTool()],
      system: "",
      messages: [user],
      beforeToolCall: denyBashByDefault,
    });
    expect(ran).toEqual([]);
    expect(result.messages[2]).toEqual(
      receipt(
        "c1",
        "bash is denied by default: run mini-agent with --allow-bash to let the agent run shell commands",
      ),
    );
    expect(denyBashByDefault(toolCall("c2", "read", { path: "a" }))).toEqual({ approved: true });
  });

  it("records an unknown tool as an error naming it and continues", async () => {
    const ran: string[] = [];
    const client = new FakeClient([
      [call("c1", "teleport", { to: "mars" }), call("c2", "echo", { value: "v" }), done],
      [text("ok"), done],
    ]);
    const result = await runAgent({ client, tools: [echoTool(ran)], system: "", messages: [user] });
    expect(ran).toEqual(["v"]);
    expect(result.messages.slice(2, 4)).toEqual([
      receipt("c1", "unknown tool: teleport"),
      { role: "tool", toolCallId: "c2", content: "echo: v", isError: false },
    ]);
  });

  it("records an invalid tool parameter as a tool error", async () => {
    const ran: string[] = [];
    const nullInput = { type: "tool_call", call: { id: "c2", name: "echo", input: null } };
    const client = new FakeClient([
      [call("c1", "echo", { value: 42 }), nullInput as unknown as ModelEvent, done],
      [text("ok"), done],
    ]);
    const result = await runAgent({ client, tools: [echoTool(ran)], system: "", messages: [user] });
    expect(ran).toEqual([]);
    expect(result.messages.slice(2, 4)).toEqual([
      receipt("c1", "invalid echo input: value must be a string"),
      receipt("c2", "invalid echo input: input must be an object, not null"),
    ]);
  });

  it("answers a call whose input the adapter could not read with its receipt, unasked, and runs the round's other calls", async () => {
    const ran: string[] = [];
    const asked: string[] = [];
    const unreadable: ModelEvent = {
      type: "tool_call",
      call: toolCall("c1", "echo", {}),
      invalidInput: "input is not valid JSON",
    };
    const client = new FakeClient([
      [unreadable, call("c2", "echo", { value: "v" }), done],
      [text("ok"), done],
    ]);
    await runAgent({
      client,
      tools: [echoTool(ran)],
      system: "",
      messages: [user],
      beforeToolCall: (c) => {
        asked.push(c.id);
        return { approved: true };
      },
    });
    expect({ ran, asked }).toEqual({ ran: ["v"], asked: ["c2"] });
    expect(client.requests[1]?.messages).toEqual([
      user,
      assistant("", toolCall("c1", "echo", {}), toolCall("c2", "echo", { value: "v" })),
      receipt("c1", "invalid echo input: input is not valid JSON"),
      { role: "tool", toolCallId: "c2", content: "echo: v", isError: false },
    ]);
  });

  it("records aborted before execution for every call when the signal aborts before dispatch", async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const client = new FakeClient([
      async function* () {
        yield call("c1", "echo", { value: "1" });
        yield call("c2", "echo", { value: "2" });
        controller.abort();
        yield done;
      },
    ]);
    const result = await runAgent({
      client,
      tools: [echoTool(ran)],
      system: "",
      messages: [user],
      signal: controller.signal,
    });
    expect(ran).toEqual([]);
    expect(result).toEqual({
      status: "aborted",
      text: "",
      messages: [
        user,
        assistant(
          "",
          toolCall("c1", "echo", { value: "1" }),
          toolCall("c2", "echo", { value: "2" }),
        ),
        receipt("c1", "aborted before execution"),
        receipt("c2", "aborted before execution"),
      ],
    });
  });

  it("records aborted before execution for the call being approved and every later one", async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const client = new FakeClient([
      [call("c1", "echo", { value: "1" }), call("c2", "echo", { value: "2" }), done],
    ]);
    const result = await runAgent({
      client,
      tools: [echoTool(ran)],
      system: "",
      messages: [user],
      signal: controller.signal,
      beforeToolCall: async () => {
        controller.abort();
        return { approved: true };
      },
    });
    expect(ran).toEqual([]);
    expect(result.status).toBe("aborted");
    expect(result.messages.slice(2)).toEqual([
      receipt("c1", "aborted before execution"),
      receipt("c2", "aborted before execution"),
    ]);
  });

  it("treats a policy that throws after an abort as the abort", async () => {
    const controller = new AbortController();
    const client = new FakeClient([[call("c1", "echo", { value: "1" }), done]]);
    const result = await runAgent({
      client,
      tools: [echoTool()],
      system: "",
      messages: [user],
      signal: controller.signal,
      beforeToolCall: () => {
        controller.abort();
        throw new Error("prompt interrupted");
      },
    });
    expect(result.status).toBe("aborted");
    expect(result.messages.slice(2)).toEqual([receipt("c1", "aborted before execution")]);
  });

  it("keeps the round's text and asks the policy nothing more once the signal aborted", async () => {
    const controller = new AbortController();
    const asked: string[] = [];
    const first = scriptedTool("first", async () => {
      controller.abort();
      return { content: "done first" };
    });
    const client = new FakeClient([
      [text("working on it"), call("c1", "first"), call("c2", "first"), done],
    ]);
    const result = await runAgent({
      client,
      tools: [first],
      system: "",
      messages: [user],
      signal: controller.signal,
      beforeToolCall: (c) => {
        asked.push(c.id);
        return { approved: true };
      },
    });
    expect(result.status).toBe("aborted");
    expect(result.text).toBe("working on it");
    expect(asked).toEqual(["c1"]);
  });

  it("keeps the round's text when a tool throws because of the abort", async () => {
    const controller = new AbortController();
    const waits = scriptedTool("waits", async () => {
      controller.abort();
      throw new Error("The operation was aborted");
    });
    const client = new FakeClient([[text("trying"), call("c1", "waits"), done]]);
    const result = await runAgent({
      client,
      tools: [waits],
      system: "",
      messages: [user],
      signal: controller.signal,
    });
    expect(result).toMatchObject({ status: "aborted", text: "trying" });
  });

  it("records aborted before execution for the calls after the one running when the signal aborted", async () => {
    const controller = new AbortController();
    const first = scriptedTool("first", async () => {
      controller.abort();
      return { content: "first finished" };
    });
    const client = new FakeClient([
      [call("c1", "first"), call("c2", "echo", { value: "2" }), done],
    ]);
    const result = await runAgent({
      client,
      tools: [first, echoTool()],
      system: "",
      messages: [user],
      signal: controller.signal,
    });
    expect(result.status).toBe("aborted");
    expect(result.messages.slice(2)).toEqual([
      { role: "tool", toolCallId: "c1", content: "first finished", isError: false },
      receipt("c2", "aborted before execution"),
    ]);
  });

  it("records aborted during execution when a tool throws because of the abort", async () => {
    const controller = new AbortController();
    const waits = scriptedTool(
      "waits",
      (_input, signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener("abort", () => reject(new Error("The operation was aborted")));
          controller.abort();
        }),
    );
    const client = new FakeClient([[call("c1", "waits"), call("c2", "waits"), done]]);
    const result = await runAgent({
      client,
      tools: [waits],
      system: "",
      messages: [user],
      signal: controller.signal,
    });
    expect(result.status).toBe("aborted");
    expect(result.messages.slice(2)).toEqual([
      receipt("c1", "aborted during execution"),
      receipt("c2", "aborted before execution"),
    ]);
  });

  it("returns aborted without asking the model when the signal is already aborted", async () => {
    const client = new FakeClient([]);
    const result = await runAgent({
      client,
      tools: [],
      system: "",
      messages: [user],
      signal: AbortSignal.abort(),
    });
    expect(result).toEqual({ status: "aborted", text: "", messages: [user] });
    expect(client.requests).toEqual([]);
  });

  it("commits nothing from a stream that throws and propagates its error", async () => {
    const events: AgentEvent[] = [];
    const client = new FakeClient([
      [call("c1", "echo", { value: "1" }), done],
      [text("half an ans"), new Error("connection reset")],
    ]);
    await expect(
      runAgent({
        client,
        tools: [echoTool()],
        system: "",
        messages: [user],
        onEvent: (event) => void events.push(event),
      }),
    ).rejects.toThrow("connection reset");
    const committed = events.flatMap((event) => (event.type === "message" ? [event.message] : []));
    expect(committed).toEqual([
      assistant("", toolCall("c1", "echo", { value: "1" })),
      { role: "tool", toolCallId: "c1", content: "echo: 1", isError: false },
    ]);
  });

  it("returns aborted when the stream throws after the signal aborted", async () => {
    const controller = new AbortController();
    const client = new FakeClient([
      async function* () {
        yield text("partial");
        controller.abort();
        throw new Error("Request was aborted.");
      },
    ]);
    const result = await runAgent({
      client,
      tools: [],
      system: "",
      messages: [user],
      signal: controller.signal,
    });
    expect(result).toEqual({ status: "aborted", text: "", messages: [user] });
  });

  it("returns aborted when an aborted stream ends empty", async () => {
    const controller = new AbortController();
    const client = new FakeClient([
      async function* () {
        controller.abort();
        yield* [];
      },
    ]);
    const result = await runAgent({
      client,
      tools: [],
      system: "",
      messages: [user],
      signal: controller.signal,
    });
    expect(result).toEqual({ status: "aborted", text: "", messages: [user] });
  });

  it("stops at the turn limit with every call answered", async () => {
    const client = new FakeClient([
      [call("c1", "echo", { value: "1" }), done],
      [text("more"), call("c2", "echo", { value: "2" }), done],
      [text("never sent"), done],
    ]);
    const result = await runAgent({
      client,
      tools: [echoTool()],
      system: "",
      messages: [user],
      maxTurns: 2,
    });
    expect(client.requests).toHaveLength(2);
    expect(result).toEqual({
      status: "max_turns",
      text: "more",
      messages: [
        user,
        assistant("", toolCall("c1", "echo", { value: "1" })),
        { role: "tool", toolCallId: "c1", content: "echo: 1", isError: false },
        assistant("more", toolCall("c2", "echo", { value: "2" })),
        { role: "tool", toolCallId: "c2", content: "echo: 2", isError: false },
      ],
    });
  });

  it("completes on the last allowed turn when that round calls no tools", async () => {
    const client = new FakeClient([
      [call("c1", "echo", { value: "1" }), done],
      [text("fin"), done],
    ]);
    const result = await runAgent({
      client,
      tools: [echoTool()],
      system: "",
      messages: [user],
      maxTurns: 2,
    });
    expect(result.status).toBe("completed");
  });

  it("fails closed when the policy returns no approval", async () => {
    const ran: string[] = [];
    const client = new FakeClient([
      [call("c1", "echo", { value: "x" }), call("c2", "echo", { value: "y" }), done],
    ]);
    const events: AgentEvent[] = [];
    await expect(
      runAgent({
        client,
        tools: [echoTool(ran)],
        system: "",
        messages: [user],
        beforeToolCall: (() => undefined) as never,
        onEvent: (event) => void events.push(event),
      }),
    ).rejects.toThrow("beforeToolCall returned no { approved: boolean }");
    expect(ran).toEqual([]);
    const committed = events.flatMap((event) => (event.type === "message" ? [event.message] : []));
    expect(committed.slice(1)).toEqual([
      receipt("c1", "tool approval failed"),
      receipt("c2", "not executed after an earlier failure"),
    ]);
  });

  it("records a tool that returns no string content as failed and throws", async () => {
    const broken = scriptedTool("broken", async () => undefined as never);
    const client = new FakeClient([
      [call("c1", "broken"), call("c2", "echo", { value: "x" }), done],
    ]);
    const events: AgentEvent[] = [];
    await expect(
      runAgent({
        client,
        tools: [broken, echoTool()],
        system: "",
        messages: [user],
        onEvent: (event) => void events.push(event),
      }),
    ).rejects.toThrow("tool broken returned no string content");
    const committed = events.flatMap((event) => (event.type === "message" ? [event.message] : []));
    expect(committed.slice(1)).toEqual([
      receipt("c1", "tool execution failed"),
      receipt("c2", "not executed after an earlier failure"),
    ]);
  });
});
