import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import {
  AnthropicModelClient,
  type Message,
  OpenAIResponsesModelClient,
  runAgent,
  Session,
  type Tool,
} from "mini-agent";
import {
  anthropicStream,
  anthropicTurn,
  assertValidHistory,
  done,
  FakeClient,
  replaySession,
  responsesResponse,
  responsesStatus,
  responsesStream,
  startAnthropicServer,
  startResponsesServer,
  text,
} from "mini-agent/testing";
import { describe, expect, it } from "vitest";
import { useCleanup } from "./support/cleanup.js";
import { useTempDirs } from "./support/temp.js";

// Everything here comes from the built package, through its exports map.
const tempDir = useTempDirs();
const track = useCleanup();

const lookup: Tool = {
  spec: { name: "lookup", description: "looks up", inputSchema: { type: "object" } },
  execute: async (input) => ({ content: `found ${JSON.stringify(input)}` }),
};

describe("the testing kit, from the built package", () => {
  it("assertValidHistory passes a valid history and names what is wrong with another", () => {
    const asked: Message[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "lookup", input: {} }] },
    ];
    const answer: Message = { role: "tool", toolCallId: "c1", content: "ok", isError: false };
    expect(() => assertValidHistory([...asked, answer])).not.toThrow();
    expect(() => assertValidHistory(asked)).toThrow("invalid history: the calls c1 have no result");
    expect(() => assertValidHistory([...asked, answer, answer])).toThrow(
      "invalid history: message 3 answers c1, which is not an open call",
    );
  });

  it("replays a recorded session's rounds, skipping a torn line, and fails loudly past its end", async () => {
    const dir = await tempDir();
    const session = await Session.create({ dir, workspace: dir, model: "m", id: "s1", env: {} });
    const recorded: Message[] = [
      { role: "user", content: "find x" },
      {
        role: "assistant",
        content: "Looking.",
        toolCalls: [{ id: "c1", name: "lookup", input: { q: "x" } }],
      },
      { role: "tool", toolCallId: "c1", content: "found x", isError: false },
      { role: "assistant", content: "x is here.", toolCalls: [] },
    ];
    for (const message of recorded) await session.append(message);
    await session.close();
    await appendFile(join(dir, "s1.jsonl"), '{"type":"message","message":{"role":"assis');

    const replay = await replaySession(join(dir, "s1.jsonl"));
    const result = await runAgent({
      client: replay,
      tools: [lookup],
      system: "",
      messages: [{ role: "user", content: "find x again" }],
    });
    expect(result.messages.slice(1)).toEqual([
      recorded[1],
      { role: "tool", toolCallId: "c1", content: 'found {"q":"x"}', isError: false },
      recorded[3],
    ]);
    expect(replay.requests).toHaveLength(2);
    const more = runAgent({
      client: replay,
      tools: [],
      system: "",
      messages: [recorded[0] as Message],
    });
    await expect(more).rejects.toThrow("fake client: no scripted round 3");
  });

  it("the scripted client records each request and the strict server answers the real adapter", async () => {
    const fake = new FakeClient([[text("hi"), done]]);
    await runAgent({
      client: fake,
      tools: [],
      system: "s",
      messages: [{ role: "user", content: "a" }],
    });
    expect(fake.requests).toEqual([
      { system: "s", messages: [{ role: "user", content: "a" }], tools: [] },
    ]);

    const server = track(
      await startAnthropicServer([anthropicStream(anthropicTurn({ text: ["Hello."] }))]),
    );
    const client = new AnthropicModelClient({
      apiKey: "k",
      model: "local-model",
      baseURL: server.url,
    });
    const answer = await runAgent({
      client,
      tools: [],
      system: "",
      messages: [{ role: "user", content: "a" }],
    });
    expect(answer.text).toBe("Hello.");
    expect(server.requests).toHaveLength(1);
    expect(server.rejections).toEqual([]);
  });

  it("the strict Responses server answers the Responses adapter, through a tool loop and a refusal", async () => {
    const server = track(
      await startResponsesServer([
        responsesStream(
          responsesResponse({
            reasoning: ["Look it up."],
            calls: [{ id: "call_1", name: "lookup", input: { q: "x" } }],
          }),
        ),
        responsesStream(responsesResponse({ text: ["Found."] })),
        responsesStatus(429, "Rate limit reached"),
      ]),
    );
    const client = new OpenAIResponsesModelClient({
      model: "local-model",
      baseURL: `${server.url}/v1`,
      maxRetries: 0,
    });
    const messages: Message[] = [{ role: "user", content: "a" }];
    const answer = await runAgent({ client, tools: [lookup], system: "", messages });
    expect(answer.text).toBe("Found.");
    expect(server.rejections).toEqual([]);
    const input = (server.requests[1]?.body.input ?? []) as { type: string }[];
    const types = input.map((item) => item.type);
    expect(types).toEqual(["message", "reasoning", "function_call", "function_call_output"]);
    await expect(runAgent({ client, tools: [], system: "", messages })).rejects.toThrow(
      "429 Rate limit reached",
    );
  });
});
