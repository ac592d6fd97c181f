import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgent } from "../src/agent.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import { Session } from "../src/session/session.js";
import * as anthropic from "../src/testing/anthropic-server.js";
import * as openai from "../src/testing/openai-server.js";
import type { Body, Reply, ScriptedServer } from "../src/testing/sse-server.js";
import type { Message, ModelClient, Reasoning } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { useTempDirs } from "./support/temp.js";
import { scriptedTool } from "./support/tools.js";

/**
 * Reasoning models through both adapters, against the strict local servers: the model's thinking
 * streams as `thinking` events, is kept in the round's message (a signature byte for byte), is
 * sent back as each protocol requires in a tool loop, survives the session file, and a round cut
 * off while thinking commits nothing.
 */

/** One adapter under the thinking contract, and how each scenario is said in its protocol. */
interface ThinkingAdapter {
  name: string;
  start(script: Reply[]): Promise<ScriptedServer>;
  client(server: ScriptedServer): ModelClient;
  /** A round that thinks (in pieces), then says `text` and makes `calls`. */
  round(thinking: string[], text: string[], calls?: anthropic.ScriptedCall[]): Reply;
  /** A round stopped by the output limit while it was still thinking. */
  cutWhileThinking(thinking: string[]): Reply;
  /** The part the adapter keeps for a round that thought `text`. */
  kept(text: string): Reasoning;
  /** What each assistant message of a request carried back of its reasoning. */
  sentBack(body: Body): unknown[];
  /** What an assistant message that thought `text` carries back. */
  back(text: string): unknown;
}

const adapters: ThinkingAdapter[] = [
  {
    name: "Anthropic Messages",
    start: (script) => anthropic.startAnthropicServer(script),
    client: (server) =>
      new AnthropicModelClient({
        apiKey: "test-key",
        model: "claude-sonnet-4-5-local",
        baseURL: server.url,
        thinking: "medium",
      }),
    round: (thinking, text, calls) =>
      anthropic.stream(anthropic.turn({ thinking: [thinking], text, ...(calls && { calls }) })),
    cutWhileThinking: (thinking) => {
      const frames = anthropic.turn({ thinking: [thinking], stopReason: "max_tokens" });
      // The limit hits inside the thinking block: no signature, no stop for it.
      const cut = frames.filter(
        (f) => !["signature_delta", "content_block_stop"].includes(String(deltaType(f))),
      );
      return anthropic.stream(cut);
    },
    kept: (text) => ({
      type: "thinking",
      text,
      signature: anthropic.thinkingSignature(text),
      at: { text: 0, calls: 0 },
    }),
    sentBack: (body) =>
      assistantMessages(body).map((m) =>
        (m.content as Record<string, unknown>[]).filter((b) => String(b.type).includes("thinking")),
      ),
    back: (text) => [
      { type: "thinking", thinking: text, signature: anthropic.thinkingSignature(text) },
    ],
  },
  {
    name: "OpenAI Chat Completions",
    start: (script) => openai.startOpenAIServer(script, { reasoningBack: "required" }),
    client: (server) =>
      new OpenAIModelClient({
        baseURL: `${server.url}/v1`,
        model: "local-model",
        thinking: "medium",
      }),
    round: (reasoning, text, calls) =>
      openai.stream(openai.completion({ reasoning, text, ...(calls && { calls }) })),
    cutWhileThinking: (reasoning) =>
      openai.stream(openai.completion({ reasoning, finishReason: "length" })),
    kept: (text) => ({ type: "thinking", text, at: { text: 0, calls: 0 } }),
    sentBack: (body) => assistantMessages(body).map((m) => m.reasoning_content),
    back: (text) => text,
  },
];

/** The `type` of a frame's delta or block, or of the frame itself. */
function deltaType(frame: anthropic.Frame): unknown {
  const data = frame.data as { type?: string; delta?: { type?: string } };
  return data.delta?.type ?? data.type;
}

function assistantMessages(body: Body): Record<string, unknown>[] {
  return ((body.messages ?? []) as Record<string, unknown>[]).filter((m) => m.role === "assistant");
}

const tempDir = useTempDirs();
const track = useCleanup();
const user: Message = { role: "user", content: "What is in this folder?" };
const ls = scriptedTool("ls", async () => ({ content: "a.txt" }));
const lsCall = { id: "call_1", name: "ls", input: {} };

async function run(client: ModelClient, messages: Message[]) {
  const events: AgentEvent[] = [];
  const result = await runAgent({
    client,
    tools: [ls],
    system: "sys",
    messages,
    onEvent: (event) => void events.push(event),
  });
  return { result, events };
}

describe.each(adapters)("thinking contract: $name", (adapter) => {
  const serve = async (script: Reply[]) => track(await adapter.start(script));

  it("streams thinking, keeps it in the round and sends it back in the tool loop", async () => {
    const server = await serve([
      adapter.round(["I should ", "list it."], ["Listing."], [lsCall]),
      adapter.round(["One file."], ["It holds a.txt."]),
    ]);
    const { result, events } = await run(adapter.client(server), [user]);

    expect(server.rejections).toEqual([]);
    expect(result.text).toBe("It holds a.txt.");
    expect(events.filter((e) => e.type === "thinking" || e.type === "text")).toEqual([
      { type: "thinking", text: "I should " },
      { type: "thinking", text: "list it." },
      { type: "text", text: "Listing." },
      { type: "thinking", text: "One file." },
      { type: "text", text: "It holds a.txt." },
    ]);
    expect(result.messages).toEqual([
      user,
      {
        role: "assistant",
        content: "Listing.",
        toolCalls: [lsCall],
        reasoning: [adapter.kept("I should list it.")],
      },
      { role: "tool", toolCallId: "call_1", content: "a.txt", isError: false },
      {
        role: "assistant",
        content: "It holds a.txt.",
        toolCalls: [],
        reasoning: [adapter.kept("One file.")],
      },
    ]);
    expect(adapter.sentBack(server.requests[1]?.body ?? {})).toEqual([
      adapter.back("I should list it."),
    ]);
  });

  it("fails a round cut off while thinking and commits nothing of it", async () => {
    const server = await serve([adapter.cutWhileThinking(["Let me think about ", "this"])]);
    const events: AgentEvent[] = [];
    const error = await runAgent({
      client: adapter.client(server),
      tools: [ls],
      system: "sys",
      messages: [user],
      onEvent: (event) => void events.push(event),
    }).catch((caught: Error) => caught.message);
    expect(error).toMatch(
      /^the model reached its output token limit \(.*\) before finishing; raise the limit or ask for less; it was cut off while thinking$/,
    );
    expect(events).toEqual([
      { type: "thinking", text: "Let me think about " },
      { type: "thinking", text: "this" },
    ]);
  });

  it("resumes a history with thinking from the session file, the signature byte for byte", async () => {
    const server = await serve([
      adapter.round(["Plan: list. ☃ \\u00e9 ", "🙂"], [], [lsCall]),
      adapter.round(["Done."], ["Resumed."]),
    ]);
    const dir = await tempDir();
    const session = await Session.create({ dir, workspace: "/ws", model: "m", env: {} });
    await session.append(user);
    const halt = new AbortController();
    // The run is cut right after the round is written, before the call's result: a crash.
    await runAgent({
      client: adapter.client(server),
      tools: [ls],
      system: "sys",
      messages: [user],
      signal: halt.signal,
      onEvent: async (event) => {
        if (event.type !== "message") return;
        await session.append(event.message);
        halt.abort();
      },
    });
    await session.close();

    const loaded = await Session.open(session.path, { env: {} });
    await loaded.session.close();
    const round = loaded.messages[1];
    expect(round).toEqual({
      role: "assistant",
      content: "",
      toolCalls: [lsCall],
      reasoning: [adapter.kept("Plan: list. ☃ \\u00e9 🙂")],
    });
    const { result } = await run(adapter.client(server), [
      ...loaded.messages,
      { role: "user", content: "go on" },
    ]);
    expect(result.text).toBe("Resumed.");
    expect(server.rejections).toEqual([]);
    expect(adapter.sentBack(server.requests[1]?.body ?? {})).toEqual([
      adapter.back("Plan: list. ☃ \\u00e9 🙂"),
    ]);
  });
});
