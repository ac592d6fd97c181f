import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgent } from "../src/agent.js";
import { denyBashByDefault } from "../src/approval.js";
import { isValidCallId } from "../src/history/call-ids.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { httpFetch } from "../src/providers/http-transport.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import { OpenAIResponsesModelClient } from "../src/providers/openai-responses.js";
import * as anthropic from "../src/testing/anthropic-server.js";
import * as openai from "../src/testing/openai-server.js";
import * as responses from "../src/testing/responses-server.js";
import type {
  Body,
  Reply,
  ReplyScript,
  ScriptedServer,
  StreamFaults,
} from "../src/testing/sse-server.js";
import { createWorkspaceTools } from "../src/tools/index.js";
import type { Message, ModelClient, ModelEvent } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { useTempDirs } from "./support/temp.js";
import { scriptedTool } from "./support/tools.js";

/** One adapter under the shared contract: its local server and how each scenario is said in its protocol. */
interface Adapter {
  name: string;
  start(script: ReplyScript[]): Promise<ScriptedServer>;
  client(server: ScriptedServer, idleTimeout?: number, transport?: typeof fetch): ModelClient;
  answer(text: string[], calls?: anthropic.ScriptedCall[], faults?: StreamFaults): Reply;
  truncated(text: string[], calls: anthropic.ScriptedCall[]): Reply;
  incomplete(text: string[]): Reply;
  /** The tool results a request carried, as [call id, text the model reads]. */
  results(body: Body): [unknown, unknown][];
  /** How an error result reads in this protocol. */
  asError(text: string): string;
}

const adapters: Adapter[] = [
  {
    name: "Anthropic Messages",
    start: anthropic.startAnthropicServer,
    client: (server, idleTimeout, transport) =>
      new AnthropicModelClient({
        apiKey: "test-key",
        model: "local-model",
        baseURL: server.url,
        ...(idleTimeout !== undefined && { idleTimeout }),
        ...(transport && { fetch: transport }),
      }),
    answer: (text, calls, faults) =>
      anthropic.stream(anthropic.turn({ text, ...(calls && { calls }) }), faults),
    truncated: (text, calls) =>
      anthropic.stream(anthropic.turn({ text, calls, stopReason: "max_tokens" })),
    incomplete: (text) => anthropic.stream(anthropic.turn({ text }).slice(0, -1)),
    results: (body) =>
      ((body.messages ?? []) as { content: Record<string, unknown>[] }[])
        .flatMap((message) => message.content)
        .filter((block) => block.type === "tool_result")
        .map((block) => [block.tool_use_id, block.content]),
    asError: (text) => text,
  },
  {
    name: "OpenAI Chat Completions",
    start: openai.startOpenAIServer,
    client: (server, idleTimeout, transport) =>
      new OpenAIModelClient({
        baseURL: `${server.url}/v1`,
        model: "local-model",
        ...(idleTimeout !== undefined && { idleTimeout }),
        ...(transport && { fetch: transport }),
      }),
    answer: (text, calls, faults) =>
      openai.stream(openai.completion({ text, ...(calls && { calls }) }), faults),
    truncated: (text, calls) =>
      openai.stream(openai.completion({ text, calls, finishReason: "length" })),
    incomplete: (text) => openai.stream(openai.completion({ text, finishReason: null })),
    results: (body) =>
      ((body.messages ?? []) as Record<string, unknown>[])
        .filter((message) => message.role === "tool")
        .map((message) => [message.tool_call_id, message.content]),
    asError: (text) => `Error: ${text}`,
  },
  {
    name: "OpenAI Responses",
    start: responses.startResponsesServer,
    client: (server, idleTimeout, transport) =>
      new OpenAIResponsesModelClient({
        baseURL: `${server.url}/v1`,
        model: "local-model",
        ...(idleTimeout !== undefined && { idleTimeout }),
        ...(transport && { fetch: transport }),
      }),
    answer: (text, calls, faults) =>
      responses.stream(responses.response({ text, ...(calls && { calls }) }), faults),
    truncated: (text, calls) =>
      responses.stream(responses.response({ text, calls, status: "incomplete" })),
    incomplete: (text) => responses.stream(responses.response({ text }).slice(0, -1)),
    results: (body) =>
      ((body.input ?? []) as Record<string, unknown>[])
        .filter((item) => item.type === "function_call_output")
        .map((item) => [item.call_id, item.output]),
    asError: (text) => `Error: ${text}`,
  },
];

const tempDir = useTempDirs();
const track = useCleanup();

const request = { system: "sys", messages: [{ role: "user" as const, content: "hi" }], tools: [] };
const done: ModelEvent = { type: "done", usage: { inputTokens: 10, outputTokens: 5 } };
const call = (id: string, name: string, input: Record<string, unknown>): ModelEvent => ({
  type: "tool_call",
  call: { id, name, input },
});

async function collect(client: ModelClient, signal?: AbortSignal) {
  const events: ModelEvent[] = [];
  try {
    for await (const event of client.stream({ ...request, ...(signal && { signal }) }))
      events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error: (error as Error).message };
  }
}

/** Each adapter with the SDK's own transport (Node's fetch) and with the CLI's `httpFetch`. */
const contenders = adapters.flatMap((adapter) => [
  adapter,
  {
    ...adapter,
    name: `${adapter.name} over httpFetch`,
    client: (server: ScriptedServer, idleTimeout?: number) =>
      adapter.client(server, idleTimeout, httpFetch),
  },
]);

describe.each(contenders)("ModelClient contract: $name", (adapter) => {
  const serve = async (script: ReplyScript[]) => track(await adapter.start(script));

  it("streams text then done", async () => {
    const server = await serve([adapter.answer(["Hel", "lo"])]);
    expect(await collect(adapter.client(server))).toEqual({
      events: [{ type: "text", text: "Hel" }, { type: "text", text: "lo" }, done],
      error: undefined,
    });
  });

  it("assembles a tool call split into many pieces", async () => {
    const input = { path: "deep/file.ts", options: { all: true, n: [1, 2] } };
    const server = await serve([
      adapter.answer([], [{ id: "call_1", name: "read", input, pieces: 11 }]),
    ]);
    expect((await collect(adapter.client(server))).events).toEqual([
      call("call_1", "read", input),
      done,
    ]);
  });

  it("yields two calls in order", async () => {
    const calls = [
      { id: "call_1", name: "read", input: { path: "a" } },
      { id: "call_2", name: "ls", input: { path: "b" } },
    ];
    const server = await serve([adapter.answer(["Both."], calls)]);
    expect((await collect(adapter.client(server))).events).toEqual([
      { type: "text", text: "Both." },
      call("call_1", "read", { path: "a" }),
      call("call_2", "ls", { path: "b" }),
      done,
    ]);
  });

  it("reads empty arguments as {}", async () => {
    const server = await serve([adapter.answer([], [{ id: "call_1", name: "ls", input: {} }])]);
    expect((await collect(adapter.client(server))).events).toEqual([
      call("call_1", "ls", {}),
      done,
    ]);
  });

  it("fails a round cut by the token limit and never yields its call", async () => {
    const server = await serve([
      adapter.truncated(["Writing"], [{ id: "call_1", name: "write", input: { path: "a" } }]),
    ]);
    const { events, error } = await collect(adapter.client(server));
    expect(events).toEqual([{ type: "text", text: "Writing" }]);
    expect(error).toMatch(
      /^the model reached its output token limit .*; the cut-off tool call was not run$/,
    );
  });

  it("fails on a mid-stream error without retrying or yielding a call", async () => {
    const server = await serve([
      adapter.answer(["partial"], [{ id: "call_1", name: "ls", input: {} }], { errorAfter: 3 }),
    ]);
    const { events, error } = await collect(adapter.client(server));
    expect(events.filter((event) => event.type !== "text")).toEqual([]);
    expect(error).toBeDefined();
    expect(server.requests).toHaveLength(1);
  });

  it("fails a stream that ends without completing", async () => {
    const server = await serve([adapter.incomplete(["cut"])]);
    const { events, error } = await collect(adapter.client(server));
    expect(events).toEqual([{ type: "text", text: "cut" }]);
    expect(error).toMatch(
      /^the model stream ended (before message_stop|without a finish_reason|before response\.completed)$/,
    );
  });

  it("ends the round as aborted when the signal fires", async () => {
    const server = await serve([
      adapter.answer(["a", "b", "c", "d", "e"], [], { frameDelayMs: 50 }),
    ]);
    const controller = new AbortController();
    const result = await runAgent({
      client: adapter.client(server),
      tools: [],
      system: "",
      messages: request.messages,
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "text") controller.abort();
      },
    });
    expect(result).toEqual({ status: "aborted", text: "", messages: request.messages });
  });

  it("fails a stalled stream within the idle limit", async () => {
    const server = await serve([adapter.answer(["a", "b"], [], { stallAfter: 2 })]);
    expect((await collect(adapter.client(server, 300))).error).toBe(
      "the model stream stalled: no event for 0.3 s",
    );
  });
  it("sends a history holding a lone surrogate so that the API takes it", async () => {
    const server = await serve([adapter.answer(["fine"])]);
    const broken: Message[] = [{ role: "user", content: "half an emoji: \ud83d, the end" }];
    const result = await runAgent({
      client: adapter.client(server),
      tools: [],
      system: "",
      messages: broken,
    });
    expect(result.text).toBe("fine");
    expect(server.rejections).toEqual([]);
  });

  it("gives calls a fresh id when theirs is repeated, invalid or reused, and a safe name, so every next request is taken", async () => {
    const ls = (id: string, name = "ls") => ({ id, name, input: {} });
    const server = await serve([
      adapter.answer([], [ls("dup"), ls("dup"), ls("has space"), ls("call_x", "")]),
      adapter.answer([], [ls("dup")]),
      adapter.answer(["done"]),
    ]);
    const result = await runAgent({
      client: adapter.client(server),
      tools: createWorkspaceTools(await tempDir()),
      system: "",
      messages: request.messages,
    });
    expect(result.text).toBe("done");
    expect(server.rejections).toEqual([]);
    const results = adapter.results(server.requests[2]?.body ?? {});
    expect(results.map(([, text]) => text)).toEqual([
      "(empty folder)",
      "(empty folder)",
      "(empty folder)",
      adapter.asError("unknown tool: unnamed_tool"),
      "(empty folder)",
    ]);
    const ids = results.map(([id]) => String(id));
    expect([ids[0], ids[3]]).toEqual(["dup", "call_x"]);
    expect(new Set(ids).size).toBe(5);
    expect(ids.filter((id) => isValidCallId(id))).toEqual(ids);
  });

  it("sends a valid history after a denial, an unknown tool, a thrown tool error and an abort", async () => {
    const controller = new AbortController();
    const explode = scriptedTool("explode", async () => {
      throw new Error("sensitive credential: top-secret-token");
    });
    const halt = scriptedTool("halt", async () => {
      controller.abort();
      return { content: "halted" };
    });
    const server = await serve([
      adapter.answer(
        [],
        [
          { id: "call_1", name: "bash", input: { command: "rm -rf /" } },
          { id: "call_2", name: "teleport", input: {} },
          { id: "call_3", name: "ls", input: {} },
        ],
      ),
      adapter.answer(
        [],
        [
          { id: "call_4", name: "explode", input: {} },
          { id: "call_5", name: "ls", input: {} },
        ],
      ),
      adapter.answer(
        [],
        [
          { id: "call_6", name: "halt", input: {} },
          { id: "call_7", name: "ls", input: {} },
        ],
      ),
      adapter.answer(["all good"]),
    ]);
    const history: Message[] = [...request.messages];
    const options = {
      client: adapter.client(server),
      tools: [...createWorkspaceTools(await tempDir()), explode, halt],
      system: "",
      beforeToolCall: denyBashByDefault,
      onEvent: (event: AgentEvent) =>
        void (event.type === "message" && history.push(event.message)),
    };
    await expect(runAgent({ ...options, messages: [...history] })).rejects.toThrow(
      "top-secret-token",
    );
    history.push({ role: "user", content: "try again" });
    expect(
      (await runAgent({ ...options, messages: [...history], signal: controller.signal })).status,
    ).toBe("aborted");
    history.push({ role: "user", content: "go on" });
    expect((await runAgent({ ...options, messages: [...history] })).text).toBe("all good");

    expect(server.rejections).toEqual([]);
    expect(adapter.results(server.requests[3]?.body ?? {})).toEqual([
      [
        "call_1",
        adapter.asError(
          "bash is denied by default: run mini-agent with --allow-bash to let the agent run shell commands",
        ),
      ],
      ["call_2", adapter.asError("unknown tool: teleport")],
      ["call_3", "(empty folder)"],
      ["call_4", adapter.asError("tool execution failed")],
      ["call_5", adapter.asError("not executed after an earlier failure")],
      ["call_6", "halted"],
      ["call_7", adapter.asError("aborted before execution")],
    ]);
    expect(JSON.stringify(server.requests.map((r) => r.body))).not.toContain("top-secret-token");
  });
});
