import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CompactingClient } from "../src/compaction/client.js";
import { chooseCut, legalCuts } from "../src/compaction/cut.js";
import { CompactionError } from "../src/compaction/record.js";
import { messagesTokens, requestTokens } from "../src/compaction/size.js";
import { capped } from "../src/compaction/view.js";
import { normalizeHistory } from "../src/history/normalize.js";
import { historyProblem } from "../src/history/valid.js";
import { toAnthropicMessages } from "../src/providers/anthropic-protocol.js";
import { toOpenAIMessages } from "../src/providers/openai-protocol.js";
import { validate as validateAnthropic } from "../src/testing/anthropic-server.js";
import { validate as validateOpenAI } from "../src/testing/openai-server.js";
import type { Message, ModelEvent, ModelRequest } from "../src/types.js";

/**
 * Property tests of the one rule of compaction: a cut leaves every call with its result on its
 * own side, over random histories (complete, with results missing, repeated, out of order, or
 * answering no call), random budgets, and through the client against both strict validators.
 */

type Step =
  | { kind: "user"; text: string }
  | {
      kind: "round";
      text: string;
      calls: number;
      results: "all" | "reversed" | "missing" | "twice" | "orphan";
      size: number;
    };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("user" as const),
    text: fc.string({ minLength: 1, maxLength: 30 }),
  }),
  fc.record({
    kind: fc.constant("round" as const),
    text: fc.oneof(fc.constant(""), fc.string({ maxLength: 30 })),
    calls: fc.integer({ min: 0, max: 3 }),
    results: fc.constantFrom("all", "all", "all", "reversed", "missing", "twice", "orphan"),
    size: fc.integer({ min: 0, max: 3000 }),
  }),
);

function historyOf(steps: Step[]): Message[] {
  const messages: Message[] = [{ role: "user", content: "start" }];
  let id = 0;
  for (const s of steps) {
    if (s.kind === "user") {
      messages.push({ role: "user", content: s.text });
      continue;
    }
    const calls = Array.from({ length: s.calls }, () => ({
      id: `c${id++}`,
      name: id % 2 ? "read" : "bash",
      input: id % 2 ? { path: `f${id}` } : { command: `echo ${id}` },
    }));
    messages.push({ role: "assistant", content: s.text, toolCalls: calls });
    const ordered = s.results === "reversed" ? [...calls].reverse() : calls;
    const answered = s.results === "missing" ? ordered.slice(1) : ordered;
    for (const call of answered)
      messages.push({
        role: "tool",
        toolCallId: call.id,
        content: "r".repeat(s.size),
        isError: false,
      });
    if (s.results === "twice" && calls[0])
      messages.push({ role: "tool", toolCallId: calls[0].id, content: "again", isError: false });
    if (s.results === "orphan")
      messages.push({ role: "tool", toolCallId: "nobody", content: "stray", isError: true });
  }
  return messages;
}

/** The rule, written out the slow way: is the cut before `at` one where no call is split from its result? */
function splitsNothing(messages: Message[], at: number): boolean {
  const callAt = new Map<string, number>();
  for (const [index, message] of messages.entries()) {
    if (message.role === "assistant")
      for (const call of message.toolCalls) callAt.set(call.id, index);
  }
  for (const [index, message] of messages.entries()) {
    if (message.role !== "tool") continue;
    const call = callAt.get(message.toolCallId);
    if (call === undefined) {
      if (index >= at) return false;
      continue;
    }
    if (call < at !== index < at) return false;
  }
  for (const [id, index] of callAt) {
    const answered = messages.some((m, j) => j > index && m.role === "tool" && m.toolCallId === id);
    if (!answered && index < at) return false;
  }
  return true;
}

const histories = fc.array(step, { minLength: 0, maxLength: 40 }).map(historyOf);

describe("the cut", () => {
  it("is legal exactly where no call is split from its result (normalized histories)", () => {
    fc.assert(
      fc.property(histories, (raw) => {
        const messages = normalizeHistory(raw).messages;
        const legal = legalCuts(messages);
        expect(legal).toHaveLength(messages.length + 1);
        for (let at = 0; at <= messages.length; at++)
          expect(legal[at]).toBe(splitsNothing(messages, at));
      }),
      { numRuns: 300 },
    );
  });

  it("never claims a cut that splits a call from its result (raw histories)", () => {
    fc.assert(
      fc.property(histories, (messages) => {
        const legal = legalCuts(messages);
        for (let at = 0; at <= messages.length; at++)
          if (legal[at]) expect(splitsNothing(messages, at)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("is the earliest legal cut after the covered part that keeps the budget, else the latest", () => {
    fc.assert(
      fc.property(histories, fc.nat(), fc.integer({ min: 0, max: 5000 }), (raw, pick, budget) => {
        const messages = normalizeHistory(raw).messages;
        const legal = legalCuts(messages);
        const starts = legal.flatMap((ok, at) => (ok && at < messages.length ? [at] : []));
        const from = starts[pick % Math.max(1, starts.length)] ?? 0;
        const cut = chooseCut(messages, from, budget);
        const after = legal.flatMap((ok, at) => (ok && at > from ? [at] : []));
        const fitting = after.filter((at) => messagesTokens(messages, at) <= budget);
        expect(cut).toBe(fitting[0] ?? after.at(-1));
      }),
      { numRuns: 300 },
    );
  });
});

const summary = "## Goal\ng\n## Decisions\nd\n## Done\n-\n## In progress\n-\n## Next\n-";

/** An inner client that answers the summary request and records every other request. */
function recordingInner(sent: ModelRequest[]) {
  return {
    async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
      if (request.tools.length > 0) sent.push(request);
      yield { type: "text", text: request.tools.length > 0 ? "ok" : summary };
      yield { type: "done" };
    },
  };
}

describe("the compacting client", () => {
  it("sends only requests both strict servers accept, with every covered user message", async () => {
    const tools = [{ name: "read", description: "", inputSchema: { type: "object" } }];
    await fc.assert(
      fc.asyncProperty(
        histories,
        fc.double({ min: 0.15, max: 0.95, noNaN: true }),
        async (raw, share) => {
          const sent: ModelRequest[] = [];
          const whole = requestTokens({
            system: "s",
            messages: normalizeHistory(raw).messages,
            tools,
          });
          const client = new CompactingClient(recordingInner(sent), {
            contextWindow: Math.max(200, Math.floor(whole * share)),
            reserve: 0,
          });
          try {
            for await (const _ of client.stream({ system: "s", messages: raw, tools }));
          } catch (error) {
            expect(error).toBeInstanceOf(CompactionError);
            return;
          }
          const [request] = sent;
          if (!request) throw new Error("nothing sent");
          expect(historyProblem(request.messages)).toBeUndefined();
          const anthropic = {
            model: "m",
            max_tokens: 1,
            messages: toAnthropicMessages(request.messages),
          };
          expect(validateAnthropic(anthropic)).toBeUndefined();
          expect(
            validateOpenAI({ model: "m", messages: toOpenAIMessages("s", request.messages) }),
          ).toBeUndefined();
          const compaction = client.current;
          if (!compaction) {
            expect(request.messages).toEqual(normalizeHistory(raw).messages);
            return;
          }
          const users = normalizeHistory(raw)
            .messages.filter((m) => m.role === "user")
            .map((m) => m.content);
          const kept = request.messages
            .slice(1)
            .filter((m) => m.role === "user")
            .map((m) => m.content);
          expect([...compaction.userMessages, ...kept]).toEqual([
            ...users.slice(0, users.length - kept.length).map((u) => capped(u)),
            ...kept,
          ]);
          expect(users.slice(users.length - kept.length)).toEqual(kept);
        },
      ),
      { numRuns: 200 },
    );
  });
});
