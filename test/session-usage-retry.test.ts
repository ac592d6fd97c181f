import { appendFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listSessions, readSession, Session } from "../src/session/session.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import type { Message } from "../src/types.js";
import { runBin, sessionFiles, sessionRecords, useCliSetup } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/**
 * Usage per request and retried rounds are recorded beside the history for the export; loading a
 * session passes over them, and files written before they existed load as they did.
 */

const tempDir = useTempDirs();
const user: Message = { role: "user", content: "go" };
const answer: Message = { role: "assistant", content: "done", toolCalls: [] };

async function newSession(dir: string, env: NodeJS.ProcessEnv = {}) {
  return Session.create({ dir, workspace: "/ws", model: "m", id: "s1", env, now: new Date(0) });
}

const lines = async (path: string) =>
  (await readFile(path, "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("usage and retry records", () => {
  it("writes a usage record per request and a retry record per lost round, in order", async () => {
    const dir = await tempDir();
    const session = await newSession(dir);
    await session.append(user);
    await session.record({
      type: "retry",
      attempt: 2,
      attempts: 4,
      delayMs: 1000,
      reason: "overloaded",
    });
    await session.record({ type: "usage", inputTokens: 12, outputTokens: 3, cacheReadTokens: 4 });
    await session.append(answer);
    await session.close();
    expect((await lines(session.path)).slice(1)).toEqual([
      { type: "message", message: user },
      { type: "retry", attempt: 2, attempts: 4, delayMs: 1000, reason: "overloaded" },
      { type: "usage", inputTokens: 12, outputTokens: 3, cacheReadTokens: 4 },
      { type: "message", message: answer },
    ]);
  });

  it("loads the same history with and without usage and retry records", async () => {
    const dir = await tempDir();
    const session = await newSession(dir);
    await session.append(user);
    await session.record({ type: "usage", inputTokens: 1, outputTokens: 2 });
    await session.record({ type: "retry", attempt: 2, attempts: 4, delayMs: 5, reason: "x" });
    await session.append(answer);
    await session.close();
    const loaded = await readSession(session.path);
    expect({
      messages: loaded.messages,
      skipped: loaded.skipped,
      repaired: loaded.repaired,
    }).toEqual({ messages: [user, answer], skipped: 0, repaired: 0 });
    const reopened = await Session.open(session.path, { env: {} });
    await reopened.session.close();
    expect(reopened.messages).toEqual([user, answer]);
    expect((await listSessions(dir)).map((s) => [s.id, s.firstPrompt])).toEqual([["s1", "go"]]);
  });

  it("redacts a secret in a retry's reason before writing it", async () => {
    const dir = await tempDir();
    const session = await newSession(dir, { GH_TOKEN: "ghp_secretvalue123" });
    await session.record({
      type: "retry",
      attempt: 2,
      attempts: 4,
      delayMs: 1,
      reason: "503 from https://x/?t=ghp_secretvalue123",
    });
    await session.close();
    expect((await lines(session.path))[1]).toEqual({
      type: "retry",
      attempt: 2,
      attempts: 4,
      delayMs: 1,
      reason: "503 from https://x/?t=[redacted]",
    });
  });

  it("loads a file written before these records existed as before", async () => {
    const dir = await tempDir();
    const path = join(dir, "old.jsonl");
    const header = {
      type: "session",
      version: 1,
      id: "old",
      createdAt: "2026-01-01T00:00:00.000Z",
      workspace: "/ws",
      model: "m",
    };
    await writeFile(
      path,
      `${[header, { type: "message", message: user }, { type: "message", message: answer }]
        .map((record) => JSON.stringify(record))
        .join("\n")}\n`,
    );
    const loaded = await readSession(path);
    expect(loaded.messages).toEqual([user, answer]);
    expect(loaded.skipped).toBe(0);
  });

  it("skips a torn usage record like any torn line, and keeps what follows", async () => {
    const dir = await tempDir();
    const session = await newSession(dir);
    await session.append(user);
    await session.close();
    await appendFile(session.path, '{"type":"usage","inputTokens":1');
    await appendFile(session.path, `${JSON.stringify({ type: "message", message: answer })}\n`);
    const loaded = await readSession(session.path);
    expect({ messages: loaded.messages, skipped: loaded.skipped }).toEqual({
      messages: [user, answer],
      skipped: 1,
    });
  });
});

describe("the CLI records usage and retries", () => {
  const setup = useCliSetup();

  it("writes one usage record per request and a retry record per lost round", async () => {
    const { home, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "ls", input: {} }] })),
      stream(turn({ text: ["Partial"] }), { errorAfter: 4, errorType: "overloaded_error" }),
      stream(turn({ text: ["Done."] })),
    ]);
    const run = await runBin(["look"], options);
    expect(run.code).toBe(0);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    const usage = { type: "usage", inputTokens: 10, outputTokens: 5 };
    expect(records.map((r) => (r.type === "message" ? `message ${message(r).role}` : r))).toEqual([
      expect.objectContaining({ type: "session" }),
      "message user",
      usage,
      "message assistant",
      { type: "approval", toolCallId: "toolu_1", tool: "ls", approved: true, by: "default-policy" },
      "message tool",
      {
        type: "retry",
        attempt: 2,
        attempts: 4,
        delayMs: 1000,
        reason: "overloaded_error: Overloaded",
        errorKind: "overloaded",
      },
      usage,
      "message assistant",
      { type: "turn_end", status: "completed", durationMs: expect.any(Number) },
    ]);
  });
});

const message = (record: Record<string, unknown>) => record.message as Message;
