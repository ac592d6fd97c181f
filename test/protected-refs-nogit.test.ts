import { execFileSync, spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { guardProtected } from "../src/protected/guard.js";
import { gitEnv } from "./support/repository.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const hasGit = spawnSync("git", ["--version"]).status === 0;
const env = gitEnv;

describe.skipIf(!hasGit)("the check of git's refs without a git to read them", () => {
  it("undoes a new branch when no git outside the workspace can tell where it leads", async () => {
    const root = await tempDir();
    const git = (...args: string[]) =>
      execFileSync("git", args, { cwd: root, env, encoding: "utf8" });
    git("init", "-q", "-b", "main");
    await writeFile(join(root, "a.txt"), "a\n");
    git("add", "a.txt");
    git("commit", "-qm", "first");
    const guard = await guardProtected(root);
    await writeFile(join(root, "a.txt"), "b\n");
    git("commit", "-qam", "second");
    const path = process.env.PATH;
    process.env.PATH = "";
    try {
      const lines = await guard.settle();
      expect(lines.join("\n")).toMatch(
        /undid \.git\/refs\/heads\/main: .*could not be checked \(no git outside the workspace/,
      );
    } finally {
      process.env.PATH = path;
    }
    expect(git("log", "--format=%s", "main")).toBe("first\n");
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("b\n");
  });
});
