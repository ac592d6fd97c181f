import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgent } from "../src/agent.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import { createWorkspaceTools } from "../src/tools/index.js";
import type { Message } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import {
  completion,
  type OpenAIServer,
  type Quirks,
  startOpenAIServer,
  stream,
} from "./support/openai-server.js";
import type { ReplyScript } from "./support/sse-server.js";
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

  it("throws a vLLM-style in-band error and commits nothing", async () => {
    const server = await serve([
      stream(completion({ text: ["a", "b", "c"] }), { errorAfter: 2, errorShape: "vllm" }),
    ]);
    const events: AgentEvent[] = [];
    await expect(
      runAgent({
        client: clientFor(server),
        tools: [],
        system: "",
        messages: [user],
        onEvent: (e) => void events.push(e),
      }),
    ).rejects.toThrow("the model stream failed: The model is overloaded");
    expect(events.filter((event) => event.type === "message")).toEqual([]);
  });

  it("is answered 400 with OpenAI's text for a call left without a response", async () => {
    const server = await serve([stream(completion({ text: ["unreachable"] }))]);
    const dangling: Message[] = [
      user,
      { role: "assistant", content: "", toolCalls: [{ id: "call_9", name: "ls", input: {} }] },
      { role: "user", content: "hello?" },
    ];
    await expect(
      runAgent({ client: clientFor(server), tools: [], system: "", messages: dangling }),
    ).rejects.toMatchObject({
      status: 400,
    });
    expect(server.rejections).toEqual([
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_9",
    ]);
  });
});
