import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Compaction } from "../src/compaction/record.js";
import { sessionMessages } from "../src/session/read.js";
import { readSession, Session } from "../src/session/session.js";
import type { Message } from "../src/types.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A `rewind` record takes the conversation back to just before the user's prompt N of the
 * current branch: loading ends the history there, the later records stay in the file (a
 * branch), a compaction made on that branch no longer counts, and the next rewind counts the
 * prompts of the branch it is on.
 */

const tempDir = useTempDirs();
const user = (content: string): Message => ({ role: "user", content });
const answer = (content: string): Message => ({ role: "assistant", content, toolCalls: [] });

async function sessionOf(records: (Message | { rewind: number } | { compaction: Compaction })[]) {
  const dir = await tempDir();
  const session = await Session.create({ dir, workspace: "/ws", model: "m", id: "s1" });
  for (const item of records) {
    if ("rewind" in item) await session.record({ type: "rewind", to: item.rewind });
    else if ("compaction" in item) await session.record({ type: "compaction", ...item.compaction });
    else await session.append(item);
  }
  await session.close();
  return join(dir, "s1.jsonl");
}

const compaction = (firstKept: number): Compaction => ({
  firstKept,
  count: 1,
  trigger: "manual",
  userMessages: ["one", "two"],
  facts: { filesRead: [], filesChanged: [], commands: [], refused: [], omitted: 0 },
  summary: "## Goal\nx",
  tokensBefore: 100,
  tokensAfter: 10,
});

describe("rewinding the conversation", () => {
  it("loads the history up to just before prompt N, and keeps the later records in the file", async () => {
    const path = await sessionOf([
      user("one"),
      answer("a1"),
      user("two"),
      answer("a2"),
      user("three"),
      answer("a3"),
      { rewind: 2 },
    ]);
    const loaded = await readSession(path);
    expect(loaded.messages).toEqual([user("one"), answer("a1")]);
    expect(readFileSync(path, "utf8")).toContain('"content":"three"');
  });

  it("goes on from there on a new branch, and a later rewind counts the prompts of that branch", async () => {
    const path = await sessionOf([
      user("one"),
      answer("a1"),
      user("two"),
      answer("a2"),
      { rewind: 2 },
      user("two again"),
      answer("b2"),
      user("three"),
      answer("b3"),
      { rewind: 3 },
      user("three again"),
      answer("c3"),
    ]);
    expect((await readSession(path)).messages).toEqual([
      user("one"),
      answer("a1"),
      user("two again"),
      answer("b2"),
      user("three again"),
      answer("c3"),
    ]);
  });

  it("starts loading from the last compaction on the current branch", async () => {
    const records = [
      user("one"),
      answer("a1"),
      user("two"),
      answer("a2"),
      { compaction: compaction(2) },
      user("three"),
      answer("a3"),
    ];
    const compacted = await readSession(await sessionOf(records));
    expect(compacted.messages).toEqual([user("two"), answer("a2"), user("three"), answer("a3")]);
    expect(compacted.compaction).toEqual(compaction(2));

    // The compaction was made after prompt 2: back before it, the whole branch is loaded again.
    const rewound = await readSession(await sessionOf([...records, { rewind: 2 }]));
    expect(rewound.messages).toEqual([user("one"), answer("a1")]);
    expect(rewound.compaction).toBeUndefined();

    // Back to prompt 3, after it: the compaction still holds.
    const kept = await readSession(await sessionOf([...records, { rewind: 3 }]));
    expect(kept.messages).toEqual([user("two"), answer("a2")]);
    expect(kept.compaction).toEqual(compaction(2));
  });

  it("passes over a rewind to a prompt the branch does not have", async () => {
    const path = await sessionOf([user("one"), answer("a1"), { rewind: 5 }]);
    const loaded = await readSession(path);
    expect(loaded.messages).toEqual([user("one"), answer("a1")]);
    expect(loaded.skipped).toBe(1);
  });
});

describe("replaying a rewound session", () => {
  it("replays the messages of the current branch only", async () => {
    const path = await sessionOf([
      user("one"),
      answer("a1"),
      user("two"),
      answer("a2"),
      { rewind: 2 },
      user("two again"),
      answer("b2"),
    ]);
    const replayed: Message[] = [];
    for await (const message of sessionMessages(path)) replayed.push(message);
    expect(replayed).toEqual([user("one"), answer("a1"), user("two again"), answer("b2")]);
  });
});
