import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { CompactingClient } from "../src/compaction/client.js";
import type { Compaction, Facts } from "../src/compaction/record.js";
import { summaryPrompt } from "../src/compaction/summary.js";
import { capped, compactionMessage } from "../src/compaction/view.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import { readSession, Session } from "../src/session/session.js";
import { bodyTokens, startAnthropicServer, stream, turn } from "../src/testing/anthropic-server.js";
import {
  completion,
  stream as openaiStream,
  startOpenAIServer,
} from "../src/testing/openai-server.js";
import type { Body } from "../src/testing/sse-server.js";
import type { Message, Tool } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A long session through the real adapter and the strict local server, whose context window is
 * small: 10 tasks of 21 model rounds each. Every request must be valid, a refusal for length must
 * be followed by one compaction and one retry, and each compacted request must carry the system
 * prompt, every user message and the facts of everything it covers.
 */

const tempDir = useTempDirs();
const track = useCleanup();

const serverLimit = 12_000;
const system = "SYSTEM PROMPT: you are mini-agent under test; the project says: keep tests green.";
const summary =
  "## Goal\nthe tasks\n## Decisions\nnone\n## Done\nrounds\n## In progress\nmore\n## Next\ngo on";

/** What round `r` of the whole session asks for; every fifth round is the same kind. */
function callFor(r: number): { name: string; input: Record<string, unknown> } {
  switch (r % 5) {
    case 0:
      return { name: "read", input: { path: `src/f${r}.ts` } };
    case 1:
      return { name: "bash", input: { command: `make step${r}` } };
    case 2:
      return { name: "write", input: { path: `out/o${r}.txt`, content: `o${r}` } };
    case 3:
      return { name: "read", input: { path: "missing.txt" } };
    default:
      return { name: "bash", input: { command: `rm -rf /tmp/x${r}` } };
  }
}

const tool = (
  name: string,
  run: (input: Record<string, unknown>) => { content: string; isError?: boolean },
): Tool => ({
  spec: { name, description: name, inputSchema: { type: "object" } },
  execute: async (input) => run(input as Record<string, unknown>),
});
const tools = [
  tool("read", ({ path }) =>
    path === "missing.txt"
      ? { content: "file not found: missing.txt", isError: true }
      : { content: `contents of ${String(path)}\n${"line of code\n".repeat(400)}` },
  ),
  tool("bash", ({ command }) => {
    const code = Number(String(command).replace(/\D/g, "")) % 3;
    return { content: `ran ${String(command)}\n[exit code ${code}]`, isError: code !== 0 };
  }),
  tool("write", ({ path }) => ({ content: `created ${String(path)} (2 bytes)` })),
];
const denyRm = (call: { name: string; input: Record<string, unknown> }) =>
  call.name === "bash" && String(call.input.command).startsWith("rm")
    ? { approved: false, reason: "rm is not allowed here" }
    : { approved: true };

/** The facts of `covered`, worked out from what the script did (not with the code under test). */
function expectedFacts(covered: Message[]): Facts {
  const calls = covered.flatMap((m) => (m.role === "assistant" ? m.toolCalls : []));
  const facts: Facts = { filesRead: [], filesChanged: [], commands: [], refused: [], omitted: 0 };
  for (const call of calls) {
    const { path, command } = call.input as { path?: string; command?: string };
    if (call.name === "read" && path === "missing.txt")
      facts.refused.push({ tool: "read", argument: path, reason: "file not found: missing.txt" });
    else if (call.name === "read") facts.filesRead.push(String(path));
    else if (call.name === "write") facts.filesChanged.push(String(path));
    else if (String(command).startsWith("rm"))
      facts.refused.push({
        tool: "bash",
        argument: String(command),
        reason: "rm is not allowed here",
      });
    else
      facts.commands.push({
        command: String(command),
        outcome: `exit ${Number(String(command).replace(/\D/g, "")) % 3}`,
      });
  }
  facts.omitted = Math.max(0, facts.refused.length - 50);
  facts.refused = facts.refused.slice(-50);
  return facts;
}

const systemText = (body: Body) =>
  typeof body.system === "string"
    ? body.system
    : ((body.system ?? []) as { text: string }[]).map((block) => block.text).join("");
const userTexts = (body: Body) =>
  (body.messages as { role: string; content: { type: string; text?: string }[] }[])
    .filter((message) => message.role === "user")
    .flatMap((message) =>
      message.content.filter((b) => b.type === "text").map((b) => b.text ?? ""),
    );

describe("a long session against a server with a small context window", () => {
  it("runs 210 rounds: every request valid, compacted in time, nothing of the user's lost", {
    timeout: 120_000,
  }, async () => {
    const userMessages: string[] = [];
    const problems: string[] = [];
    let round = 0;
    let client: CompactingClient | undefined;
    const dispatch = (body: Body) => {
      if (systemText(body) === summaryPrompt) return stream(turn({ text: [summary] }));
      if (systemText(body) !== system)
        problems.push(`request without the system prompt: ${systemText(body)}`);
      const seen = userTexts(body).join("\n");
      for (const message of userMessages)
        if (!seen.includes(message) && !seen.includes(capped(message)))
          problems.push(`request without the user message ${JSON.stringify(message.slice(0, 40))}`);
      const first = userTexts(body)[0] ?? "";
      if (first.startsWith("[This conversation was compacted")) {
        const expected = client?.current && compactionMessage(client.current).content;
        if (first !== expected)
          problems.push("a compacted request whose block is not the current compaction");
      }
      round++;
      if (round % 21 === 0) return stream(turn({ text: [`task done after round ${round}`] }));
      const { name, input } = callFor(round);
      return stream(turn({ calls: [{ id: `toolu_${round}`, name, input }] }));
    };
    const server = track(
      await startAnthropicServer(
        Array.from({ length: 2000 }, () => dispatch),
        { contextLimit: serverLimit },
      ),
    );
    const session = await Session.create({
      dir: await tempDir(),
      workspace: "/w",
      model: "m",
      env: {},
    });
    const records: Compaction[] = [];
    client = new CompactingClient(
      new AnthropicModelClient({
        apiKey: "k",
        model: "local-model",
        baseURL: server.url,
        maxRetries: 0,
      }),
      {
        contextWindow: 200_000,
        onCompaction: async (compaction) => {
          await session.record({ type: "compaction", ...compaction });
          records.push(compaction);
        },
      },
    );
    let history: Message[] = [];
    for (let task = 1; task <= 10; task++) {
      const content =
        task === 4
          ? `task ${task}: a long brief\n${"detail ".repeat(900)}\nend of the brief`
          : `task ${task}: keep going`;
      userMessages.push(content);
      const prompt: Message = { role: "user", content };
      await session.append(prompt);
      const result = await runAgent({
        client,
        tools,
        system,
        messages: [...history, prompt],
        beforeToolCall: denyRm,
        onEvent: (event) => (event.type === "message" ? session.append(event.message) : undefined),
      });
      expect(result.status).toBe("completed");
      history = result.messages;
    }
    await session.close();

    expect(round).toBe(210);
    expect(problems).toEqual([]);
    const refusals = server.rejections;
    expect(
      refusals.every((text) => /^prompt is too long: \d+ tokens > 12000 maximum$/.test(text)),
    ).toBe(true);
    // A refused request is followed by the summary request of one compaction, then its retry.
    const kinds = server.requests.map(({ body }) =>
      bodyTokens(body) > serverLimit
        ? "refused"
        : systemText(body) === summaryPrompt
          ? "summary"
          : "round",
    );
    for (const [i, kind] of kinds.entries())
      if (kind === "refused") expect(kinds.slice(i + 1, i + 3)).toEqual(["summary", "round"]);
    expect(refusals.length).toBeLessThanOrEqual(records.length);
    // The first refusal teaches the client the window; from then on it compacts in time.
    expect(refusals).toHaveLength(1);
    expect(records[0]?.trigger).toBe("overflow");
    expect(records.slice(1).every((record) => record.trigger === "size")).toBe(true);
    expect(records.length).toBeGreaterThanOrEqual(10);
    expect(records.map((r) => r.count)).toEqual(records.map((_, i) => i + 1));

    const ordinals = history.flatMap((m, i) => (m.role === "tool" ? [] : [i]));
    for (const record of records) {
      const cut = ordinals[record.firstKept] ?? history.length;
      const covered = history.slice(0, cut);
      expect(record.facts).toEqual(expectedFacts(covered));
      const users = covered.flatMap((m) => (m.role === "user" ? [capped(m.content)] : []));
      expect(record.userMessages).toEqual(users);
      expect(record.tokensAfter).toBeLessThan(record.tokensBefore);
    }

    const loaded = await readSession(session.path);
    const last = records.at(-1) as Compaction;
    expect(loaded.compaction).toEqual(last);
    expect(loaded.messages).toEqual(history.slice(ordinals[last.firstKept]));
  });
});

describe("the local servers' context limit", () => {
  const drain = async (client: { stream(r: never): AsyncIterable<unknown> }, request: unknown) => {
    for await (const _ of client.stream(request as never));
  };
  const big = (chars: number) => ({
    system: "s",
    messages: [{ role: "user" as const, content: "x".repeat(chars) }],
    tools: [],
  });

  it("Anthropic: refuses a request over it with the real error, reports the count under it", async () => {
    const server = track(
      await startAnthropicServer(
        [stream(turn({ text: ["fits"] })), stream(turn({ text: ["fits"] }))],
        {
          contextLimit: 1000,
        },
      ),
    );
    const client = new AnthropicModelClient({
      apiKey: "k",
      model: "m",
      baseURL: server.url,
      maxRetries: 0,
    });
    const error = await drain(client, big(5000)).catch((e: unknown) => e);
    const tokens = bodyTokens(server.requests[0]?.body ?? {});
    expect(tokens).toBeGreaterThan(1000);
    expect(error).toMatchObject({
      name: "ProviderError",
      status: 400,
      type: "invalid_request_error",
      providerMessage: `prompt is too long: ${tokens} tokens > 1000 maximum`,
      tooLong: { tokens, maximum: 1000 },
    });
    const events = [];
    for await (const event of client.stream(big(100))) events.push(event);
    expect(events.at(-1)).toEqual({
      type: "done",
      usage: { inputTokens: bodyTokens(server.requests[1]?.body ?? {}), outputTokens: 5 },
    });
  });

  it("OpenAI: refuses a request over it with context_length_exceeded, reports the count under it", async () => {
    const server = track(
      await startOpenAIServer(
        [
          openaiStream(completion({ text: ["fits"] })),
          openaiStream(completion({ text: ["fits"] })),
        ],
        {
          contextLimit: 1000,
        },
      ),
    );
    const client = new OpenAIModelClient({
      baseURL: `${server.url}/v1`,
      model: "m",
      maxRetries: 0,
    });
    const error = await drain(client, big(5000)).catch((e: unknown) => e);
    const tokens = bodyTokens(server.requests[0]?.body ?? {});
    expect(error).toMatchObject({
      name: "ProviderError",
      status: 400,
      code: "context_length_exceeded",
      tooLong: { tokens, maximum: 1000 },
    });
    const events = [];
    for await (const event of client.stream(big(100))) events.push(event);
    expect(events.at(-1)).toMatchObject({
      type: "done",
      usage: { inputTokens: bodyTokens(server.requests[1]?.body ?? {}) },
    });
  });

  it("a compacting OpenAI client learns the window from the refusal and goes on", {
    timeout: 60_000,
  }, async () => {
    let round = 0;
    const dispatch = (body: Body) => {
      const messages = body.messages as { role: string; content: string }[];
      if (messages[0]?.content === summaryPrompt)
        return openaiStream(completion({ text: [summary] }));
      round++;
      if (round % 10 === 0) return openaiStream(completion({ text: ["done"] }));
      return openaiStream(
        completion({
          calls: [{ id: `call_${round}`, name: "read", input: { path: `f${round}` } }],
        }),
      );
    };
    const server = track(
      await startOpenAIServer(
        Array.from({ length: 200 }, () => dispatch),
        { contextLimit: 6000 },
      ),
    );
    const records: Compaction[] = [];
    const client = new CompactingClient(
      new OpenAIModelClient({ baseURL: `${server.url}/v1`, model: "m", maxRetries: 0 }),
      {
        onCompaction: (compaction) => void records.push(compaction),
      },
    );
    let history: Message[] = [];
    for (let task = 1; task <= 6; task++) {
      const result = await runAgent({
        client,
        tools,
        system,
        messages: [...history, { role: "user", content: `task ${task}` }],
      });
      expect(result.status).toBe("completed");
      history = result.messages;
    }
    expect(round).toBe(60);
    expect(
      server.rejections.every((text) =>
        text.startsWith("This model's maximum context length is 6000 tokens."),
      ),
    ).toBe(true);
    expect(server.rejections.length).toBeGreaterThanOrEqual(1);
    expect(records[0]?.trigger).toBe("overflow");
    expect(records.length).toBeGreaterThan(server.rejections.length);
    expect(client.limit).toBe(6000 - 1500);
  });
});
