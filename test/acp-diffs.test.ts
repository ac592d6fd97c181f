import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { ChangeDiffs } from "../src/acp/diffs.js";
import { contentHash } from "../src/crypto.js";
import { BlobStore } from "../src/session/blobs.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { invalidLines, noAnswer, withAcpAgent } from "./support/acp.js";
import { useCliSetup } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/** The diff an editor is sent for each write and edit: from the changes the turn recorded. */

const setup = useCliSetup();
const tempDir = useTempDirs();

const text = (value: string): acp.ContentBlock[] => [{ type: "text", text: value }];

const call = (id: string, name: string, input: Record<string, unknown>) => ({ id, name, input });

/** Each finished call's id, status, and its content other than the result's own text. */
function finished(updates: acp.SessionNotification[]) {
  return updates.flatMap(({ update }) => {
    if (update.sessionUpdate !== "tool_call_update" || update.status === "in_progress") return [];
    const result = update.rawOutput as { content: string };
    const content = (update.content ?? []).filter(
      (c) =>
        !(c.type === "content" && c.content.type === "text" && c.content.text === result.content),
    );
    return [[update.toolCallId, update.status, content]];
  });
}

const line = (text: string) => ({ type: "content", content: { type: "text", text } });

describe("mini-agent acp diffs", () => {
  it("sends each write and edit the whole file before and after, from the recorded change; a line where it cannot", async () => {
    const big = "x".repeat(1024 * 1024 + 1);
    const { workspace, options, server } = await setup([
      stream(
        turn({
          calls: [
            call("r1", "read", { path: "crlf.txt" }),
            call("r2", "read", { path: "old.txt" }),
            call("r3", "read", { path: "latin1.txt" }),
          ],
        }),
      ),
      stream(turn({ calls: [call("w1", "write", { path: "a/b/new.txt", content: "hello\n" })] })),
      stream(
        turn({
          calls: [call("e1", "edit", { path: "crlf.txt", oldText: "two", newText: "three" })],
        }),
      ),
      stream(
        turn({
          calls: [call("e2", "edit", { path: "crlf.txt", oldText: "three", newText: "four" })],
        }),
      ),
      stream(
        turn({
          calls: [call("e3", "edit", { path: "crlf.txt", oldText: "absent", newText: "x" })],
        }),
      ),
      stream(turn({ calls: [call("w2", "write", { path: "old.txt", content: "new\n" })] })),
      stream(turn({ calls: [call("w3", "write", { path: "latin1.txt", content: "plain\n" })] })),
      stream(turn({ calls: [call("w4", "write", { path: "big.txt", content: big })] })),
      stream(turn({ calls: [call("w5", "write", { path: "nul.txt", content: "a\u0000b" })] })),
      stream(turn({ text: "done" })),
      stream(
        turn({
          calls: [call("e4", "edit", { path: "a/b/new.txt", oldText: "hello", newText: "bye" })],
        }),
      ),
      stream(turn({ text: "done again" })),
    ]);
    await writeFile(join(workspace, "crlf.txt"), "one\r\ntwo\r\n");
    await writeFile(join(workspace, "old.txt"), "old\n");
    await writeFile(join(workspace, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    // A window the 1 MiB write fits in, so no compaction runs.
    const args = ["--sandbox", "off", "--context-window", "10000000"];
    const { run } = await withAcpAgent(args, options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      const { sessionId } = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
      await agent.request("session/prompt", { sessionId, prompt: text("change them") });
      await agent.request("session/prompt", { sessionId, prompt: text("once more") });
    });
    const at = (path: string) => join(workspace, path);
    expect(finished(run.updates)).toEqual([
      ["r1", "completed", []],
      ["r2", "completed", []],
      ["r3", "completed", []],
      [
        "w1",
        "completed",
        [{ type: "diff", path: at("a/b/new.txt"), oldText: null, newText: "hello\n" }],
      ],
      [
        "e1",
        "completed",
        [
          {
            type: "diff",
            path: at("crlf.txt"),
            oldText: "one\r\ntwo\r\n",
            newText: "one\r\nthree\r\n",
          },
        ],
      ],
      [
        "e2",
        "completed",
        [
          {
            type: "diff",
            path: at("crlf.txt"),
            oldText: "one\r\nthree\r\n",
            newText: "one\r\nfour\r\n",
          },
        ],
      ],
      ["e3", "failed", []],
      [
        "w2",
        "completed",
        [{ type: "diff", path: at("old.txt"), oldText: "old\n", newText: "new\n" }],
      ],
      ["w3", "completed", [line("no diff of latin1.txt: it is not UTF-8 text")]],
      ["w4", "completed", [line("no diff of big.txt: it is over 1 MiB")]],
      ["w5", "completed", [line("no diff of nul.txt: it is binary")]],
      // The next turn's first change of a file: its old text is the pre-image the turn kept.
      [
        "e4",
        "completed",
        [{ type: "diff", path: at("a/b/new.txt"), oldText: "hello\n", newText: "bye\n" }],
      ],
    ]);
    // The whole update of one call: the diff first, then the result's text.
    const created = run.updates
      .map((note) => note.update)
      .find(
        (u) =>
          u.sessionUpdate === "tool_call_update" &&
          u.toolCallId === "w1" &&
          u.status !== "in_progress",
      );
    expect(created).toEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "w1",
      status: "completed",
      content: [
        { type: "diff", path: at("a/b/new.txt"), oldText: null, newText: "hello\n" },
        { type: "content", content: { type: "text", text: "created a/b/new.txt (6 bytes)" } },
      ],
      rawOutput: { content: "created a/b/new.txt (6 bytes)", isError: false },
    });
    expect(invalidLines(run.lines)).toEqual([]);
    expect(server.rejections).toEqual([]);
  });
});

describe("ChangeDiffs", () => {
  const hash = (text: string) => contentHash(Buffer.from(text));
  const change = (path: string, before: string | null, after: string) => ({
    toolCallId: "c",
    path,
    before: before === null ? null : hash(before),
    after: hash(after),
    mode: 0o644,
  });

  it("gives a diff only of bytes it can vouch for, a line for the rest, and never throws", async () => {
    const home = await tempDir();
    const workspace = join(home, "ws");
    await mkdir(workspace);
    const blobs = new BlobStore(join(home, "blobs"));
    blobs.put(Buffer.from("old\n"));
    await writeFile(join(workspace, "a.txt"), "new\n");
    await writeFile(join(home, "outside.txt"), "new\n");
    await symlink(join(home, "outside.txt"), join(workspace, "link.txt"));
    const diffs = new ChangeDiffs(workspace, blobs);
    const contents = [
      diffs.content(change("a.txt", "old\n", "new\n")),
      diffs.content(change("a.txt", "gone\n", "new\n")),
      diffs.content(change("a.txt", "old\n", "newer\n")),
      diffs.content(change("link.txt", null, "new\n")),
      diffs.content(change("a.txt", "new\n", "new\n")),
    ];
    await rm(workspace, { recursive: true });
    const gone = new ChangeDiffs(workspace, blobs).content(change("a.txt", "old\n", "new\n"));
    expect([...contents, gone]).toEqual([
      { type: "diff", path: join(workspace, "a.txt"), oldText: "old\n", newText: "new\n" },
      line("no diff of a.txt: its bytes before the call were not kept"),
      line("no diff of a.txt: it changed again since the call"),
      line("no diff of link.txt: it could not be read again"),
      undefined,
      line("no diff of a.txt: it could not be read again (ENOENT)"),
    ]);
  });

  it("keeps at most 8 MiB of the turn's last texts: a file changed long ago falls back to the blob store", async () => {
    const home = await tempDir();
    const workspace = join(home, "ws");
    await mkdir(workspace);
    const diffs = new ChangeDiffs(workspace, new BlobStore(join(home, "blobs")));
    const text = (n: number, v: string) => `${String(n)}${v}`.padEnd(1024 * 1024, "x");
    const names = Array.from({ length: 9 }, (_, n) => `f${n}.txt`);
    for (const [n, name] of names.entries()) {
      await writeFile(join(workspace, name), text(n, "a"));
      expect(diffs.content(change(name, null, text(n, "a")))?.type).toBe("diff");
    }
    const again = [];
    for (const n of [0, 8]) {
      const name = `f${n}.txt`;
      await writeFile(join(workspace, name), text(n, "b"));
      again.push(diffs.content(change(name, text(n, "a"), text(n, "b")))?.type);
    }
    expect(again).toEqual(["content", "diff"]);
  });
});
