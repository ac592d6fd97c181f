import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import type { TurnEvent } from "../src/runner/events.js";
import { call, done, type ScriptRound, text } from "../src/testing/fake-client.js";
import { recordsOf, trackedRunner } from "./support/changes.js";
import { useTempDirs } from "./support/temp.js";

/**
 * Before `write` or `edit` first changes a file in a turn, its old bytes go once into the
 * session's blob store; every change is a `file_before` record before the call runs and a
 * `file_change` record after it, through the runner's one event stream.
 */

const tempDir = useTempDirs();
const hash = (text: string | Buffer) => contentHash(Buffer.from(text));
/** The mode of a file made here without one: 0666 less the umask. */
const fresh = 0o666 & ~process.umask();

const fileRecords = (path: string) =>
  recordsOf(path).filter((r) => r.type === "file_before" || r.type === "file_change");

describe("file changes and their pre-images", () => {
  it("records every change of write and edit, and keeps a file's old bytes once per turn", async () => {
    const { workspace, runner, path, blobs } = await trackedRunner(await tempDir(), [
      [
        call("r1", "read", { path: "old.txt" }),
        call("w1", "write", { path: "new.txt", content: "one\n" }),
        call("e1", "edit", { path: "old.txt", oldText: "a", newText: "b" }),
        call("e2", "edit", { path: "old.txt", oldText: "b", newText: "c" }),
        call("e3", "edit", { path: "old.txt", oldText: "zzz", newText: "y" }),
        done,
      ],
      [text("done"), done],
      [call("e4", "edit", { path: "old.txt", oldText: "c", newText: "d" }), done],
      [text("again"), done],
    ]);
    await writeFile(join(workspace, "old.txt"), "a\r\n");
    await chmod(join(workspace, "old.txt"), 0o755);
    expect((await runner.runTurn("first")).status).toBe("completed");
    expect((await runner.runTurn("second")).status).toBe("completed");

    const starting = (
      id: string,
      tool: string,
      file: string,
      was: string | null,
      mode: number | null,
    ) =>
      ({
        type: "file_before",
        toolCallId: id,
        tool,
        path: file,
        before: was && hash(was),
        mode,
      }) as const;
    const change = (
      id: string,
      file: string,
      was: string | null,
      now: string | null,
      mode: number | null,
    ) =>
      ({
        type: "file_change",
        toolCallId: id,
        path: file,
        before: was && hash(was),
        after: now && hash(now),
        mode,
      }) as const;
    expect(fileRecords(path)).toEqual([
      starting("w1", "write", "new.txt", null, null),
      change("w1", "new.txt", null, "one\n", fresh),
      starting("e1", "edit", "old.txt", "a\r\n", 0o755),
      change("e1", "old.txt", "a\r\n", "b\r\n", 0o755),
      starting("e2", "edit", "old.txt", "b\r\n", 0o755),
      change("e2", "old.txt", "b\r\n", "c\r\n", 0o755),
      // A call that changes nothing closes its record too: after equals before.
      starting("e3", "edit", "old.txt", "c\r\n", 0o755),
      change("e3", "old.txt", "c\r\n", "c\r\n", 0o755),
      starting("e4", "edit", "old.txt", "c\r\n", 0o755),
      change("e4", "old.txt", "c\r\n", "d\r\n", 0o755),
    ]);
    // The bytes before each turn's first change of a file, and nothing else.
    expect(readdirSync(blobs).sort()).toEqual([hash("a\r\n"), hash("c\r\n")].sort());
    expect(readFileSync(join(blobs, hash("a\r\n")), "utf8")).toBe("a\r\n");
  });

  it("puts each file_before in the stream before the call's result, and the file_change after the write", async () => {
    const { workspace, runner } = await trackedRunner(await tempDir(), [
      [call("w1", "write", { path: "a.txt", content: "x" }), done],
      [text("ok"), done],
    ]);
    const events: TurnEvent[] = [];
    await runner.runTurn("go", { onEvent: (event) => events.push(event) });
    const kinds = events
      .filter((e) => e.type !== "usage" && e.type !== "text" && e.type !== "session")
      .map((e) => (e.type === "message" ? `message:${e.message.role}` : e.type));
    expect(kinds).toEqual([
      "message:user",
      "message:assistant",
      "tool_start",
      "file_before",
      "file_change",
      "message:tool",
      "message:assistant",
      "turn_end",
    ]);
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("x");
  });

  it("keeps at most one pre-image per prompt: 1,000 edits to one file over 10 prompts keep 10", async () => {
    const rounds: ScriptRound[] = [];
    const starts: string[] = [];
    const content = (n: number) => `${"payload line\n".repeat(100)}v=${n}\n`;
    for (let prompt = 0; prompt < 10; prompt++) {
      const calls = [];
      if (prompt === 0) calls.push(call("read", "read", { path: "big.txt" }));
      starts.push(content(prompt * 100));
      for (let i = 0; i < 100; i++) {
        const n = prompt * 100 + i;
        calls.push(
          call(`e${n}`, "edit", { path: "big.txt", oldText: `v=${n}\n`, newText: `v=${n + 1}\n` }),
        );
      }
      rounds.push([...calls, done], [text(`prompt ${prompt + 1} done`), done]);
    }
    const { workspace, runner, path, blobs } = await trackedRunner(await tempDir(), rounds);
    await writeFile(join(workspace, "big.txt"), content(0));
    for (let prompt = 1; prompt <= 10; prompt++)
      expect((await runner.runTurn(`prompt ${prompt}`)).status).toBe("completed");

    expect(readFileSync(join(workspace, "big.txt"), "utf8")).toBe(content(1000));
    expect(readdirSync(blobs).sort()).toEqual(starts.map(hash).sort());
    const changes = recordsOf(path).filter((r) => r.type === "file_change");
    expect(changes).toHaveLength(1000);
  }, 60_000);

  it("marks a file too big to keep as not undoable, says why, and still lets the edit run", async () => {
    const { workspace, runner, path, blobs } = await trackedRunner(
      await tempDir(),
      [
        [
          call("r1", "read", { path: "big.txt" }),
          call("e1", "edit", { path: "big.txt", oldText: "z", newText: "y" }),
          done,
        ],
        [text("ok"), done],
      ],
      { fileCap: 1024 },
    );
    await writeFile(join(workspace, "big.txt"), `${"x".repeat(1999)}z`);
    await runner.runTurn("go");
    expect(fileRecords(path)[0]).toEqual({
      type: "file_before",
      toolCallId: "e1",
      tool: "edit",
      path: "big.txt",
      before: hash(`${"x".repeat(1999)}z`),
      mode: fresh,
      unkept: "the file is 2000 bytes, over the 1024 bytes a session keeps of one file",
    });
    expect(readFileSync(join(workspace, "big.txt"), "utf8")).toBe(`${"x".repeat(1999)}y`);
    expect(existsSync(blobs)).toBe(false);
  });

  it("marks a file whose old bytes the blob store cannot write as not undoable, says why, and still lets the edit run", async () => {
    const { workspace, runner, path, blobs } = await trackedRunner(await tempDir(), [
      [
        call("r1", "read", { path: "a.txt" }),
        call("e1", "edit", { path: "a.txt", oldText: "z", newText: "y" }),
        done,
      ],
      [text("ok"), done],
    ]);
    await writeFile(join(workspace, "a.txt"), "z");
    // A file where the blob store's folder goes.
    await mkdir(dirname(blobs), { recursive: true });
    await writeFile(blobs, "");
    await runner.runTurn("go");
    expect(fileRecords(path)[0]).toEqual({
      type: "file_before",
      toolCallId: "e1",
      tool: "edit",
      path: "a.txt",
      before: hash("z"),
      mode: fresh,
      unkept: `the session's blob store cannot be written (a file is in the way: ${blobs})`,
    });
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("y");
  });
});
