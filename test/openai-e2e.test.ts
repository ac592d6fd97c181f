import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgent } from "../src/agent.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import { toOpenAIMessages } from "../src/providers/openai-protocol.js";
import { receipts } from "../src/receipts.js";
import {
  completion,
  notJson,
  type OpenAIServer,
  type Quirks,
  startOpenAIServer,
  stream,
} from "../src/testing/openai-server.js";
import { postRaw, type ReplyScript } from "../src/testing/sse-server.js";
import { createWorkspaceTools } from "../src/tools/index.js";
import type { Message } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const track = useCleanup();
const serve = async (script: ReplyScript[]) => track(await startOpenAIServer(script));

const clientFor = (server: OpenAIServer) =>
  new OpenAIModelClient({ baseURL: `${server.url}/v1`, model: "local-model", maxRetries: 0 });
const user: Message = { role: "user", content: "read both notes" };

describe("runAgent with the OpenAI SDK against a local Chat Completions server", () => {
  it.each<[string, Quirks]>([
    ["OpenAI", {}],
    ["Ollama", { wholeArguments: true, stopWithCalls: true, noDone: true }],
    ["llama.cpp", { noIds: true, reuseIndexZero: true }],
    ["vLLM", { argumentsAsObject: true }],
  ])("runs a two-round task as %s streams it", async (_name, quirks) => {
    const root = await tempDir();
    await writeFile(join(root, "a.txt"), "alpha\n");
    await writeFile(join(root, "b.txt"), "beta\n");
    const server = await serve([
      stream(
        completion({
          calls: [
            { id: "call_a", name: "read", input: { path: "a.txt" } },
            { id: "call_b", name: "read", input: { path: "b.txt" } },
          ],
          quirks,
        }),
      ),
      stream(completion({ text: ["alpha and beta"], quirks })),
    ]);
    const result = await runAgent({
      client: clientFor(server),
      tools: createWorkspaceTools(root),
      system: "sys",
      messages: [user],
    });
    expect(result.text).toBe("alpha and beta");
    expect(server.rejections).toEqual([]);
    const sent = server.requests[1]?.body.messages as Record<string, unknown>[];
    expect(sent.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "tool",
    ]);
    const calls = (sent[2]?.tool_calls ?? []) as { id: string; function: { arguments: string } }[];
    expect(calls.map((c) => c.function.arguments)).toEqual([
      '{"path":"a.txt"}',
      '{"path":"b.txt"}',
    ]);
    expect(sent.slice(3).map((message) => [message.tool_call_id, message.content])).toEqual([
      [calls[0]?.id, "alpha"],
      [calls[1]?.id, "beta"],
    ]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  });

  it.each([
    ["vLLM's", "vllm" as const, "ServiceUnavailableError", "The model is overloaded"],
    [
      "OpenAI's",
      "openai" as const,
      "server_error",
      "The server had an error while processing your request",
    ],
  ])(
    "throws %s in-band error as a ProviderError and commits nothing",
    async (_name, errorShape, type, message) => {
      const server = await serve([
        stream(completion({ text: ["a", "b", "c"] }), { errorAfter: 2, errorShape }),
      ]);
      const events: AgentEvent[] = [];
      const error = await runAgent({
        client: clientFor(server),
        tools: [],
        system: "",
        messages: [user],
        onEvent: (e) => void events.push(e),
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Error);
      expect(error).toMatchObject({ name: "ProviderError", type, message });
      expect(events.filter((event) => event.type === "message")).toEqual([]);
    },
  );

  it("sends a call left without a response with an outcome-unknown receipt, which the strict server takes (sent raw, it refuses it)", async () => {
    const server = await serve([stream(completion({ text: ["fine"] }))]);
    const dangling: Message[] = [
      user,
      { role: "assistant", content: "", toolCalls: [{ id: "call_9", name: "ls", input: {} }] },
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
      { role: "user", content: "read both notes" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_9", type: "function", function: { name: "ls", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_9", content: `Error: ${receipts.outcomeUnknown}` },
      { role: "user", content: "hello?" },
    ]);

    const raw = await post(server, {
      model: "local-model",
      messages: toOpenAIMessages("", dangling),
    });
    expect(raw.status).toBe(400);
    expect(server.rejections).toEqual([
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_9",
    ]);
  });
});

const post = (server: OpenAIServer, body: unknown) =>
  postRaw(`${server.url}/v1/chat/completions`, JSON.stringify(body));

describe("the local Chat Completions server is as strict as OpenAI", () => {
  const request = (content: string) => ({
    model: "local-model",
    messages: [{ role: "user", content }],
  });

  it("refuses a lone surrogate with OpenAI's JSON error, and takes a pair", async () => {
    const server = await serve([stream(completion({ text: ["ok"] }))]);
    const high = await post(server, request("ab\ud83dcd"));
    const low = await post(server, request("ab\ude00"));
    expect([high.status, low.status]).toEqual([400, 400]);
    expect(JSON.parse(low.text)).toEqual({
      error: { message: notJson, type: "invalid_request_error", param: null, code: null },
    });
    expect((await post(server, request("ab\ud83d\ude00cd"))).status).toBe(200);
    expect(server.rejections).toEqual([notJson, notJson]);
  });

  it("refuses a tool call id longer than 40 characters", async () => {
    const server = await serve([]);
    const id = `call_${"x".repeat(36)}`;
    const messages: Message[] = [
      user,
      { role: "assistant", content: "", toolCalls: [{ id, name: "ls", input: {} }] },
      { role: "tool", toolCallId: id, content: "x", isError: false },
    ];
    expect(
      (await post(server, { model: "m", messages: toOpenAIMessages("", messages) })).status,
    ).toBe(400);
    expect(server.rejections).toEqual([
      "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 41 instead.",
    ]);
  });
});
