import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { Compaction } from "../src/compaction/record.js";
import { listSessions, readSession, Session } from "../src/session/session.js";
import { toolCall } from "../src/testing/fake-client.js";
import type { Message } from "../src/types.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();

/** Turn `n`: the user's message, a read round, and the answer (three user or assistant messages). */
function turnOf(n: number): Message[] {
  return [
    { role: "user", content: `task ${n}` },
    { role: "assistant", content: "", toolCalls: [toolCall(`c${n}`, "read", { path: `f${n}` })] },
    { role: "tool", toolCallId: `c${n}`, content: `content ${n}`, isError: false },
    { role: "assistant", content: `answer ${n}`, toolCalls: [] },
  ];
}

function compactionAt(firstKept: number, count: number, users: string[]): Compaction {
  return {
    firstKept,
    count,
    trigger: "size",
    userMessages: users,
    facts: { filesRead: [], filesChanged: [], commands: [], refused: [], omitted: 0 },
    summary: `summary ${count}`,
    tokensBefore: 1000,
    tokensAfter: 100,
  };
}

async function sessionWith(entries: (Message | Compaction)[], env: NodeJS.ProcessEnv = {}) {
  const dir = await tempDir();
  const session = await Session.create({ dir, workspace: "/w", model: "m", id: "s", env });
  for (const entry of entries) {
    if ("role" in entry) await session.append(entry);
    else await session.record({ type: "compaction", ...entry });
  }
  await session.close();
  return { dir, path: session.path };
}

describe("a session with compactions", () => {
  it("loads from the last compaction: its record and the messages from its first kept one", async () => {
    const first = compactionAt(3, 1, ["task 1"]);
    const second = compactionAt(6, 2, ["task 1", "task 2"]);
    const { path } = await sessionWith([
      ...turnOf(1),
      ...turnOf(2),
      first,
      ...turnOf(3),
      second,
      ...turnOf(4),
    ]);
    const loaded = await readSession(path);
    expect(loaded.compaction).toEqual(second);
    expect(loaded.messages).toEqual([...turnOf(3), ...turnOf(4)]);
    expect(loaded.skipped).toBe(0);
    const opened = await Session.open(path);
    await opened.session.close();
    expect(opened.compaction).toEqual(second);
    expect(opened.messages).toEqual([...turnOf(3), ...turnOf(4)]);
  });

  it("keeps a turn cut in the middle: a round whose results follow the first kept message", async () => {
    const { path } = await sessionWith([
      ...turnOf(1),
      ...turnOf(2),
      compactionAt(4, 1, ["task 1"]),
    ]);
    const loaded = await readSession(path);
    expect(loaded.messages).toEqual(turnOf(2).slice(1));
    expect(loaded.messages[0]).toEqual(turnOf(2)[1]);
  });

  it("leaves every earlier record in the file as it was", async () => {
    const before = [...turnOf(1), ...turnOf(2)];
    const { path } = await sessionWith([...before, compactionAt(3, 1, ["task 1"])]);
    const lines = (await readFile(path, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.slice(1, -1)).toEqual(before.map((message) => ({ type: "message", message })));
    expect(lines.at(-1)).toEqual({ type: "compaction", ...compactionAt(3, 1, ["task 1"]) });
  });

  it("does not apply a compaction that points past the messages read or before the last one", async () => {
    const { path } = await sessionWith([...turnOf(1), compactionAt(9, 1, []), ...turnOf(2)]);
    const loaded = await readSession(path);
    expect(loaded.compaction).toBeUndefined();
    expect(loaded.messages).toEqual([...turnOf(1), ...turnOf(2)]);
    expect(loaded.skipped).toBe(1);
    const back = await sessionWith([
      ...turnOf(1),
      ...turnOf(2),
      compactionAt(3, 1, ["task 1"]),
      compactionAt(1, 2, []),
    ]);
    const reread = await readSession(back.path);
    expect(reread.compaction).toEqual(compactionAt(3, 1, ["task 1"]));
    expect(reread.skipped).toBe(1);
  });

  it("lists the session with its first prompt, covered by a compaction", async () => {
    const { dir } = await sessionWith([
      ...turnOf(1),
      ...turnOf(2),
      compactionAt(3, 1, ["task 1"]),
      ...turnOf(3),
    ]);
    const [summary] = await listSessions(dir);
    expect(summary?.firstPrompt).toBe("task 1");
  });

  it("redacts secrets in the record but never the words that say what it is", async () => {
    const env = { DEPLOY_TOKEN: "overflow", API_KEY: "hunter2-secret" };
    const leaky: Compaction = {
      ...compactionAt(3, 1, ["use hunter2-secret"]),
      trigger: "overflow",
      summary: "the key is hunter2-secret",
    };
    const { path } = await sessionWith([...turnOf(1), leaky], env);
    const text = await readFile(path, "utf8");
    expect(text).not.toContain("hunter2-secret");
    const loaded = await readSession(path);
    expect(loaded.compaction).toEqual({
      ...leaky,
      userMessages: ["use [redacted]"],
      summary: "the key is [redacted]",
    });
  });
});
