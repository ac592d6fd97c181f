import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { denyBashByDefault } from "../src/approval.js";
import type { TurnEvent } from "../src/runner/events.js";
import { Journal } from "../src/runner/journal.js";
import { SessionRunner } from "../src/runner/runner.js";
import { Session } from "../src/session/session.js";
import { SessionStore } from "../src/session/store.js";
import { call, FakeClient, text } from "../src/testing/fake-client.js";
import { assertValidHistory } from "../src/testing/history.js";
import type { BeforeToolCall, ModelEvent, Tool } from "../src/types.js";
import { streamError } from "./support/provider-errors.js";
import { useTempDirs } from "./support/temp.js";

/**
 * The session runner driven as a library would drive it, without the CLI: two turns with a
 * round lost and run again, a denied call and a manual compaction between them. The event
 * stream and the session file are checked as whole values: the file is the stream's records.
 */

const tempDir = useTempDirs();
const usage = { inputTokens: 20_000, outputTokens: 2 };
const done: ModelEvent = { type: "done", usage };
const bigAnswer = "line of the manual\n".repeat(2000);
const manual: Tool = {
  spec: { name: "manual", description: "the manual", inputSchema: { type: "object" } },
  execute: async () => ({ content: bigAnswer }),
};
const summary =
  "## Goal\nread the manual\n## Decisions\nnone\n## Done\nread\n## In progress\n-\n## Next\n-";

/** A clock that moves 250 ms each time it is read. */
function clock(): () => number {
  let ms = 0;
  return () => (ms += 250);
}

async function setUp() {
  const dir = await tempDir();
  const store = new SessionStore(dir, () =>
    Session.create({ dir, workspace: "/ws", model: "m", id: "s1", now: new Date(0) }),
  );
  const journal = new Journal(store);
  // A library's own policy, recording each decision through the journal like the CLI's.
  const policy: BeforeToolCall = async (toolCall) => {
    const approval = denyBashByDefault(toolCall);
    const decision = { toolCallId: toolCall.id, tool: toolCall.name, approved: approval.approved };
    await journal.record({ type: "approval", decision: { ...decision, by: "default-policy" } });
    return approval;
  };
  const client = new FakeClient([
    [text("half"), streamError("overloaded_error", "Overloaded")],
    [call("c1", "manual"), call("c2", "bash", { command: "rm -rf /" }), done],
    [text("read it"), done],
    [text(summary), done],
    [text("still here"), done],
  ]);
  const runner = new SessionRunner({
    client,
    beforeToolCall: policy,
    journal,
    turn: async () => ({ system: "be brief", tools: [manual] }),
    info: { model: "m", workspace: "/ws", sandbox: "off" },
    retry: { policy: { attempts: 3, firstDelayMs: 1, maxDelayMs: 1 }, env: {} },
    now: clock(),
  });
  return { runner, client, path: `${dir}/s1.jsonl` };
}

describe("SessionRunner", () => {
  it("runs two turns around a retry, a denial and a compaction; the session file holds the stream's records", async () => {
    const { runner, client, path } = await setUp();
    const first: TurnEvent[] = [];
    const second: TurnEvent[] = [];
    const compacted: TurnEvent[] = [];

    const one = await runner.runTurn("read the manual", { onEvent: (e) => first.push(e) });
    await runner.compact("keep the manual's name", { onEvent: (e) => compacted.push(e) });
    const two = await runner.runTurn("and now?", { onEvent: (e) => second.push(e) });

    expect(one).toEqual({ status: "completed", stop: "end_turn", text: "read it" });
    expect(two).toEqual({ status: "completed", stop: "end_turn", text: "still here" });
    const user = { role: "user", content: "read the manual" };
    const round = {
      role: "assistant",
      content: "",
      toolCalls: [
        { id: "c1", name: "manual", input: {} },
        { id: "c2", name: "bash", input: { command: "rm -rf /" } },
      ],
    };
    const result = { role: "tool", toolCallId: "c1", content: bigAnswer, isError: false };
    const denied = denyBashByDefault({ id: "c2", name: "bash", input: {} });
    const refusal = { role: "tool", toolCallId: "c2", content: denied.reason, isError: true };
    const answer = { role: "assistant", content: "read it", toolCalls: [] };
    const retry = {
      attempt: 2,
      attempts: 3,
      delayMs: 1,
      reason: "overloaded_error: Overloaded",
      errorKind: "overloaded",
    };
    const approval = (toolCallId: string, tool: string, approved: boolean) => ({
      type: "approval",
      decision: { toolCallId, tool, approved, by: "default-policy" },
    });
    expect(first).toEqual([
      { type: "message", message: user },
      { type: "session", session: { id: "s1", model: "m", workspace: "/ws", sandbox: "off" } },
      { type: "text", text: "half" },
      { type: "retry", notice: retry },
      { type: "usage", usage },
      { type: "message", message: round },
      approval("c1", "manual", true),
      { type: "tool_start", call: round.toolCalls[0] },
      { type: "message", message: result },
      approval("c2", "bash", false),
      { type: "message", message: refusal },
      { type: "text", text: "read it" },
      { type: "usage", usage },
      { type: "message", message: answer },
      { type: "turn_end", end: { status: "completed", durationMs: 250 } },
    ]);
    const compaction = compacted.find((e) => e.type === "compaction");
    expect(compacted).toEqual([{ type: "usage", usage }, compaction]);
    expect(compaction).toMatchObject({
      compaction: { trigger: "manual", count: 1, userMessages: ["read the manual"], summary },
    });
    const user2 = { role: "user", content: "and now?" };
    const answer2 = { role: "assistant", content: "still here", toolCalls: [] };
    expect(second).toEqual([
      { type: "message", message: user2 },
      { type: "text", text: "still here" },
      { type: "usage", usage },
      { type: "message", message: answer2 },
      { type: "turn_end", end: { status: "completed", durationMs: 250 } },
    ]);

    // The session file: its header, then each record of the stream, in the stream's order.
    const lines = (await readFile(path, "utf8")).trim().split("\n");
    const records = lines.map((line) => JSON.parse(line) as unknown);
    const asRecord = (event: TurnEvent) => {
      if (event.type === "message") return { type: "message", message: event.message };
      if (event.type === "approval") return { type: "approval", ...event.decision };
      if (event.type === "usage") return { type: "usage", ...event.usage };
      if (event.type === "retry") return { type: "retry", ...event.notice };
      if (event.type === "compaction") return { type: "compaction", ...event.compaction };
      if (event.type === "turn_end") return { type: "turn_end", ...event.end };
      return undefined;
    };
    const written = [...first, ...compacted, ...second].map(asRecord).filter(Boolean);
    expect(records).toEqual([
      {
        type: "session",
        version: 1,
        id: "s1",
        createdAt: new Date(0).toISOString(),
        workspace: "/ws",
        model: "m",
      },
      ...written,
    ]);

    // The second turn's request is the compacted view, and every request is a valid history.
    expect(client.requests).toHaveLength(5);
    for (const request of client.requests) assertValidHistory(request.messages);
    const last = JSON.stringify(client.requests[4]?.messages);
    expect(last).toContain(summary.split("\n")[1]);
    expect(last).not.toContain(bigAnswer);
    expect(runner.usage).toEqual({
      inputTokens: 80_000,
      outputTokens: 8,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it("ends a turn whose session cannot be written with the error, the history unchanged", async () => {
    const dir = await tempDir();
    const failing = new SessionStore(dir, async () => {
      throw Object.assign(new Error("ENOSPC: no space"), { code: "ENOSPC" });
    });
    const runner = new SessionRunner({
      client: new FakeClient([]),
      journal: new Journal(failing),
      turn: async () => ({ system: "", tools: [] }),
      info: { model: "m", workspace: "/ws", sandbox: "off" },
    });
    const result = await runner.runTurn("hello");
    expect(result.status).toBe("error");
    expect(String((result.error as Error).message)).toMatch(/^cannot write the session in /);
    expect(runner.messages).toEqual([]);
  });
});
