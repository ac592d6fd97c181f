import { createHash } from "node:crypto";
import { existsSync, type FSWatcher, readFileSync, watch, writeFileSync } from "node:fs";
import { readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { Journal } from "../src/runner/journal.js";
import { SessionRunner } from "../src/runner/runner.js";
import { call, done, FakeClient, text } from "../src/testing/fake-client.js";
import { wellFormed as wellFormedText } from "../src/text.js";
import { createWorkspaceTools, SeenFiles } from "../src/tools/index.js";
import { withSeenResults } from "../src/tools/seen-results.js";
import type { Message, Tool, ToolResult } from "../src/types.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();

/** A workspace with `files` in it, and its tools sharing `seen`. */
async function workspace(files: Record<string, string | Buffer>, seen?: SeenFiles) {
  const root = await tempDir();
  for (const [name, content] of Object.entries(files)) await writeFile(join(root, name), content);
  const tools = createWorkspaceTools(root, seen ? { seen } : {});
  return { root, tools, run: runner(tools), file: (name: string) => join(root, name) };
}

function runner(tools: Tool[]) {
  return (name: string, input: unknown): Promise<ToolResult> => {
    const tool = tools.find((each) => each.spec.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    return tool.execute(input);
  };
}

const notRead = (path: string, verb: string): ToolResult => ({
  content: `${path} exists and has not been read in this session: read it first, then ${verb}`,
  isError: true,
});

describe("edit and write over files the agent has not seen", () => {
  it("refuses an edit of a file that was never read, and leaves it untouched", async () => {
    const ws = await workspace({ "a.ts": "one\ntwo\n" });
    expect(await ws.run("edit", { path: "a.ts", oldText: "two", newText: "TWO" })).toEqual(
      notRead("a.ts", "edit"),
    );
    expect(await readFile(ws.file("a.ts"), "utf8")).toBe("one\ntwo\n");
    expect(await ws.run("read", { path: "a.ts" })).toEqual({ content: "one\ntwo" });
    expect(await ws.run("edit", { path: "a.ts", oldText: "two", newText: "TWO" })).toEqual({
      content: "edited a.ts: replaced 1 occurrence at line 2",
    });
    expect(await readFile(ws.file("a.ts"), "utf8")).toBe("one\nTWO\n");
  });

  it("refuses a write over a file that was never read, and leaves it untouched", async () => {
    const ws = await workspace({ "a.ts": "one\n" });
    expect(await ws.run("write", { path: "a.ts", content: "mine\n" })).toEqual(
      notRead("a.ts", "write"),
    );
    expect(await readFile(ws.file("a.ts"), "utf8")).toBe("one\n");
  });

  it("creates a new file without a read, and counts its own write as seen", async () => {
    const ws = await workspace({});
    expect(await ws.run("write", { path: "new.ts", content: "a\nb\n" })).toEqual({
      content: "created new.ts (4 bytes)",
    });
    expect(await ws.run("edit", { path: "new.ts", oldText: "b", newText: "B" })).toEqual({
      content: "edited new.ts: replaced 1 occurrence at line 2",
    });
    expect(await ws.run("write", { path: "new.ts", content: "c\n" })).toEqual({
      content: "replaced new.ts (2 bytes)",
    });
    expect(await readFile(ws.file("new.ts"), "utf8")).toBe("c\n");
  });

  it("lets the agent edit again and again after its own edits without reading", async () => {
    const ws = await workspace({ "a.ts": "one\ntwo\nthree\n" });
    await ws.run("read", { path: "a.ts" });
    const results = [
      await ws.run("edit", { path: "a.ts", oldText: "one", newText: "1" }),
      await ws.run("edit", { path: "a.ts", oldText: "two", newText: "2" }),
      await ws.run("edit", { path: "a.ts", oldText: "three", newText: "3" }),
    ];
    expect(results).toEqual([
      { content: "edited a.ts: replaced 1 occurrence at line 1" },
      { content: "edited a.ts: replaced 1 occurrence at line 2" },
      { content: "edited a.ts: replaced 1 occurrence at line 3" },
    ]);
    expect(await readFile(ws.file("a.ts"), "utf8")).toBe("1\n2\n3\n");
  });

  it("knows a file by its real path, whatever name reached it", async () => {
    const ws = await workspace({ "a.ts": "one\n" });
    await ws.run("read", { path: "./sub/../a.ts" });
    expect(await ws.run("edit", { path: ws.file("a.ts"), oldText: "one", newText: "1" })).toEqual({
      content: "edited a.ts: replaced 1 occurrence at line 1",
    });
  });

  it("refuses to replace an unseen binary file, which read cannot show", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]);
    const ws = await workspace({ "logo.png": png });
    expect(await ws.run("read", { path: "logo.png" })).toEqual({
      content: "logo.png is a binary file: read shows text only",
      isError: true,
    });
    expect(await ws.run("write", { path: "logo.png", content: "text\n" })).toEqual({
      content:
        "logo.png exists and has not been read in this session, and read cannot show it (a binary file): write will not replace it unseen; if it should go, remove it first (bash: rm), then write",
      isError: true,
    });
    expect(await readFile(ws.file("logo.png"))).toEqual(png);
    // Bytes the agent wrote itself are seen, binary or not.
    await ws.run("write", { path: "own.bin", content: "a\u0000b" });
    expect(await ws.run("write", { path: "own.bin", content: "c\u0000d" })).toEqual({
      content: "replaced own.bin (3 bytes)",
    });
  });
});

describe("edit and write over files changed since the agent saw them", () => {
  it("refuses an edit after an outside change of whitespace, shows the line, and edits once read again", async () => {
    const ws = await workspace({ "a.ts": "one\ntwo()\nthree\n" });
    await ws.run("read", { path: "a.ts" });
    await writeFile(ws.file("a.ts"), "one\n  two()\nthree\n");
    expect(await ws.run("edit", { path: "a.ts", oldText: "three", newText: "3" })).toEqual({
      content:
        "a.ts has changed since you last read or wrote it: read it again, then edit\nline 2 differs (was 1 line); it now reads:\n2:   two()",
      isError: true,
    });
    expect(await readFile(ws.file("a.ts"), "utf8")).toBe("one\n  two()\nthree\n");
    await ws.run("read", { path: "a.ts" });
    expect(await ws.run("edit", { path: "a.ts", oldText: "three", newText: "3" })).toEqual({
      content: "edited a.ts: replaced 1 occurrence at line 3",
    });
    expect(await readFile(ws.file("a.ts"), "utf8")).toBe("one\n  two()\n3\n");
  });

  it("refuses a write after an outside change, and names removed and added lines", async () => {
    const ws = await workspace({ "a.ts": "a\nb\nc\nd\n" });
    await ws.run("read", { path: "a.ts" });
    await writeFile(ws.file("a.ts"), "a\nd\n");
    expect(await ws.run("write", { path: "a.ts", content: "x\n" })).toEqual({
      content:
        "a.ts has changed since you last read or wrote it: read it again, then write\nlines 2–3 were removed",
      isError: true,
    });
    await writeFile(ws.file("a.ts"), "a\nb\nb2\nb3\nc\nd\n");
    expect(await ws.run("write", { path: "a.ts", content: "x\n" })).toEqual({
      content:
        "a.ts has changed since you last read or wrote it: read it again, then write\nlines 3–4 are new; they read:\n3: b2\n4: b3",
      isError: true,
    });
    expect(await readFile(ws.file("a.ts"), "utf8")).toBe("a\nb\nb2\nb3\nc\nd\n");
  });

  it("bounds what it shows of a big change to 20 lines and 2,000 characters, cut on code points", async () => {
    const before = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n");
    const ws = await workspace({ "a.txt": `${before}\n`, "b.txt": "x\n" });
    await ws.run("read", { path: "a.txt" });
    await ws.run("read", { path: "b.txt" });
    const after = Array.from({ length: 100 }, (_, i) => `changed ${i + 1}`).join("\n");
    await writeFile(ws.file("a.txt"), `${after}\n`);
    const shown = Array.from({ length: 20 }, (_, i) => `${i + 1}: changed ${i + 1}`).join("\n");
    expect(await ws.run("write", { path: "a.txt", content: "" })).toEqual({
      content: `a.txt has changed since you last read or wrote it: read it again, then write\nlines 1–100 differ (were 100 lines); they now read:\n${shown}\n[and 80 more changed lines]`,
      isError: true,
    });
    await writeFile(ws.file("b.txt"), `${"a😀".repeat(3000)}\n`);
    const result = await ws.run("edit", { path: "b.txt", oldText: "a", newText: "b" });
    const head = "b.txt has changed since you last read or wrote it: read it again, then edit\n";
    const detail = "line 1 differs (was 1 line); it now reads:\n";
    const line = `1: ${"a😀".repeat(3000)}`.slice(0, 1999);
    expect(result).toEqual({ content: `${head}${detail}${line} [line cut]`, isError: true });
    expect(wellFormedText(result.content)).toBe(result.content);
  });

  it("says only that a file of more than 100,000 lines changed, not where", async () => {
    const many = "x\n".repeat(100_001);
    const ws = await workspace({ "many.txt": many });
    await ws.run("read", { path: "many.txt", limit: 1 });
    await writeFile(ws.file("many.txt"), `y\n${many.slice(2)}`);
    expect(await ws.run("edit", { path: "many.txt", oldText: "y\n", newText: "z\n" })).toEqual({
      content: "many.txt has changed since you last read or wrote it: read it again, then edit",
      isError: true,
    });
  });

  it("counts only content: a touched file with the same bytes is not stale", async () => {
    const ws = await workspace({ "a.ts": "one\n" });
    await ws.run("read", { path: "a.ts" });
    await utimes(ws.file("a.ts"), new Date(2001, 1, 1), new Date(2001, 1, 1));
    await writeFile(ws.file("a.ts"), "one\n");
    expect(await ws.run("edit", { path: "a.ts", oldText: "one", newText: "1" })).toEqual({
      content: "edited a.ts: replaced 1 occurrence at line 1",
    });
  });

  it("counts a ranged read as seeing the whole file, as it was when read", async () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n");
    const ws = await workspace({ "a.txt": `${lines}\n`, "b.txt": `${lines}\n` });
    expect(await ws.run("read", { path: "a.txt", offset: 3, limit: 2 })).toEqual({
      content:
        "line 3\nline 4\n[truncated: 43 more bytes after line 4; read with offset=5 to continue]",
    });
    expect(await ws.run("edit", { path: "a.txt", oldText: "line 9", newText: "nine" })).toEqual({
      content: "edited a.txt: replaced 1 occurrence at line 9",
    });
    await ws.run("read", { path: "b.txt", offset: 2, limit: 1 });
    await writeFile(ws.file("b.txt"), `${lines.replace("line 9", "line 9 (theirs)")}\n`);
    expect(await ws.run("edit", { path: "b.txt", oldText: "line 2", newText: "two" })).toEqual({
      content:
        "b.txt has changed since you last read or wrote it: read it again, then edit\nline 9 differs (was 1 line); it now reads:\n9: line 9 (theirs)",
      isError: true,
    });
  });

  it("hashes bytes: edits of CRLF and BOM files keep them, and its own edits stay seen", async () => {
    const ws = await workspace({ "w.txt": Buffer.from("\uFEFFone\r\ntwo\r\n") });
    expect(await ws.run("read", { path: "w.txt" })).toEqual({ content: "\uFEFFone\ntwo" });
    await ws.run("edit", { path: "w.txt", oldText: "two", newText: "2" });
    expect(await ws.run("edit", { path: "w.txt", oldText: "one\n", newText: "1\n" })).toEqual({
      content: "edited w.txt: replaced 1 occurrence at line 1",
    });
    expect(await readFile(ws.file("w.txt"))).toEqual(Buffer.from("\uFEFF1\r\n2\r\n"));
    // The same text with LF line endings is different bytes: a change.
    await writeFile(ws.file("w.txt"), "\uFEFF1\n2\n");
    expect(await ws.run("edit", { path: "w.txt", oldText: "2", newText: "3" })).toMatchObject({
      isError: true,
    });
    expect(await readFile(ws.file("w.txt"), "utf8")).toBe("\uFEFF1\n2\n");
  });
});

describe("what the agent has seen, across approval, resume and compaction", () => {
  it("refuses an edit when the file changed while the user was approving it", async () => {
    const root = await tempDir();
    await writeFile(join(root, "a.ts"), "one\ntwo\n");
    const user: Message = { role: "user", content: "change two" };
    const client = new FakeClient([
      [call("c1", "read", { path: "a.ts" }), done],
      [call("c2", "edit", { path: "a.ts", oldText: "two", newText: "TWO" }), done],
      [call("c3", "read", { path: "a.ts" }), done],
      [call("c4", "edit", { path: "a.ts", oldText: "two", newText: "TWO" }), done],
      [text("done"), done],
    ]);
    let asked = 0;
    const result = await runAgent({
      client,
      tools: createWorkspaceTools(root),
      system: "",
      messages: [user],
      // The user answers the first edit after a formatter rewrote the file.
      beforeToolCall: async (request) => {
        if (request.name === "edit" && asked++ === 0)
          await writeFile(join(root, "a.ts"), "one\ntwo\n\n// formatted\n");
        return { approved: true };
      },
    });
    expect(result.status).toBe("completed");
    expect(result.messages.filter((message) => message.role === "tool")).toEqual([
      { role: "tool", toolCallId: "c1", content: "one\ntwo", isError: false },
      {
        role: "tool",
        toolCallId: "c2",
        content:
          "a.ts has changed since you last read or wrote it: read it again, then edit\nlines 3–4 are new; they read:\n3: \n4: // formatted",
        isError: true,
      },
      { role: "tool", toolCallId: "c3", content: "one\ntwo\n\n// formatted", isError: false },
      {
        role: "tool",
        toolCallId: "c4",
        content: "edited a.ts: replaced 1 occurrence at line 2",
        isError: false,
      },
    ]);
    expect(await readFile(join(root, "a.ts"), "utf8")).toBe("one\nTWO\n\n// formatted\n");
  });

  it("forgets everything on clear() and in new tools (a resume), and shares a state passed in", async () => {
    const seen = new SeenFiles();
    const ws = await workspace({ "a.ts": "one\n" }, seen);
    await ws.run("read", { path: "a.ts" });
    const resumed = runner(createWorkspaceTools(ws.root));
    expect(await resumed("edit", { path: "a.ts", oldText: "one", newText: "1" })).toEqual(
      notRead("a.ts", "edit"),
    );
    const sharing = runner(createWorkspaceTools(ws.root, { seen }));
    expect(await sharing("edit", { path: "a.ts", oldText: "one", newText: "1" })).toEqual({
      content: "edited a.ts: replaced 1 occurrence at line 1",
    });
    seen.clear();
    expect(await ws.run("edit", { path: "a.ts", oldText: "1", newText: "one" })).toEqual(
      notRead("a.ts", "edit"),
    );
    expect(await ws.run("write", { path: "a.ts", content: "x" })).toEqual(notRead("a.ts", "write"));
    expect(await readFile(ws.file("a.ts"), "utf8")).toBe("1\n");
  });
});

/**
 * Runs `change` once, synchronously, when the tool creates its temporary file in `folder`: after
 * the tool checked the file, before its rename. Records whether `before()` still held at that
 * moment (so the change truly fell between the check and the rename).
 */
function changeWhenTempAppears(folder: string, before: () => boolean, change: () => void) {
  const state = { changed: false, sawBefore: false };
  const watcher: FSWatcher = watch(folder, (_event, name) => {
    if (state.changed || !name?.startsWith(".mini-agent-")) return;
    state.changed = true;
    state.sawBefore = before();
    change();
  });
  return { state, close: () => watcher.close() };
}

describe("a change between the tool's read and its rename", () => {
  const big = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1}`).join("\n");

  it("edit writes nothing when the file changes after it was read", {
    timeout: 20_000,
  }, async () => {
    const ws = await workspace({ "big.txt": big });
    await ws.run("read", { path: "big.txt" });
    const theirs = big.replace("line 2\n", "line 2 (theirs)\n");
    const watcher = changeWhenTempAppears(
      ws.root,
      () => readFileSync(ws.file("big.txt"), "utf8") === big,
      () => writeFileSync(ws.file("big.txt"), theirs),
    );
    try {
      const result = await ws.run("edit", {
        path: "big.txt",
        oldText: "line 49999\n",
        newText: "x\n",
      });
      expect(watcher.state).toEqual({ changed: true, sawBefore: true });
      expect(result).toEqual({
        content:
          "big.txt changed while edit was writing it; nothing was written: read it again, then edit\nline 2 differs (was 1 line); it now reads:\n2: line 2 (theirs)",
        isError: true,
      });
    } finally {
      watcher.close();
    }
    expect(await readFile(ws.file("big.txt"), "utf8")).toBe(theirs);
    expect(await readdir(ws.root)).toEqual(["big.txt"]);
  });

  it("write writes nothing when the file changes, or appears, after it was checked", {
    timeout: 20_000,
  }, async () => {
    const ws = await workspace({ "big.txt": big });
    await ws.run("read", { path: "big.txt" });
    const theirs = `${big}\nmore`;
    const first = changeWhenTempAppears(
      ws.root,
      () => readFileSync(ws.file("big.txt"), "utf8") === big,
      () => writeFileSync(ws.file("big.txt"), theirs),
    );
    try {
      expect(await ws.run("write", { path: "big.txt", content: big.repeat(2) })).toEqual({
        content:
          "big.txt changed while write was writing it; nothing was written: read it again, then write\nlines 50000–50001 differ (was 1 line); they now read:\n50000: line 50000\n50001: more",
        isError: true,
      });
      expect(first.state).toEqual({ changed: true, sawBefore: true });
    } finally {
      first.close();
    }
    expect(await readFile(ws.file("big.txt"), "utf8")).toBe(theirs);

    await rm(ws.file("big.txt"));
    const second = changeWhenTempAppears(
      ws.root,
      () => !existsSync(ws.file("new.txt")),
      () => writeFileSync(ws.file("new.txt"), "theirs\n"),
    );
    try {
      expect(await ws.run("write", { path: "new.txt", content: big })).toEqual({
        content:
          "new.txt appeared while write was writing it; nothing was written: read it, then write",
        isError: true,
      });
      expect(second.state).toEqual({ changed: true, sawBefore: true });
    } finally {
      second.close();
    }
    expect(await readFile(ws.file("new.txt"), "utf8")).toBe("theirs\n");
    expect((await readdir(ws.root)).sort()).toEqual(["new.txt"]);
  });
});

describe("what a resumed session recalls of what its tools saw", () => {
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

  /** A workspace's tools noting what they saw, run by the loop over a scripted round. */
  async function noting(files: Record<string, string>, calls: [string, Record<string, unknown>][]) {
    const seen = new SeenFiles();
    const ws = await workspace(files, seen);
    const tools = withSeenResults(ws.tools, seen, ws.root);
    const client = new FakeClient([
      [...calls.map(([name, input], at) => call(`c${at}`, name, input)), done],
      [text("ok"), done],
    ]);
    const run = await runAgent({
      client,
      tools,
      system: "",
      messages: [{ role: "user", content: "go" }],
    });
    return { ...ws, seen, tools, messages: run.messages };
  }

  it("notes with each successful read, write and edit the file's path and sha256, not with a failure", async () => {
    const ws = await noting({ "a.txt": "a1\n", "c.txt": "one\ntwo\nthree\n" }, [
      ["read", { path: "c.txt", offset: 2, limit: 1 }],
      ["edit", { path: "a.txt", oldText: "a1", newText: "a2" }],
      ["write", { path: "sub/b.txt", content: "b1\n" }],
      ["ls", {}],
    ]);
    const results = ws.messages.filter((message) => message.role === "tool");
    expect(results.map((message) => message.seen)).toEqual([
      { path: "c.txt", sha256: sha256("one\ntwo\nthree\n") },
      undefined,
      { path: "sub/b.txt", sha256: sha256("b1\n") },
      undefined,
    ]);
  });

  it("lets fresh tools edit an unchanged file at once, refuses a changed one, and says what is true of the rest", async () => {
    const ws = await noting({ "a.txt": "a1\n", "c.txt": "c1\n", "d.txt": "d1\n" }, [
      ["write", { path: "a.txt", content: "a1\n" }],
      ["read", { path: "a.txt" }],
      ["read", { path: "c.txt" }],
    ]);
    await writeFile(ws.file("c.txt"), "c1 changed\n");
    const seen = new SeenFiles();
    seen.recall(ws.messages, ws.root);
    const resumed = runner(createWorkspaceTools(ws.root, { seen }));
    expect(await resumed("edit", { path: "a.txt", oldText: "a1", newText: "a2" })).toEqual({
      content: "edited a.txt: replaced 1 occurrence at line 1",
    });
    expect(await resumed("edit", { path: "c.txt", oldText: "c1", newText: "C1" })).toEqual({
      content: "c.txt has changed since you last read or wrote it: read it again, then edit",
      isError: true,
    });
    expect(await resumed("edit", { path: "d.txt", oldText: "d1", newText: "D1" })).toEqual(
      notRead("d.txt", "edit"),
    );
    seen.recall(ws.messages, ws.root, "rewind");
    expect(await resumed("write", { path: "d.txt", content: "x" })).toEqual({
      content:
        "d.txt exists and has not been read since the conversation was rewound: read it first, then write",
      isError: true,
    });
    seen.clear("compaction");
    expect(await resumed("edit", { path: "a.txt", oldText: "a2", newText: "a3" })).toEqual({
      content:
        "a.txt exists and has not been read since the conversation was compacted: read it first, then edit",
      isError: true,
    });
  });

  it("tells a session an older version wrote, whose results say nothing of what they saw, to read again", async () => {
    const ws = await noting({ "a.txt": "a1\n", "b.bin": "\0\0" }, [["read", { path: "a.txt" }]]);
    const older = ws.messages.map((message) => {
      if (message.role !== "tool") return message;
      const { seen: _seen, ...rest } = message;
      return rest;
    });
    const seen = new SeenFiles();
    seen.recall(older, ws.root);
    const resumed = runner(createWorkspaceTools(ws.root, { seen }));
    const since = "exists and has not been read since this session was resumed";
    expect(await resumed("edit", { path: "a.txt", oldText: "a1", newText: "a2" })).toEqual({
      content: `a.txt ${since}, and this session was written by an older version, which kept no record of what was read: read it again, then edit`,
      isError: true,
    });
    expect(await resumed("write", { path: "b.bin", content: "x" })).toEqual({
      content: `b.bin ${since}, and read cannot show it (a binary file): write will not replace it unseen; if it should go, remove it first (bash: rm), then write`,
      isError: true,
    });
    expect(await readFile(ws.file("a.txt"), "utf8")).toBe("a1\n");
  });

  it("recalls, after a rewind, what the history gone back to saw, and nothing of the turns left behind", async () => {
    const seen = new SeenFiles();
    const ws = await workspace({ "b.txt": "b1\n" }, seen);
    const tools = withSeenResults(ws.tools, seen, ws.root);
    const runnerOf = new SessionRunner({
      client: new FakeClient([
        [call("c1", "write", { path: "a.txt", content: "a1\n" }), done],
        [text("wrote"), done],
        [call("c2", "read", { path: "b.txt" }), done],
        [text("read"), done],
        [
          call("c3", "edit", { path: "a.txt", oldText: "a1", newText: "a2" }),
          call("c4", "edit", { path: "b.txt", oldText: "b1", newText: "b2" }),
          done,
        ],
        [text("edited"), done],
      ]),
      journal: new Journal(),
      turn: async () => ({ system: "", tools }),
      info: { model: "m", workspace: ws.root, sandbox: "off" },
      seen,
    });
    await runnerOf.runTurn("write a");
    const afterFirst = [...runnerOf.messages];
    await runnerOf.runTurn("read b");
    runnerOf.restart(afterFirst, undefined);
    await runnerOf.runTurn("edit both");
    expect(runnerOf.messages.slice(-3, -1)).toEqual([
      {
        role: "tool",
        toolCallId: "c3",
        content: "edited a.txt: replaced 1 occurrence at line 1",
        isError: false,
        seen: { path: "a.txt", sha256: sha256("a2\n") },
      },
      {
        role: "tool",
        toolCallId: "c4",
        content:
          "b.txt exists and has not been read since the conversation was rewound: read it first, then edit",
        isError: true,
      },
    ]);
  });
});
