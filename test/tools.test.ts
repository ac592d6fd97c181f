import {
  chmod,
  lstat,
  mkdir,
  readFile,
  readlink,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { defineTool } from "../src/tools/define.js";
import { createWorkspaceTools } from "../src/tools/index.js";
import { useWorkspace } from "./support/workspace.js";

const workspace = useWorkspace();

describe("workspace tools", () => {
  it("exposes each tool's schema as its spec", () => {
    const specs = createWorkspaceTools("/ws").map((tool) => tool.spec);
    expect(specs.map((spec) => spec.name)).toEqual([
      "read",
      "ls",
      "find",
      "grep",
      "write",
      "edit",
      "bash",
    ]);
    const read = specs[0];
    expect(read?.inputSchema).toMatchObject({
      type: "object",
      required: ["path"],
      properties: { path: { type: "string" }, offset: { type: "integer", minimum: 1 } },
    });
  });

  it("reads, truncates, writes nested paths, and rejects symlink escapes", async () => {
    const ws = await workspace();
    await ws.files({ "notes.txt": "alpha\nbeta\ngamma\n" });
    expect(await ws.run("read", { path: "notes.txt" })).toEqual({ content: "alpha\nbeta\ngamma" });
    expect(await ws.run("read", { path: "notes.txt", offset: 2, limit: 1 })).toEqual({
      content: "beta\n[truncated: 6 more bytes after line 2; read with offset=3 to continue]",
    });
    expect(await ws.run("write", { path: "deep/er/new.txt", content: "hi" })).toEqual({
      content: "created deep/er/new.txt (2 bytes)",
    });
    expect(await readFile(join(ws.root, "deep/er/new.txt"), "utf8")).toBe("hi");
    await symlink(ws.outside, join(ws.root, "out"));
    await symlink(join(ws.outside, "secret.txt"), join(ws.root, "secret-link"));
    for (const input of [{ path: "out/secret.txt" }, { path: "secret-link" }]) {
      expect(await ws.run("read", input)).toEqual({
        content: "path escapes workspace",
        isError: true,
      });
    }
    expect(await ws.run("write", { path: "out/planted.txt", content: "x" })).toEqual({
      content: "path escapes workspace",
      isError: true,
    });
    await expect(stat(join(ws.outside, "planted.txt"))).rejects.toThrow(/ENOENT/);
  });

  it("returns invalid input as a readable error", async () => {
    const ws = await workspace();
    expect(await ws.run("read", { path: 7 })).toEqual({
      content: "invalid read input: path must be a string",
      isError: true,
    });
    expect(await ws.run("read", null)).toEqual({
      content: "invalid read input: path must be a string",
      isError: true,
    });
    expect(await ws.run("read", { path: "a", offset: 0 })).toEqual({
      content: "invalid read input: offset must be at least 1",
      isError: true,
    });
    expect(await ws.run("edit", { path: "a", oldText: "", newText: "b" })).toEqual({
      content: "invalid edit input: oldText must not be empty",
      isError: true,
    });
    expect(await ws.run("write", ["path"])).toEqual({
      content: "invalid write input: input must be an object",
      isError: true,
    });
    expect(await ws.run("bash", { command: "true", timeout: 601 })).toEqual({
      content: "invalid bash input: timeout must be at most 600",
      isError: true,
    });
  });

  it("returns a tool that fails because of the abort as aborted, and rethrows the unexpected", async () => {
    const controller = new AbortController();
    const tool = defineTool({
      name: "slow",
      description: "",
      input: Type.Object({ fail: Type.Boolean() }),
      run: async ({ fail }) => {
        if (!fail) controller.abort();
        throw new Error("stream closed");
      },
    });
    expect(await tool.execute({ fail: false }, controller.signal)).toEqual({
      content: "slow aborted",
      isError: true,
    });
    await expect(tool.execute({ fail: true })).rejects.toThrow("stream closed");
  });

  it("reports missing files and folders plainly", async () => {
    const ws = await workspace();
    await ws.files({ "dir/a.txt": "a" });
    expect(await ws.run("read", { path: "nope.txt" })).toEqual({
      content: "read failed: no such file or directory",
      isError: true,
    });
    expect(await ws.run("read", { path: "dir" })).toEqual({
      content: "dir is a directory: use ls to list it",
      isError: true,
    });
    expect(await ws.run("ls", { path: "dir/a.txt" })).toEqual({
      content: "dir/a.txt is not a folder: use read",
      isError: true,
    });
  });
});

describe("read", () => {
  it("refuses binary files", async () => {
    const ws = await workspace();
    await ws.files({ "img.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]) });
    expect(await ws.run("read", { path: "img.png" })).toEqual({
      content: "img.png is a binary file: read shows text only",
      isError: true,
    });
  });

  it("bounds output at the line limit and says where to continue", async () => {
    const ws = await workspace();
    const lines = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`);
    await ws.files({ "long.txt": `${lines.join("\n")}\n` });
    const first = await ws.run("read", { path: "long.txt" });
    const shown = first.content.split("\n");
    expect(shown).toHaveLength(2001);
    expect(shown[1999]).toBe("line 2000");
    expect(shown[2000]).toMatch(
      /^\[truncated: \d+ more bytes after line 2000; read with offset=2001 to continue\]$/,
    );
    const rest = await ws.run("read", { path: "long.txt", offset: 2001 });
    expect(rest.content.split("\n")).toEqual(lines.slice(2000));
    expect(await ws.run("read", { path: "long.txt", offset: 3000 })).toEqual({
      content: "offset 3000 is past the end of long.txt (2500 lines)",
      isError: true,
    });
  });

  it("bounds output by characters and cuts a line too long to show", async () => {
    const ws = await workspace();
    const wide = "x".repeat(1000);
    await ws.files({
      "wide.txt": Array.from({ length: 100 }, () => wide).join("\n"),
      "one.txt": "y".repeat(120_000),
    });
    const wideRead = await ws.run("read", { path: "wide.txt" });
    expect(wideRead.content.length).toBeLessThanOrEqual(50_100);
    expect(wideRead.content).toMatch(
      /\[truncated: \d+ more bytes after line 49; read with offset=50 to continue\]$/,
    );
    const oneRead = await ws.run("read", { path: "one.txt" });
    expect(oneRead.content).toBe(
      `${"y".repeat(50_000)}\n[truncated: line 1 goes on for 70000 more bytes; use grep or bash to inspect it]`,
    );
  });

  it("reads a 100 MB file's window with bounded memory", async () => {
    const ws = await workspace();
    const line = `${"z".repeat(99)}\n`;
    const chunk = line.repeat(10_000);
    const path = join(ws.root, "huge.log");
    await writeFile(path, "");
    for (let i = 0; i < 100; i++) await writeFile(path, chunk, { flag: "a" });
    expect((await stat(path)).size).toBe(100_000_000);
    const before = process.memoryUsage().rss;
    const result = await ws.run("read", { path: "huge.log", offset: 5, limit: 3 });
    const grown = process.memoryUsage().rss - before;
    expect(result.content.split("\n").slice(0, 3)).toEqual([
      "z".repeat(99),
      "z".repeat(99),
      "z".repeat(99),
    ]);
    expect(result.content).toContain(
      "[truncated: 99999300 more bytes after line 7; read with offset=8 to continue]",
    );
    expect(grown).toBeLessThan(30_000_000);
  });
});

describe("ls, find and grep", () => {
  it("lists a folder, marking folders and hiding .git and ignored entries", async () => {
    const ws = await workspace();
    await ws.files({
      ".gitignore": "dist/\n*.log\n",
      ".git/HEAD": "ref",
      "src/a.ts": "",
      "src/.gitignore": "generated.ts\n",
      "src/generated.ts": "",
      "src/trace.log": "",
      "dist/out.js": "",
      "debug.log": "",
      "README.md": "",
    });
    expect(await ws.run("ls", {})).toEqual({
      content: ".gitignore\nREADME.md\nsrc/\n(3 ignored entries not shown)",
    });
    expect(await ws.run("ls", { path: "src" })).toEqual({
      content: ".gitignore\na.ts\n(2 ignored entries not shown)",
    });
  });

  it("finds files by glob, honouring nested .gitignore files", async () => {
    const ws = await workspace();
    await ws.files({
      ".gitignore": "node_modules/\n",
      "src/a.ts": "",
      "src/b.js": "",
      "src/lib/c.ts": "",
      "src/lib/.gitignore": "generated.ts\n",
      "src/lib/generated.ts": "",
      "node_modules/x/index.ts": "",
      ".git/config.ts": "",
    });
    expect(await ws.run("find", { pattern: "*.ts" })).toEqual({
      content: "src/a.ts\nsrc/lib/c.ts",
    });
    expect(await ws.run("find", { pattern: "lib/*.ts", path: "src" })).toEqual({
      content: "src/lib/c.ts",
    });
    expect(await ws.run("find", { pattern: "src/**/*.ts" })).toEqual({
      content: "src/a.ts\nsrc/lib/c.ts",
    });
    expect(await ws.run("find", { pattern: "*.rs" })).toEqual({ content: "no files match *.rs" });
  });

  it("greps with file:line: text, a glob, case folding, and skips binary and ignored files", async () => {
    const ws = await workspace();
    await ws.files({
      ".gitignore": "ignored.txt\n",
      "a.ts": "const TODO = 1;\nnothing\n// todo: later\n",
      "b.md": "TODO in docs\n",
      "ignored.txt": "TODO hidden\n",
      "bin.dat": Buffer.concat([Buffer.from("TODO"), Buffer.from([0, 1, 2])]),
    });
    expect(await ws.run("grep", { pattern: "TODO" })).toEqual({
      content: "a.ts:1: const TODO = 1;\nb.md:1: TODO in docs",
    });
    expect(await ws.run("grep", { pattern: "todo", ignoreCase: true, glob: "*.ts" })).toEqual({
      content: "a.ts:1: const TODO = 1;\na.ts:3: // todo: later",
    });
    expect(await ws.run("grep", { pattern: "later", path: "a.ts" })).toEqual({
      content: "a.ts:3: // todo: later",
    });
    expect(await ws.run("grep", { pattern: "zzz" })).toEqual({ content: "no matches for zzz" });
  });

  it("finds every match in a file over a megabyte, across chunk boundaries, as a line-by-line scan would", async () => {
    const ws = await workspace();
    const lines: string[] = [];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    for (let i = 0; i < 60_000; i++) {
      const body = "é-word ".repeat(Math.floor((next() / 2147483648) * 12));
      lines.push(next() / 2147483648 < 1 / 3000 ? `${body}NEEDLE ${i}` : `${body}line ${i}`);
    }
    lines[30_000] = `NEEDLE in a long line ${"x".repeat(1_500_000)}`;
    const text = lines.map((line, i) => (i % 3 === 0 ? `${line}\r` : line)).join("\n");
    await ws.files({ "big.txt": text });
    const expected = lines.flatMap((line, i) => (/NEEDLE \d|NEEDLE in/.test(line) ? [i + 1] : []));
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.length).toBeLessThan(500);
    const result = await ws.run("grep", { pattern: "NEEDLE (\\d|in)" });
    const found = result.content.split("\n").map((line) => Number(line.split(":")[1]));
    expect(found).toEqual(expected);
    expect(result.content.split("\n")[0]).toBe(
      `big.txt:${expected[0]}: ${lines[(expected[0] ?? 1) - 1]}`,
    );
  });

  it("rejects a bad regular expression and a bad glob clearly", async () => {
    const ws = await workspace();
    const syntax = "(RE2 syntax, as in ripgrep: no lookaround or backreferences)";
    expect(await ws.run("grep", { pattern: "(unclosed" })).toEqual({
      content: `invalid grep pattern: missing closing ): \`(unclosed\` ${syntax}`,
      isError: true,
    });
    expect(await ws.run("grep", { pattern: "(a)\\1" })).toEqual({
      content: `invalid grep pattern: invalid escape sequence: \`\\1\` ${syntax}`,
      isError: true,
    });
    expect(await ws.run("grep", { pattern: "a(?=b)" })).toEqual({
      content: `invalid grep pattern: invalid or unsupported Perl syntax: \`(?=\` ${syntax}`,
      isError: true,
    });
    expect(await ws.run("find", { pattern: "[unclosed" })).toEqual({
      content: 'invalid glob "[unclosed": unclosed [',
      isError: true,
    });
  });

  it("bounds grep output with a marker", async () => {
    const ws = await workspace();
    await ws.files({ "many.txt": Array.from({ length: 800 }, (_, i) => `hit ${i}`).join("\n") });
    const result = await ws.run("grep", { pattern: "hit" });
    const lines = result.content.split("\n");
    expect(lines).toHaveLength(501);
    expect(lines[500]).toBe(
      "[truncated: stopped after 500 matches; narrow the pattern, path or glob]",
    );
  });
});

describe("write", () => {
  it("writes through an in-workspace symlink to its target and keeps the link", async () => {
    const ws = await workspace();
    await ws.files({ "real.txt": "old" });
    await symlink("real.txt", join(ws.root, "link.txt"));
    await ws.run("read", { path: "link.txt" });
    expect(await ws.run("write", { path: "link.txt", content: "new" })).toEqual({
      content: "replaced real.txt (3 bytes)",
    });
    expect((await lstat(join(ws.root, "link.txt"))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(ws.root, "link.txt"))).toBe("real.txt");
    expect(await readFile(join(ws.root, "real.txt"), "utf8")).toBe("new");
  });

  it("keeps the file's mode and leaves no temporary file", async () => {
    const ws = await workspace();
    await ws.files({ "run.sh": "echo 1" });
    await chmod(join(ws.root, "run.sh"), 0o755);
    await ws.run("read", { path: "run.sh" });
    expect(await ws.run("write", { path: "run.sh", content: "echo 2" })).toEqual({
      content: "replaced run.sh (6 bytes)",
    });
    expect((await stat(join(ws.root, "run.sh"))).mode & 0o777).toBe(0o755);
    expect(await ws.run("ls", {})).toEqual({ content: "run.sh" });
  });

  it("refuses to replace a folder", async () => {
    const ws = await workspace();
    await mkdir(join(ws.root, "dir"));
    expect(await ws.run("write", { path: "dir", content: "x" })).toEqual({
      content: "dir is a folder",
      isError: true,
    });
  });
});

describe("edit", () => {
  it("replaces a unique exact match", async () => {
    const ws = await workspace();
    await ws.files({ "a.ts": "const a = 1;\nconst b = 2;\n" });
    await ws.run("read", { path: "a.ts" });
    expect(await ws.run("edit", { path: "a.ts", oldText: "b = 2", newText: "b = 3" })).toEqual({
      content: "edited a.ts: replaced 1 occurrence at line 2",
    });
    expect(await readFile(join(ws.root, "a.ts"), "utf8")).toBe("const a = 1;\nconst b = 3;\n");
  });

  it("round-trips a CRLF file byte-exact", async () => {
    const ws = await workspace();
    const original = "line one\r\nline two\r\nline three\r\n";
    await ws.files({ "win.txt": original });
    await ws.run("read", { path: "win.txt" });
    await ws.run("edit", {
      path: "win.txt",
      oldText: "line one\nline two",
      newText: "first\nsecond",
    });
    expect(await readFile(join(ws.root, "win.txt"), "utf8")).toBe(
      "first\r\nsecond\r\nline three\r\n",
    );
    await ws.run("edit", {
      path: "win.txt",
      oldText: "first\nsecond",
      newText: "line one\nline two",
    });
    expect(await readFile(join(ws.root, "win.txt"))).toEqual(Buffer.from(original));
  });

  it("keeps a BOM and the file's mode", async () => {
    const ws = await workspace();
    await ws.files({ "bom.txt": Buffer.from("\uFEFFhello world\n") });
    await chmod(join(ws.root, "bom.txt"), 0o640);
    await ws.run("read", { path: "bom.txt" });
    await ws.run("edit", { path: "bom.txt", oldText: "world", newText: "there" });
    expect(await readFile(join(ws.root, "bom.txt"))).toEqual(Buffer.from("\uFEFFhello there\n"));
    expect((await stat(join(ws.root, "bom.txt"))).mode & 0o777).toBe(0o640);
  });

  it("names a line that differs from oldText only in case as the closest", async () => {
    const ws = await workspace();
    await ws.files({ "notes.txt": "line one\nalpha\nBETA\ngamma\n" });
    await ws.run("read", { path: "notes.txt" });
    expect(await ws.run("edit", { path: "notes.txt", oldText: "beta", newText: "B" })).toEqual({
      content: 'oldText not found in notes.txt; the closest line is 3: "BETA"',
      isError: true,
    });
  });

  it("leaves the file unchanged when nothing matches and names the closest line", async () => {
    const ws = await workspace();
    const original = "function add(a, b) {\n  return a + b;\n}\n";
    await ws.files({ "m.js": original });
    await ws.run("read", { path: "m.js" });
    expect(await ws.run("edit", { path: "m.js", oldText: "  return a+b;", newText: "x" })).toEqual({
      content: 'oldText not found in m.js; the closest line is 2: "  return a + b;"',
      isError: true,
    });
    expect(await ws.run("edit", { path: "m.js", oldText: "qqqqqq", newText: "x" })).toEqual({
      content: "oldText not found in m.js",
      isError: true,
    });
    expect(await readFile(join(ws.root, "m.js"), "utf8")).toBe(original);
  });

  it("leaves the file unchanged on several matches, giving their count and lines", async () => {
    const ws = await workspace();
    const original = "x = 1\ny = 2\nx = 1\nx = 1\n";
    await ws.files({ "dup.txt": original });
    await ws.run("read", { path: "dup.txt" });
    expect(await ws.run("edit", { path: "dup.txt", oldText: "x = 1", newText: "x = 9" })).toEqual({
      content:
        "oldText matches 3 times in dup.txt (lines 1, 3, 4): include more surrounding text to make it unique, or set replaceAll",
      isError: true,
    });
    expect(await readFile(join(ws.root, "dup.txt"), "utf8")).toBe(original);
    expect(
      await ws.run("edit", {
        path: "dup.txt",
        oldText: "x = 1",
        newText: "x = 9",
        replaceAll: true,
      }),
    ).toEqual({ content: "edited dup.txt: replaced 3 occurrences at line 1" });
    expect(await readFile(join(ws.root, "dup.txt"), "utf8")).toBe("x = 9\ny = 2\nx = 9\nx = 9\n");
  });

  it("refuses an edit that changes nothing", async () => {
    const ws = await workspace();
    await ws.files({ "same.txt": "abc" });
    await ws.run("read", { path: "same.txt" });
    expect(await ws.run("edit", { path: "same.txt", oldText: "abc", newText: "abc" })).toEqual({
      content: "oldText and newText are the same: nothing to change",
      isError: true,
    });
  });
});
