import { describe, expect, it } from "vitest";
import type { TurnEvent } from "../src/runner/events.js";
import { Journal } from "../src/runner/journal.js";
import { SessionRunner } from "../src/runner/runner.js";
import { Session } from "../src/session/session.js";
import { SessionStore } from "../src/session/store.js";
import { call, FakeClient, text } from "../src/testing/fake-client.js";
import type { ModelEvent, Tool, Usage } from "../src/types.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A broken or hostile proxy's usage (negative, NaN, fractional, absurd) is clamped to
 * non-negative whole numbers before anything counts it: the token budget still stops the run,
 * and the totals, the session's records and the events never go below zero.
 */

const tempDir = useTempDirs();
const echo: Tool = {
  spec: { name: "echo", description: "echoes", inputSchema: { type: "object" } },
  execute: async () => ({ content: "ok" }),
};
const reported = (usage: Record<string, number>): ModelEvent => ({
  type: "done",
  usage: usage as unknown as Usage,
});

async function runner(rounds: ModelEvent[][], tokenBudget: number) {
  const dir = await tempDir();
  const store = new SessionStore(dir, () =>
    Session.create({ dir, workspace: "/ws", model: "m", id: "s1", now: new Date(0) }),
  );
  const client = new FakeClient(rounds);
  const session = new SessionRunner({
    client,
    journal: new Journal(store),
    turn: async () => ({ system: "", tools: [echo] }),
    info: { model: "m", workspace: "/ws", sandbox: "off" },
    tokenBudget,
  });
  return { session, client };
}

describe("usage a provider reports", () => {
  it("is clamped to whole numbers of at least zero, so a negative count cannot defeat the budget", async () => {
    const rounds = Array.from({ length: 12 }, (_, n) => [
      call(`c${n}`, "echo"),
      reported({ inputTokens: -100_000, outputTokens: 20.7, cacheReadTokens: Number.NaN }),
    ]);
    const { session, client } = await runner([...rounds, [text("never"), reported({})]], 50);
    const events: TurnEvent[] = [];
    const result = await session.runTurn("go", { onEvent: (event) => events.push(event) });
    expect(result.status).toBe("budget_exceeded");
    // 20 tokens a request: after two, 40 used and the next needs at least 20: 60 > 50.
    expect(client.requests).toHaveLength(2);
    expect(session.usage).toEqual({
      inputTokens: 0,
      outputTokens: 40,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    const usages = events.flatMap((event) => (event.type === "usage" ? [event.usage] : []));
    expect(usages).toEqual([
      { inputTokens: 0, outputTokens: 20, cacheReadTokens: 0 },
      { inputTokens: 0, outputTokens: 20, cacheReadTokens: 0 },
    ]);
  });

  it("counts a missing or absurd figure as zero, and Infinity too", async () => {
    const { session } = await runner(
      [[text("hi"), reported({ inputTokens: Number.POSITIVE_INFINITY, reasoningTokens: -3 })]],
      1_000,
    );
    expect(await session.runTurn("go")).toEqual({
      status: "completed",
      stop: "end_turn",
      text: "hi",
    });
    expect(session.usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    });
  });
});
