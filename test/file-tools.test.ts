import { execFileSync } from "node:child_process";
import { readdir, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { defineTool } from "../src/tools/define.js";
import { createWorkspaceTools } from "../src/tools/index.js";
import type { Tool, ToolResult } from "../src/types.js";
import { useWorkspace } from "./support/workspace.js";

const workspace = useWorkspace();

/** The tools of `root` with mini-agent's state folder at `stateDir`. */
function toolsWithState(root: string, stateDir: string) {
  const tools = new Map<string, Tool>(
    createWorkspaceTools(root, { stateDir }).map((tool) => [tool.spec.name, tool]),
  );
  return (name: string, input: unknown): Promise<ToolResult> => {
    const tool = tools.get(name);
    if (!tool) throw new Error(`no tool ${name}`);
    return tool.execute(input);
  };
}

const inState = { content: "path is inside mini-agent's state folder", isError: true };

describe("the state folder inside the workspace", () => {
  it("refuses read, write and edit of a session file, directly, absolutely and through symlinks", async () => {
    const ws = await workspace();
    const session = '{"type":"message","message":{"role":"user","content":"the prompt"}}\n';
    const file = ".mini-agent/sessions/ws-1/s1.jsonl";
    await ws.files({ [file]: session, ".mini-agent-notes/ok.txt": "mine\n" });
    await symlink(join(ws.root, file), join(ws.root, "session-link"));
    await symlink(join(ws.root, ".mini-agent"), join(ws.root, "state-link"));
    const run = toolsWithState(ws.root, join(ws.root, ".mini-agent"));
    const linked = "state-link/sessions/ws-1/s1.jsonl";
    const attempts: [string, Record<string, unknown>][] = [
      ["read", { path: file }],
      ["read", { path: join(ws.root, file) }],
      ["read", { path: "session-link" }],
      ["read", { path: linked }],
      ["edit", { path: file, oldText: "the prompt", newText: "forged" }],
      ["edit", { path: "session-link", oldText: "the prompt", newText: "forged" }],
      ["edit", { path: linked, oldText: "the prompt", newText: "forged" }],
      ["write", { path: file, content: "forged\n" }],
      ["write", { path: "session-link", content: "forged\n" }],
      ["write", { path: linked, content: "forged\n" }],
      ["write", { path: ".mini-agent/sessions/ws-1/new.jsonl", content: "forged\n" }],
      ["write", { path: "state-link/rules.json", content: "{}" }],
    ];
    const results = [];
    for (const [name, input] of attempts) results.push([name, input, await run(name, input)]);
    expect(results).toEqual(attempts.map(([name, input]) => [name, input, inState]));
    expect(await readFile(join(ws.root, file), "utf8")).toBe(session);
    expect(await readdir(join(ws.root, ".mini-agent"))).toEqual(["sessions"]);
    expect(await readdir(join(ws.root, ".mini-agent/sessions/ws-1"))).toEqual(["s1.jsonl"]);
    expect(await run("read", { path: ".mini-agent-notes/ok.txt" })).toEqual({ content: "mine" });
  });

  it("keeps ls, find and grep out of the state folder: refused by name, never walked or followed", async () => {
    const ws = await workspace();
    const record = '{"type":"message","message":{"role":"user","content":"needle in a session"}}\n';
    await ws.files({ ".mini-agent/sessions/ws-1/s1.jsonl": record, "notes.txt": "needle here\n" });
    await symlink(join(ws.root, ".mini-agent/sessions/ws-1/s1.jsonl"), join(ws.root, "s-link"));
    const run = toolsWithState(ws.root, join(ws.root, ".mini-agent"));
    for (const [name, input] of [
      ["ls", { path: ".mini-agent" }],
      ["ls", { path: ".mini-agent/sessions" }],
      ["find", { pattern: "*.jsonl", path: ".mini-agent" }],
      ["grep", { pattern: "needle", path: ".mini-agent" }],
      ["grep", { pattern: "needle", path: "s-link" }],
    ] as const) {
      expect([name, input, await run(name, input)]).toEqual([name, input, inState]);
    }
    expect(await run("find", { pattern: "*.jsonl" })).toEqual({
      content: "no files match *.jsonl",
    });
    expect(await run("grep", { pattern: "needle" })).toEqual({
      content: "notes.txt:1: needle here\n[skipped 1 entry: 1 link into the state folder]",
    });
  });

  it("compares real paths, so a state folder named through a symlink is refused too", async () => {
    const ws = await workspace();
    await ws.files({ "state/s.jsonl": "record\n" });
    await symlink(join(ws.root, "state"), join(ws.outside, "home"));
    const run = toolsWithState(ws.root, join(ws.outside, "home"));
    expect(await run("read", { path: "state/s.jsonl" })).toEqual(inState);
    expect(await run("write", { path: "state/s.jsonl", content: "x" })).toEqual(inState);
    expect(await readFile(join(ws.root, "state/s.jsonl"), "utf8")).toBe("record\n");
  });
});

describe("special files and paths", () => {
  it("refuses to read or edit a FIFO without blocking", { timeout: 10_000 }, async () => {
    const ws = await workspace();
    execFileSync("mkfifo", [join(ws.root, "pipe")]);
    expect(await ws.run("read", { path: "pipe" })).toEqual({
      content: "pipe is not a regular file",
      isError: true,
    });
    expect(await ws.run("edit", { path: "pipe", oldText: "a", newText: "b" })).toEqual({
      content: "pipe is not a regular file",
      isError: true,
    });
    expect(await ws.run("write", { path: "pipe", content: "x" })).toEqual({
      content: "pipe is not a regular file",
      isError: true,
    });
  });

  it("treats a trailing slash as naming a folder, never the file", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "keep\n", "dir/in.txt": "in\n" });
    const notFolder = { content: "a.txt is not a folder", isError: true };
    expect(await ws.run("write", { path: "a.txt/", content: "gone" })).toEqual(notFolder);
    expect(await ws.run("edit", { path: "a.txt/", oldText: "keep", newText: "x" })).toEqual(
      notFolder,
    );
    expect(await ws.run("read", { path: "a.txt/" })).toEqual(notFolder);
    expect(await ws.run("write", { path: "new/", content: "x" })).toEqual({
      content: "new/ names a folder: write needs a file path",
      isError: true,
    });
    expect(await ws.run("write", { path: "dir/", content: "x" })).toEqual({
      content: "dir is a folder",
      isError: true,
    });
    expect(await readFile(join(ws.root, "a.txt"), "utf8")).toBe("keep\n");
    expect((await readdir(ws.root)).sort()).toEqual(["a.txt", "dir"]);
  });

  it("writes and edits files whose names take all 255 bytes, ASCII or multibyte", async () => {
    const ws = await workspace();
    const names = ["a".repeat(255), `${"é".repeat(127)}a`];
    for (const name of names) {
      expect(Buffer.byteLength(name)).toBe(255);
      expect(await ws.run("write", { path: name, content: "one\n" })).toEqual({
        content: `created ${name} (4 bytes)`,
      });
      expect(await ws.run("edit", { path: name, oldText: "one", newText: "two" })).toEqual({
        content: `edited ${name}: replaced 1 occurrence at line 1`,
      });
      expect(await readFile(join(ws.root, name), "utf8")).toBe("two\n");
    }
    expect((await readdir(ws.root)).sort()).toEqual([...names].sort());
  });
});

describe("edit and bytes", () => {
  it("refuses a file that is not valid UTF-8 and leaves it untouched", async () => {
    const ws = await workspace();
    const latin1 = Buffer.from('name = "Jos\xe9"\nother = 1\n', "latin1");
    const cut = Buffer.concat([Buffer.from("ok\n"), Buffer.from([0xe2, 0x82])]);
    await ws.files({ "l1.txt": latin1, "cut.txt": cut });
    expect(await ws.run("edit", { path: "l1.txt", oldText: "other = 1", newText: "x" })).toEqual({
      content: "l1.txt is not valid UTF-8 (byte 0xE9 at offset 11); edit changes UTF-8 text only",
      isError: true,
    });
    expect(await ws.run("edit", { path: "cut.txt", oldText: "ok", newText: "x" })).toEqual({
      content: "cut.txt is not valid UTF-8 (byte 0xE2 at offset 3); edit changes UTF-8 text only",
      isError: true,
    });
    expect(await readFile(join(ws.root, "l1.txt"))).toEqual(latin1);
    expect(await readFile(join(ws.root, "cut.txt"))).toEqual(cut);
    expect(await ws.run("read", { path: "l1.txt" })).toEqual({
      content: 'name = "Jos\uFFFD"\nother = 1',
    });
  });

  it("keeps every byte outside the replaced span: BOM, CRLF, emoji", async () => {
    const ws = await workspace();
    const before = "\uFEFF😀 first\r\nsecond 🧪 line\r\n\tthird é\r\nno newline 🚀";
    await ws.files({ "u.txt": Buffer.from(before) });
    await ws.run("read", { path: "u.txt" });
    expect(
      await ws.run("edit", { path: "u.txt", oldText: "🧪 line\n\tthird", newText: "🔬\nthe end" }),
    ).toEqual({ content: "edited u.txt: replaced 1 occurrence at line 2" });
    expect(await readFile(join(ws.root, "u.txt"))).toEqual(
      Buffer.from("\uFEFF😀 first\r\nsecond 🔬\r\nthe end é\r\nno newline 🚀"),
    );
  });

  it("replaces a whole file that is not valid UTF-8 with write", async () => {
    const ws = await workspace();
    await ws.files({ "l1.txt": Buffer.from("Jos\xe9\n", "latin1") });
    expect(await ws.run("read", { path: "l1.txt" })).toEqual({ content: "Jos\uFFFD" });
    expect(await ws.run("write", { path: "l1.txt", content: "José\n" })).toEqual({
      content: "replaced l1.txt (6 bytes)",
    });
    expect(await readFile(join(ws.root, "l1.txt"), "utf8")).toBe("José\n");
  });
});

describe("edit on big inputs", () => {
  it("bounds the error for many matches and lists the first lines only", {
    timeout: 10_000,
  }, async () => {
    const ws = await workspace();
    await ws.files({ "x.txt": "x\n".repeat(51_200) });
    await ws.run("read", { path: "x.txt" });
    const lines = Array.from({ length: 20 }, (_, i) => i + 1).join(", ");
    expect(await ws.run("edit", { path: "x.txt", oldText: "x", newText: "y" })).toEqual({
      content: `oldText matches 51200 times in x.txt (lines ${lines} and 51180 more): include more surrounding text to make it unique, or set replaceAll`,
      isError: true,
    });
    expect(
      await ws.run("edit", { path: "x.txt", oldText: "x", newText: "y", replaceAll: true }),
    ).toEqual({ content: "edited x.txt: replaced 51200 occurrences at line 1" });
    expect(await readFile(join(ws.root, "x.txt"), "utf8")).toBe("y\n".repeat(51_200));
  });

  it("answers a search without a match in a 10 MB file promptly", { timeout: 10_000 }, async () => {
    const ws = await workspace();
    const line = `${"word ".repeat(40)}end\n`;
    const body = line.repeat(Math.ceil(10_000_000 / line.length));
    await ws.files({ "big.txt": `const answer = 42;\n${body}` });
    await ws.run("read", { path: "big.txt", limit: 1 });
    const absent = `absent ${"0123456789".repeat(300)}`;
    expect(await ws.run("edit", { path: "big.txt", oldText: absent, newText: "y" })).toEqual({
      content: "oldText not found in big.txt",
      isError: true,
    });
    const near = await ws.run("edit", {
      path: "big.txt",
      oldText: "const answer = 43;",
      newText: "",
    });
    expect(near).toEqual({
      content: 'oldText not found in big.txt; the closest line is 1: "const answer = 42;"',
      isError: true,
    });
  });

  it("stops a big edit within two seconds of an abort", { timeout: 15_000 }, async () => {
    const ws = await workspace();
    await ws.files({ "x.txt": "x\n".repeat(5_000_000), "w.txt": "a b\n".repeat(2_500_000) });
    await ws.run("read", { path: "x.txt", limit: 1 });
    await ws.run("read", { path: "w.txt", limit: 1 });
    for (const input of [
      { path: "x.txt", oldText: "x", newText: "y" },
      { path: "w.txt", oldText: "a c", newText: "y" },
      { path: "x.txt", oldText: "x", newText: "y", replaceAll: true },
    ]) {
      const controller = new AbortController();
      const pending = ws.run("edit", input, controller.signal);
      await new Promise((resolve) => setTimeout(resolve, 20));
      controller.abort();
      const aborted = Date.now();
      const result = await pending;
      expect(Date.now() - aborted).toBeLessThan(2000);
      expect(result.isError).toBe(true);
    }
    expect(await readFile(join(ws.root, "x.txt"), "utf8")).toBe("x\n".repeat(5_000_000));
    expect((await readdir(ws.root)).sort()).toEqual(["w.txt", "x.txt"]);
  });
});

describe("read and cut text", () => {
  it("cuts a long line between characters, never inside one", async () => {
    const ws = await workspace();
    await ws.files({
      "emoji.txt": `${"a".repeat(49_999)}😀${"b".repeat(10)}\n`,
      "accent.txt": `${"a".repeat(49_999)}éb`,
    });
    expect(await ws.run("read", { path: "emoji.txt" })).toEqual({
      content: `${"a".repeat(49_999)}\n[truncated: line 1 goes on for 14 more bytes; use grep or bash to inspect it]`,
    });
    expect(await ws.run("read", { path: "accent.txt" })).toEqual({
      content: `${"a".repeat(49_999)}\n[truncated: line 1 goes on for 3 more bytes; use grep or bash to inspect it]`,
    });
  });
});

describe("tool input", () => {
  it("returns an input nested 10,000 deep as that call's error", async () => {
    const Node = Type.Recursive((This) =>
      Type.Object({ name: Type.String(), children: Type.Optional(Type.Array(This)) }),
    );
    const tool = defineTool({
      name: "tree",
      description: "",
      input: Type.Object({ tree: Node }),
      run: async () => ({ content: "ran" }),
    });
    type Tree = { name: string; children?: Tree[] };
    const top: Tree = { name: "root" };
    let deepest = top;
    for (let i = 0; i < 10_000; i++) {
      const child: Tree = { name: "child" };
      deepest.children = [child];
      deepest = child;
    }
    expect(await tool.execute({ tree: top })).toEqual({
      content: "invalid tree input: nested more than 64 levels deep",
      isError: true,
    });
    expect(await tool.execute({ tree: { name: "a", children: [{ name: "b" }] } })).toEqual({
      content: "ran",
    });
    const ws = await workspace();
    expect(await ws.run("read", { path: "x", extra: top })).toEqual({
      content: "invalid read input: nested more than 64 levels deep",
      isError: true,
    });
  });
});
