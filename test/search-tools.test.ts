import { execFileSync } from "node:child_process";
import { rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { limits } from "../src/tools/limits.js";
import { Skips } from "../src/tools/search/skips.js";
import { walk } from "../src/tools/search/walk.js";
import type { ToolResult } from "../src/types.js";
import { type ChildToolRun, runInChild, runToolInChild } from "./support/child-tool.js";
import { useWorkspace } from "./support/workspace.js";

const workspace = useWorkspace();

/** For child runs that test blocking, not aborting: killed after 20 s, never aborted before. */
const noAbort = { abortAfterMs: 60_000, killAfterMs: 20_000 };

/** A run that returned within 2 s of the abort at 200 ms, with its answer or as aborted. */
function expectPromptly(run: ChildToolRun | "killed", tool: string, answer: ToolResult): void {
  expect(run).not.toBe("killed");
  if (run === "killed") return;
  expect([answer, { content: `${tool} aborted`, isError: true }]).toContainEqual(run.result);
  expect(run.afterAbortMs).toBeLessThan(2000);
}

/** A path in the workspace whose name holds raw bytes (not necessarily UTF-8). */
const rawName = (root: string, ...parts: (string | number[])[]) =>
  Buffer.concat([
    Buffer.from(`${root}/`),
    ...parts.map((part) => (typeof part === "string" ? Buffer.from(part) : Buffer.from(part))),
  ]);

describe("running a tool in a child process", () => {
  it("reports a child that never returns as killed", async () => {
    expect(await runInChild("for (;;) {}", 1000)).toBe("killed");
  });

  it("reports the tool's result and how long after the abort it came", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "x" });
    expect(await runToolInChild(ws.root, "ls", {}, { abortAfterMs: 5000 })).toEqual({
      result: { content: "a.txt" },
      afterAbortMs: 0,
    });
    const slow = await runToolInChild(
      ws.root,
      "bash",
      { command: "sleep 5" },
      { abortAfterMs: 100 },
    );
    expect(slow).toMatchObject({ result: { isError: true } });
    expect((slow as { afterAbortMs: number }).afterAbortMs).toBeGreaterThan(0);
  });
});

describe("nothing a pattern or a file holds can freeze a search", () => {
  it("greps with a catastrophic-backtracking pattern in linear time", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": `${"a".repeat(40)}!\n` });
    const run = await runToolInChild(ws.root, "grep", { pattern: "^(a+)+$" });
    expectPromptly(run, "grep", { content: "no matches for ^(a+)+$" });
  });

  it("finds with a glob of twenty stars against a long name in linear time", async () => {
    const ws = await workspace();
    await ws.files({ [`${"a".repeat(120)}.txt`]: "" });
    const pattern = `${"*a".repeat(20)}*b`;
    const run = await runToolInChild(ws.root, "find", { pattern });
    expectPromptly(run, "find", { content: `no files match ${pattern}` });
  });

  it("applies a catastrophic .gitignore pattern in linear time", async () => {
    const ws = await workspace();
    await ws.files({ ".gitignore": `${"*a".repeat(20)}*b\n`, [`${"a".repeat(120)}.txt`]: "" });
    const run = await runToolInChild(ws.root, "find", { pattern: "*.txt" });
    expectPromptly(run, "find", { content: `${"a".repeat(120)}.txt` });
  });

  it("skips FIFOs in the tree and counts them", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "hit\n", "sub/b.txt": "hit\n" });
    execFileSync("mkfifo", [join(ws.root, "pipe"), join(ws.root, "sub/pipe2")]);
    const tree = await runToolInChild(ws.root, "grep", { pattern: "hit" }, noAbort);
    expect(tree).not.toBe("killed");
    if (tree === "killed") return;
    expect(tree.result).toEqual({
      content: "a.txt:1: hit\nsub/b.txt:1: hit\n[skipped 2 entries: 2 special files]",
    });
  });

  it("refuses a FIFO named directly without opening it", async () => {
    const ws = await workspace();
    execFileSync("mkfifo", [join(ws.root, "pipe")]);
    const named = await runToolInChild(ws.root, "grep", { pattern: "hit", path: "pipe" }, noAbort);
    expect(named).not.toBe("killed");
    if (named === "killed") return;
    expect(named.result).toEqual({ content: "pipe is not a regular file", isError: true });
  });

  it("stops find within a second of an abort while applying a .gitignore of 10,000 globs", async () => {
    const ws = await workspace();
    execFileSync("bash", ["-c", "mkdir many && touch many/file-{0..4999}.txt"], { cwd: ws.root });
    const rules = Array.from({ length: 10_000 }, (_, i) => `gen-${i}-*.tmp`).join("\n");
    await writeFile(join(ws.root, ".gitignore"), rules);
    const run = await runToolInChild(ws.root, "find", { pattern: "*" }, { abortAfterMs: 200 });
    expect(run).not.toBe("killed");
    if (run === "killed") return;
    expect(run.result).toEqual({ content: "find aborted", isError: true });
    expect(run.afterAbortMs).toBeLessThan(1000);
  }, 60_000);

  it("stops find over 20,000 files within a second of an abort", async () => {
    const ws = await workspace();
    execFileSync("bash", ["-c", "mkdir -p d{000..199} && touch d{000..199}/f{000..99}.txt"], {
      cwd: ws.root,
    });
    const run = await runToolInChild(ws.root, "find", { pattern: "*.txt" }, { abortAfterMs: 50 });
    expect(run).not.toBe("killed");
    if (run === "killed") return;
    expect(run.result).toEqual({ content: "find aborted", isError: true });
    expect(run.afterAbortMs).toBeLessThan(1000);
  }, 60_000);
});

describe("odd entries are skipped and counted, never the end of a result", () => {
  it("keeps grep's matches past a dangling link and a name that is not UTF-8", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "hit\n" });
    await writeFile(rawName(ws.root, "caf", [0xe9], ".txt"), "hit\n");
    await symlink("nowhere", join(ws.root, "gone"));
    expect(await ws.run("grep", { pattern: "hit" })).toEqual({
      content: "a.txt:1: hit\ncaf\\xE9.txt:1: hit\n[skipped 1 entry: 1 dangling link]",
    });
  });

  it("shows odd names escaped in ls, find and grep, and reads them back by that name", async () => {
    const ws = await workspace();
    await writeFile(join(ws.root, "a.txt"), "hit\n");
    await writeFile(join(ws.root, "back\\slash.txt"), "hit\n");
    await writeFile(rawName(ws.root, "caf", [0xe9], ".txt"), "hit\n");
    await writeFile(join(ws.root, "new\nline.txt"), "hit\n");
    await symlink("nowhere", join(ws.root, "gone"));
    expect(await ws.run("ls", {})).toEqual({
      content: "a.txt\nback\\\\slash.txt\ncaf\\xE9.txt\ngone@\nnew\\nline.txt",
    });
    expect(await ws.run("find", { pattern: "*.txt" })).toEqual({
      content: "a.txt\nback\\\\slash.txt\ncaf\\xE9.txt\nnew\\nline.txt",
    });
    expect(await ws.run("grep", { pattern: "hit", glob: "*.txt" })).toEqual({
      content: "a.txt:1: hit\nback\\\\slash.txt:1: hit\ncaf\\xE9.txt:1: hit\nnew\\nline.txt:1: hit",
    });
    expect(await ws.run("grep", { pattern: "hit", path: "caf\\xE9.txt" })).toEqual({
      content: "caf\\xE9.txt:1: hit",
    });
    expect(await ws.run("read", { path: "caf\\xE9.txt" })).toEqual({
      content: "path is not valid UTF-8: only ls, find and grep open such names",
      isError: true,
    });
    expect(await ws.run("read", { path: "new\\nline.txt" })).toEqual({ content: "hit" });
    expect(await ws.run("write", { path: "caf\\xE9.txt", content: "x" })).toEqual({
      content: "path is not valid UTF-8: only ls, find and grep open such names",
      isError: true,
    });
    expect(await ws.run("read", { path: "back\\\\slash.txt" })).toEqual({ content: "hit" });
    expect(await ws.run("grep", { pattern: "hit", path: "new\\nline.txt" })).toEqual({
      content: "new\\nline.txt:1: hit",
    });
  });

  it("counts a folder that cannot be read during the walk", async () => {
    const ws = await workspace();
    await ws.files({ "a/x.txt": "", "b/y.txt": "" });
    const skips = new Skips();
    const seen: string[] = [];
    for await (const entry of walk(ws.root, ws.root, { skips })) {
      seen.push(entry.rel);
      if (entry.rel === "a") await rm(join(ws.root, "a"), { recursive: true });
    }
    expect(seen).toEqual(["a", "b", "b/y.txt"]);
    expect(skips.note()).toBe("[skipped 1 entry: 1 unreadable folder]");
  });

  it("says when find met a folder deeper than the system can open", async () => {
    const ws = await workspace();
    const level = "d".repeat(200);
    execFileSync(
      "bash",
      ["-c", `for i in $(seq 22); do mkdir ${level} && cd ${level}; done; touch deep.txt`],
      { cwd: ws.root },
    );
    try {
      const result = await ws.run("find", { pattern: "*.txt" });
      expect(result).toEqual({
        content: "no files match *.txt\n[skipped 1 entry: 1 unreadable folder]",
      });
    } finally {
      execFileSync("rm", ["-rf", join(ws.root, level)]);
    }
  });
});

describe("every search result is bounded in characters", () => {
  const names = Array.from(
    { length: 300 },
    (_, i) => `${String(i).padStart(3, "0")}-${"x".repeat(200)}.txt`,
  );
  /** The longest head of `entries` whose lines fit in the character bound, and the rest's count. */
  const bounded = (entries: string[]) => {
    const kept: string[] = [];
    for (const entry of entries) {
      if ([...kept, entry].join("\n").length > limits.outputChars) break;
      kept.push(entry);
    }
    return { kept, more: entries.length - kept.length };
  };

  it("bounds ls and find by characters, with a note of what was left out", async () => {
    const ws = await workspace();
    await ws.files(Object.fromEntries(names.map((name) => [`long/${name}`, ""])));
    const inFolder = bounded(names);
    expect(inFolder.more).toBeGreaterThan(0);
    expect(await ws.run("ls", { path: "long" })).toEqual({
      content: [...inFolder.kept, `[truncated: ${inFolder.more} more entries]`].join("\n"),
    });
    const found = bounded(names.map((name) => `long/${name}`));
    expect(await ws.run("find", { pattern: "*.txt" })).toEqual({
      content: [...found.kept, `[truncated: ${found.more} more matches]`].join("\n"),
    });
  });

  it("cuts a long grep line between code points", async () => {
    const ws = await workspace();
    const line = `${"x".repeat(limits.grepLineChars - 1)}😀${"y".repeat(100)}`;
    await ws.files({ "a.txt": `${line}\n` });
    expect(await ws.run("grep", { pattern: "y" })).toEqual({
      content: `a.txt:1: ${"x".repeat(limits.grepLineChars - 1)} [truncated 102 characters]`,
    });
  });
});

describe("ignore files are read only when they are regular files in the workspace", () => {
  it("does not read a .gitignore that links to a file outside", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "", "b.md": "" });
    await writeFile(join(ws.outside, "rules"), "*.txt\n");
    await symlink(join(ws.outside, "rules"), join(ws.root, ".gitignore"));
    const note = "[skipped 1 entry: 1 .gitignore not read (a link or special file)]";
    expect(await ws.run("find", { pattern: "*" })).toEqual({
      content: `.gitignore\na.txt\nb.md\n${note}`,
    });
    expect(await ws.run("ls", {})).toEqual({ content: `.gitignore@\na.txt\nb.md\n${note}` });
  });

  it("does not read a .gitignore that links to /dev/zero", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "" });
    await symlink("/dev/zero", join(ws.root, ".gitignore"));
    const run = await runToolInChild(ws.root, "find", { pattern: "*.txt" }, noAbort);
    expect(run).not.toBe("killed");
    if (run === "killed") return;
    expect(run.result).toEqual({
      content: "a.txt\n[skipped 1 entry: 1 .gitignore not read (a link or special file)]",
    });
  });

  it("does not read a .gitignore over the size cap, and says so", async () => {
    const ws = await workspace();
    const padding = "# padding\n".repeat(30_000);
    await ws.files({ ".gitignore": `${padding}*.txt\n`, "a.txt": "" });
    expect(await ws.run("find", { pattern: "*.txt" })).toEqual({
      content: "a.txt\n[skipped 1 entry: 1 .gitignore over 256 KiB not read]",
    });
  });
});

describe("globs are relative to the searched folder in find and grep alike", () => {
  it("matches grep's glob against paths relative to its path, as find does", async () => {
    const ws = await workspace();
    await ws.files({ "src/lib/c.ts": "hit\n", "src/a.ts": "hit\n", "lib/d.ts": "hit\n" });
    expect(await ws.run("find", { pattern: "lib/*.ts", path: "src" })).toEqual({
      content: "src/lib/c.ts",
    });
    expect(await ws.run("grep", { pattern: "hit", path: "src", glob: "lib/*.ts" })).toEqual({
      content: "src/lib/c.ts:1: hit",
    });
  });
});
