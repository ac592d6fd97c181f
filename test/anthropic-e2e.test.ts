import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgent } from "../src/agent.js";
import { denyBashByDefault } from "../src/approval.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { createWorkspaceTools } from "../src/tools/index.js";
import type { Message } from "../src/types.js";
import {
  type AnthropicServer,
  type ReplyScript,
  startAnthropicServer,
  status,
  stream,
  turn,
} from "./support/anthropic-server.js";
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

  it("propagates a mid-stream error event without retrying and commits nothing", async () => {
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
    expect(String((error as Error).message)).toContain("overloaded_error");
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

  it("is answered 400 with the real error text for a call left without a result", async () => {
    const server = await serve([stream(turn({ text: ["unreachable"] }))]);
    const dangling: Message[] = [
      user,
      { role: "assistant", content: "", toolCalls: [{ id: "toolu_9", name: "ls", input: {} }] },
      { role: "user", content: "hello?" },
    ];
    const error = await runAgent({
      client: clientFor(server),
      tools: [],
      system: "",
      messages: dangling,
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400 });
    expect(server.rejections).toEqual([
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_9. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ]);
  });
});
