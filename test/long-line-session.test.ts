import { truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readForExport } from "../src/export/read.js";
import { MAX_LINE_BYTES } from "../src/session/lines.js";
import { readSession } from "../src/session/read.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A line longer than any record can be (a file filled by a crash or by hand): no reader tries to
 * hold it as a string, which V8 cannot do past half a gigabyte. It is a line that holds no record.
 */

const tempDir = useTempDirs();

const header = JSON.stringify({
  type: "session",
  version: 1,
  id: "s1",
  createdAt: "2026-11-30T12:00:00.000Z",
  workspace: "/work/project",
  model: "claude-sonnet-5-5",
});
const prompt = JSON.stringify({ type: "message", message: { role: "user", content: "hello" } });

/** A session whose last line runs, without a newline, past the longest line a reader takes. */
async function endlessSession(): Promise<string> {
  const path = join(await tempDir(), "s1.jsonl");
  await writeFile(path, `${header}\n${prompt}\n`);
  await truncate(path, MAX_LINE_BYTES + 4 * 1024 * 1024);
  return path;
}

describe("a line longer than any record", () => {
  it("is passed over by loading, as a torn last line, keeping the history before it", {
    timeout: 60_000,
  }, async () => {
    const loaded = await readSession(await endlessSession());
    expect({ messages: loaded.messages, skipped: loaded.skipped, torn: loaded.torn }).toEqual({
      messages: [{ role: "user", content: "hello" }],
      skipped: 1,
      torn: true,
    });
  });

  it("is an unreadable line in an export", { timeout: 60_000 }, async () => {
    const exported = await readForExport(await endlessSession());
    const kinds: string[] = [];
    for await (const block of exported.blocks()) kinds.push(block.kind);
    expect(kinds).toEqual(["prompt", "unreadable"]);
  });
});
