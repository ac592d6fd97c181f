import { afterEach, describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import type { ModelClient, ModelEvent } from "../src/types.js";
import * as anthropic from "./support/anthropic-server.js";
import * as openai from "./support/openai-server.js";
import type { Reply, ReplyScript, ScriptedServer, StreamFaults } from "./support/sse-server.js";

/** One adapter under the shared contract: its local server and how each scenario is said in its protocol. */
interface Adapter {
  name: string;
  start(script: ReplyScript[]): Promise<ScriptedServer>;
  client(server: ScriptedServer, idleTimeout?: number): ModelClient;
  answer(text: string[], calls?: anthropic.ScriptedCall[], faults?: StreamFaults): Reply;
  truncated(text: string[], calls: anthropic.ScriptedCall[]): Reply;
  incomplete(text: string[]): Reply;
}

const adapters: Adapter[] = [
  {
    name: "Anthropic Messages",
    start: anthropic.startAnthropicServer,
    client: (server, idleTimeout) =>
      new AnthropicModelClient({
        apiKey: "test-key",
        model: "local-model",
        baseURL: server.url,
        ...(idleTimeout !== undefined && { idleTimeout }),
      }),
    answer: (text, calls, faults) =>
      anthropic.stream(anthropic.turn({ text, ...(calls && { calls }) }), faults),
    truncated: (text, calls) =>
      anthropic.stream(anthropic.turn({ text, calls, stopReason: "max_tokens" })),
    incomplete: (text) => anthropic.stream(anthropic.turn({ text }).slice(0, -1)),
  },
  {
    name: "OpenAI Chat Completions",
    start: openai.startOpenAIServer,
    client: (server, idleTimeout) =>
      new OpenAIModelClient({
        baseURL: `${server.url}/v1`,
        model: "local-model",
        ...(idleTimeout !== undefined && { idleTimeout }),
      }),
    answer: (text, calls, faults) =>
      openai.stream(openai.completion({ text, ...(calls && { calls }) }), faults),
    truncated: (text, calls) =>
      openai.stream(openai.completion({ text, calls, finishReason: "length" })),
    incomplete: (text) => openai.stream(openai.completion({ text, finishReason: null })),
  },
];

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

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

describe.each(adapters)("ModelClient contract: $name", (adapter) => {
  async function serve(script: ReplyScript[]) {
    const server = await adapter.start(script);
    servers.push(server);
    return server;
  }

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
    expect(error).toMatch(/^the model stream ended (before message_stop|without a finish_reason)$/);
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
});
