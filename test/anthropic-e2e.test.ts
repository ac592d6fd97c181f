import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgent } from "../src/agent.js";
import { denyBashByDefault } from "../src/approval.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { toAnthropicMessages } from "../src/providers/anthropic-protocol.js";
import { receipts } from "../src/receipts.js";
import {
  type AnthropicServer,
  type ReplyScript,
  startAnthropicServer,
  status,
  stream,
  turn,
} from "../src/testing/anthropic-server.js";
import { postRaw } from "../src/testing/sse-server.js";
import { createWorkspaceTools } from "../src/tools/index.js";
import type { Message } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const track = useCleanup();
const serve = async (script: ReplyScript[]) => track(await startAnthropicServer(script));

function clientFor(
  server: AnthropicServer,
  options: { maxRetries?: number; idleTimeout?: number } = {},
) {
  return new AnthropicModelClient({
    apiKey: "test-key-not-real",
    model: "local-model",
    baseURL: server.url,
    maxRetries: options.maxRetries ?? 2,
    ...(options.idleTimeout !== undefined && { idleTimeout: options.idleTimeout }),
  });
}

const user: Message = { role: "user", content: "What does notes.txt say?" };
const committedOf = (events: AgentEvent[]) =>
  events.flatMap((event) => (event.type === "message" ? [event.message] : []));

describe("runAgent with the Anthropic SDK against a local Messages API", () => {
  it("runs a two-round task with cache breakpoints in every request", async () => {
    const root = await tempDir();
    await writeFile(join(root, "notes.txt"), "buy milk\n");
    const server = await serve([
      stream(
        turn({
          text: ["Let me look."],
          calls: [{ id: "toolu_1", name: "read", input: { path: "notes.txt" } }],
        }),
      ),
      stream(turn({ text: ["It says: buy ", "milk."] })),
    ]);
    const result = await runAgent({
      client: clientFor(server),
      tools: createWorkspaceTools(root),
      system: "You are a coding agent.",
      messages: [user],
      beforeToolCall: denyBashByDefault,
    });
    expect(result.status).toBe("completed");
    expect(result.text).toBe("It says: buy milk.");
    expect(server.rejections).toEqual([]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.headers.authorization).toBe("Bearer test-key-not-real");
    const second = server.requests[1]?.body;
    expect(second?.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "What does notes.txt say?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me look." },
          { type: "tool_use", id: "toolu_1", name: "read", input: { path: "notes.txt" } },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: "buy milk",
            is_error: false,
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);
    for (const { body } of server.requests) {
      expect(body.system).toEqual([
        { type: "text", text: "You are a coding agent.", cache_control: { type: "ephemeral" } },
      ]);
      const tools = body.tools as Record<string, unknown>[];
      expect(tools.map((tool) => tool.name)).toEqual([
        "read",
        "ls",
        "find",
        "grep",
        "write",
        "edit",
        "bash",
      ]);
      expect(tools.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
      expect(tools.slice(0, -1).every((tool) => tool.cache_control === undefined)).toBe(true);
      expect(body.stream).toBe(true);
    }
  });

  it("retries a 529 before the first event, honouring retry-after, without duplicating text", async () => {
    const server = await serve([status(529, 1), stream(turn({ text: ["once"] }))]);
    const texts: string[] = [];
    const started = Date.now();
    const result = await runAgent({
      client: clientFor(server),
      tools: [],
      system: "",
      messages: [user],
      onEvent: (event) => void (event.type === "text" && texts.push(event.text)),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(server.requests).toHaveLength(2);
    expect(texts).toEqual(["once"]);
    expect(result.text).toBe("once");
  });

  it("retries a 429 and then gives up with the status when retries run out", async () => {
    const server = await serve([status(429, 0.05), status(429, 0.05), status(429, 0.05)]);
    const error = await runAgent({
      client: clientFor(server, { maxRetries: 2 }),
      tools: [],
      system: "",
      messages: [user],
    }).catch((caught: unknown) => caught);
    expect(server.requests).toHaveLength(3);
    expect(error).toMatchObject({ status: 429 });
  });

  it("throws a mid-stream error event as a ProviderError, without retrying, committing nothing", async () => {
    const server = await serve([
      stream(turn({ text: ["half"], calls: [{ id: "toolu_1", name: "ls", input: {} }] }), {
        errorAfter: 5,
      }),
    ]);
    const events: AgentEvent[] = [];
    const error = await runAgent({
      client: clientFor(server),
      tools: createWorkspaceTools(await tempDir()),
      system: "",
      messages: [user],
      onEvent: (event) => void events.push(event),
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: "ProviderError",
      type: "overloaded_error",
      message: "Overloaded",
    });
    expect(server.requests).toHaveLength(1);
    expect(committedOf(events)).toEqual([]);
  });

  it("propagates a connection dropped mid-stream and commits nothing", async () => {
    const server = await serve([stream(turn({ text: ["a", "b", "c"] }), { dropAfter: 5 })]);
    const events: AgentEvent[] = [];
    const texts: string[] = [];
    await expect(
      runAgent({
        client: clientFor(server),
        tools: [],
        system: "",
        messages: [user],
        onEvent: (event) => {
          events.push(event);
          if (event.type === "text") texts.push(event.text);
        },
      }),
    ).rejects.toThrow();
    expect(texts).toEqual(["a", "b"]);
    expect(server.requests).toHaveLength(1);
    expect(committedOf(events)).toEqual([]);
  });

  it("returns aborted when the signal fires mid-stream", async () => {
    const server = await serve([
      stream(turn({ text: ["a", "b", "c", "d", "e", "f"] }), { frameDelayMs: 60 }),
    ]);
    const controller = new AbortController();
    const events: AgentEvent[] = [];
    const running = runAgent({
      client: clientFor(server),
      tools: [],
      system: "",
      messages: [user],
      signal: controller.signal,
      onEvent: (event) => {
        events.push(event);
        if (event.type === "text") controller.abort();
      },
    });
    expect(await running).toEqual({ status: "aborted", text: "", messages: [user] });
    expect(committedOf(events)).toEqual([]);
  });

  it("fails a stalled stream within the idle limit", async () => {
    const server = await serve([stream(turn({ text: ["a", "b"] }), { stallAfter: 4 })]);
    await expect(
      runAgent({
        client: clientFor(server, { idleTimeout: 300 }),
        tools: [],
        system: "",
        messages: [user],
      }),
    ).rejects.toThrow("the model stream stalled: no event for 0.3 s");
  });

  it("sends a call left without a result with an outcome-unknown receipt, which the strict server takes (sent raw, it refuses it)", async () => {
    const server = await serve([stream(turn({ text: ["fine"] }))]);
    const dangling: Message[] = [
      user,
      { role: "assistant", content: "", toolCalls: [{ id: "toolu_9", name: "ls", input: {} }] },
      { role: "user", content: "hello?" },
    ];
    const result = await runAgent({
      client: clientFor(server),
      tools: [],
      system: "",
      messages: dangling,
    });
    expect(result.text).toBe("fine");
    expect(server.rejections).toEqual([]);
    expect(server.requests[0]?.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "What does notes.txt say?" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_9", name: "ls", input: {} }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_9",
            content: receipts.outcomeUnknown,
            is_error: true,
          },
          { type: "text", text: "hello?", cache_control: { type: "ephemeral" } },
        ],
      },
    ]);

    const raw = await post(server, {
      model: "local-model",
      max_tokens: 10,
      messages: toAnthropicMessages(dangling),
    });
    expect(raw.status).toBe(400);
    expect(server.rejections).toEqual([
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_9. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ]);
  });
});

const post = (server: AnthropicServer, body: unknown) =>
  postRaw(`${server.url}/v1/messages`, JSON.stringify(body), { "x-api-key": "test-key" });

describe("the local Messages API is as strict as the real one", () => {
  const request = (content: string) => ({
    model: "local-model",
    max_tokens: 10,
    messages: [{ role: "user", content }],
  });

  it("refuses a lone surrogate with the API's JSON error, and takes a pair or an escaped backslash", async () => {
    const server = await serve([stream(turn({ text: ["ok"] })), stream(turn({ text: ["ok"] }))]);
    const high = await post(server, request("ab\ud83dcd"));
    const low = await post(server, request("ab\ude00"));
    expect([high.status, low.status]).toEqual([400, 400]);
    expect(JSON.parse(high.text)).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message:
          "The request body is not valid JSON: no low surrogate in string: line 1 column 80 (char 79)",
      },
      request_id: "req_local",
    });
    expect(server.rejections).toEqual([
      "The request body is not valid JSON: no low surrogate in string: line 1 column 80 (char 79)",
      "The request body is not valid JSON: invalid high surrogate in string: line 1 column 80 (char 79)",
    ]);
    expect((await post(server, request("ab\ud83d\ude00cd"))).status).toBe(200);
    expect((await post(server, request("a backslash then text: \\ud83d"))).status).toBe(200);
    expect(server.rejections).toHaveLength(2);
  });

  it("refuses a tool_use id outside the pattern and an id used twice", async () => {
    const server = await serve([]);
    const history = (ids: string[]) => ({
      model: "local-model",
      max_tokens: 10,
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: ids.map((id) => ({ type: "tool_use", id, name: "ls", input: {} })),
        },
        {
          role: "user",
          content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: "x" })),
        },
      ],
    });
    expect((await post(server, history(["toolu 1"]))).status).toBe(400);
    expect((await post(server, history(["toolu_1", "toolu_1"]))).status).toBe(400);
    expect(server.rejections).toEqual([
      "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
      "messages.1.content.1: `tool_use` ids must be unique",
    ]);
  });
});
