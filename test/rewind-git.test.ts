import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { bashThenDone, runBin, useCliSetup } from "./support/cli.js";
import { realSandbox } from "./support/sandbox.js";

/**
 * A rewind of what bash did to a git repository, through the built CLI: the `.git` folder is in
 * the snapshot (objects and packs kept by hard link, refs, the index and the logs by content), so
 * after a command that removes or rewrites history, `git log --all` and `git stash list` read as
 * they did before it.
 */

const setup = useCliSetup();
const sandboxed = await realSandbox({ mode: "auto" });
const run = promisify(execFile);

/** git as the test runs it: a fixed identity and clock, no system or user configuration. */
async function git(workspace: string, home: string, ...args: string[]): Promise<string> {
  const { stdout } = await run("git", args, {
    cwd: workspace,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
      GIT_AUTHOR_DATE: "2024-01-01T00:00:00Z",
      GIT_COMMITTER_DATE: "2024-01-01T00:00:00Z",
    },
  });
  return stdout;
}

/**
 * A repository with five commits (some in a pack, some loose), a stash entry, an untracked file
 * and an ignored folder.
 */
async function repository(workspace: string, home: string): Promise<void> {
  await git(workspace, home, "init", "-q", "-b", "main");
  await writeFile(join(workspace, ".gitignore"), "build/\n");
  for (let i = 1; i <= 5; i++) {
    await writeFile(join(workspace, "a.txt"), `version ${i}\n`);
    await git(workspace, home, "add", "-A");
    await git(workspace, home, "commit", "-q", "-m", `commit ${i}`);
    if (i === 3) await git(workspace, home, "gc", "-q");
  }
  await writeFile(join(workspace, "a.txt"), "stashed change\n");
  await git(workspace, home, "stash", "-q");
  await writeFile(join(workspace, "notes.txt"), "untracked notes\n");
  await mkdir(join(workspace, "build"));
  await writeFile(join(workspace, "build", "out.txt"), "ignored output\n");
}

/** What a rewind must leave as it was: every commit, every ref, the stash, the other files. */
async function history(workspace: string, home: string) {
  const text = (path: string) => readFile(join(workspace, path), "utf8").catch(() => null);
  return {
    log: await git(workspace, home, "log", "--all", "--format=%H %s %D").catch(() => null),
    stash: await git(workspace, home, "stash", "list").catch(() => null),
    head: await git(workspace, home, "rev-parse", "HEAD").catch(() => null),
    notes: await text("notes.txt"),
    built: await text("build/out.txt"),
  };
}

async function rewindsGit(command: string, sandbox: string): Promise<void> {
  const { workspace, home, options } = await setup(bashThenDone(command));
  await repository(workspace, home);
  const before = await history(workspace, home);
  const ran = await runBin(["--allow-bash", "--sandbox", sandbox, "go"], options);
  expect({ code: ran.code, stdout: ran.stdout }).toEqual({ code: 0, stdout: "done\n" });
  expect(await history(workspace, home)).not.toEqual(before);
  const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
  expect({ code: rewind.code, stderr: rewind.stderr }).toEqual({ code: 0, stderr: "" });
  expect(rewind.stdout).not.toMatch(/not restored|failed|note:/);
  expect(await history(workspace, home)).toEqual(before);
  expect(await git(workspace, home, "fsck", "--no-dangling")).toBe("");
}

const cases = [
  ["rm -rf .git", "removes the repository"],
  [
    "git reset -q --hard HEAD~3 && git gc -q --prune=now --aggressive",
    "resets three commits back and prunes what no ref reaches",
  ],
  ["git stash drop -q", "drops the stash"],
  ["git clean -q -fdx", "removes untracked and ignored files"],
] as const;

describe("a rewind of what bash did to a git repository", () => {
  for (const [command, what] of cases) {
    it(`leaves git log --all and git stash list as before a command that ${what} (--sandbox off)`, async () => {
      await rewindsGit(command, "off");
    });
    it.skipIf(!sandboxed)(
      `leaves git log --all and git stash list as before a sandboxed command that ${what}`,
      async () => {
        await rewindsGit(command, "required");
      },
    );
  }

  it("refuses a pack a command rewrote in place, which rewrote its kept link too", async () => {
    const command =
      "p=$(ls .git/objects/pack/*.pack) && chmod u+w $p && printf XXXX | dd of=$p conv=notrunc status=none && chmod a-w $p";
    const { workspace, home, options } = await setup(bashThenDone(command));
    await repository(workspace, home);
    const ran = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
    expect(ran.code).toBe(0);
    const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
    expect(rewind.code).toBe(1);
    expect(rewind.stdout).toMatch(
      /\nnot restored \.git\/objects\/pack\/pack-\w+\.pack: its bytes before prompt 1 in the session's blob store were altered \(\w+\)\n/,
    );
  });
});
