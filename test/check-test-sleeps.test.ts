import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "./support/temp.js";

const repo = fileURLToPath(new URL("..", import.meta.url));
const script = join(repo, "scripts", "check-test-sleeps.mjs");
const fixtures = join(repo, "test", "fixtures", "sleep-check");
const tempDir = useTempDirs();

/** What the sleep check reports on the tree at `root`. */
function check(root: string): { status: number | null; stdout: string } {
  const run = spawnSync(process.execPath, [script, root], { encoding: "utf8" });
  return { status: run.status, stdout: run.stdout };
}

/** A copy of the project's test/ folder and docs/internals.md: what the check reads. */
async function copyOfTree(): Promise<string> {
  const root = await tempDir();
  cpSync(join(repo, "test"), join(root, "test"), {
    recursive: true,
    filter: (source) => !source.split("/").includes("node_modules"),
  });
  mkdirSync(join(root, "docs"));
  cpSync(join(repo, "docs", "internals.md"), join(root, "docs", "internals.md"));
  return root;
}

/**
 * The fixture tree, laid out in a temporary folder: its files are kept as `NAME.txt`, so that no
 * file of the project's test/ holds a timer or looks like a test.
 */
async function laidOutTree(): Promise<string> {
  const root = await tempDir();
  const from = join(fixtures, "tree");
  for (const entry of readdirSync(from, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const source = join(entry.parentPath, entry.name);
    const target = join(root, relative(from, source).replace(/\.txt$/, ""));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(source, target);
  }
  return root;
}

const advice =
  "wait for a fact with until() (test/support/until.ts); a test whose subject is a time bound " +
  'is listed in docs/internals.md ("Tests that keep a time bound") with why';

describe("the sleep check of npm run check", () => {
  it("passes on the project's tests", () => {
    expect(check(repo)).toEqual({ status: 0, stdout: "" });
  });

  it("fails on a sleep planted in a copy of them, naming where", async () => {
    const root = await copyOfTree();
    const file = join(root, "test", "bash.test.ts");
    const lines = readFileSync(file, "utf8").split("\n");
    const at = lines.findIndex((line) => line.includes("await until(")) + 1;
    const planted = readFileSync(join(fixtures, "planted-sleep.txt"), "utf8").trimEnd();
    lines.splice(at, 0, planted);
    writeFileSync(file, lines.join("\n"));
    expect(check(root)).toEqual({
      status: 1,
      stdout: [
        `test/bash.test.ts:${at + 1}: ${planted.trim()}`,
        `1 timer(s) in tests: ${advice}`,
        "",
      ].join("\n"),
    });
  });

  it("finds every kind of timer, and lets through only until.ts, a listed test and fixtures", async () => {
    // The list names "stops within a second" of bound.test.mjs, and, under another heading,
    // "not in the list" of other.test.mjs; comments, shell sleeps and Python's are not timers.
    const tree = await laidOutTree();
    const line = (file: string, n: number) =>
      `${file}:${n}: ${readFileSync(join(tree, file), "utf8").split("\n")[n - 1]?.trim()}`;
    expect(check(tree)).toEqual({
      status: 1,
      stdout: [
        line("test/bound.test.mjs", 7),
        line("test/other.test.mjs", 1),
        line("test/other.test.mjs", 4),
        `3 timer(s) in tests: ${advice}`,
        "",
      ].join("\n"),
    });
  });
});
