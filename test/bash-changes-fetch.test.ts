import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lookAtFiles } from "../src/rewind/bash-changes.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, sessionRecords, useCliSetup } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/**
 * The look at what bash changed runs git outside the sandbox, on a repository the model can
 * write. In a partial clone (a promisor remote), git fetches a missing object it needs, such as a
 * skip-worktree `.gitignore` whose blob never arrived, and fetching runs a program the
 * repository names (`remote.NAME.uploadpack`) or the user's `ssh` with the user's keys. So the
 * look never asks git for its list in such a repository, and git is kept from fetching at all.
 */

const tempDir = useTempDirs();
const setup = useCliSetup();

/** git as the test runs it: its own clean configuration, never the user's. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd,
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
}

/** A repository `origin` with a `.gitignore` and a README, that serves partial clones. */
async function origin(home: string): Promise<string> {
  const path = join(home, "origin");
  await mkdir(path);
  git(path, "init", "-q");
  await writeFile(join(path, ".gitignore"), "*.log\n");
  await writeFile(join(path, "README"), "hi\n");
  git(path, "add", ".");
  git(path, "commit", "-q", "-m", "start");
  git(path, "config", "uploadpack.allowFilter", "true");
  git(path, "config", "uploadpack.allowAnySHA1InWant", "true");
  return path;
}

/**
 * A blobless clone of `origin` with no file checked out (a sparse checkout that matches none):
 * its `.gitignore` is skip-worktree and its blob missing, so listing the untracked files fetches
 * it. Its `uploadpack` leaves a marker: the program a hostile `.git/config` would run.
 */
async function hostileClone(home: string): Promise<{ workspace: string; marker: string }> {
  const source = await origin(home);
  const workspace = join(home, "ws");
  git(home, "clone", "-q", "--no-checkout", "--filter=blob:none", `file://${source}`, workspace);
  git(workspace, "config", "core.sparseCheckout", "true");
  await writeFile(join(workspace, ".git", "info", "sparse-checkout"), "/nonexistent\n");
  git(workspace, "read-tree", "-mu", "HEAD");
  await writeFile(join(workspace, "note.txt"), "untracked\n");
  const marker = join(home, "uploadpack-ran");
  git(workspace, "config", "remote.origin.uploadpack", `touch ${marker}; false`);
  return { workspace, marker };
}

const partial = (setting: string) => ({
  kind: "skipped",
  reason: `the repository is a partial clone (${setting}): git would fetch from its remote: skipped`,
});

/** The configuration is live: git's list as a user runs it does run the program. */
async function runsAsUserGit(workspace: string, marker: string): Promise<void> {
  expect(() => git(workspace, "ls-files", "--others", "--exclude-standard")).toThrow();
  expect(existsSync(marker)).toBe(true);
  await rm(marker);
}

describe("the look in a partial clone", () => {
  it("is skipped, and the program a hostile remote.origin.uploadpack names never runs", async () => {
    const home = await tempDir();
    const { workspace, marker } = await hostileClone(home);
    await runsAsUserGit(workspace, marker);
    expect(await lookAtFiles(workspace)).toEqual(partial("remote.origin.promisor"));
    expect(existsSync(marker)).toBe(false);
  });

  it("is skipped when the setting is spelled in another case, or comes from an included file", async () => {
    const home = await tempDir();
    const { workspace, marker } = await hostileClone(home);
    const unset = (name: string) => git(workspace, "config", "--unset", name);
    unset("remote.origin.promisor");
    await writeFile(join(home, "included"), '[Remote "origin"]\n\tPROMISOR = true\n');
    git(workspace, "config", "include.path", join(home, "included"));
    await runsAsUserGit(workspace, marker);
    // The fetch git tried writes this back: only the included setting is left.
    unset("remote.origin.partialclonefilter");
    expect(await lookAtFiles(workspace)).toEqual(partial("remote.origin.promisor"));
    expect(existsSync(marker)).toBe(false);

    unset("include.path");
    await appendFile(join(workspace, ".git", "config"), "[Extensions]\n\tPartialClone = origin\n");
    await runsAsUserGit(workspace, marker);
    unset("remote.origin.partialclonefilter");
    expect(await lookAtFiles(workspace)).toEqual(partial("extensions.partialclone"));
    expect(existsSync(marker)).toBe(false);
  });
});

describe("an index entry the model plants in an ordinary blobless clone", () => {
  it("never makes mini-agent's git run the user's ssh to the remote", async () => {
    const plant = [
      "git update-index --add --cacheinfo 100644,1111111111111111111111111111111111111111,sub/.gitignore",
      "git update-index --skip-worktree sub/.gitignore",
      "mkdir -p sub && echo x > sub/a.txt",
    ].join(" && ");
    const { workspace, home, options } = await setup([
      stream(turn({ calls: [{ id: "b1", name: "bash", input: { command: plant } }] })),
      stream(turn({ calls: [{ id: "b2", name: "bash", input: { command: "echo y > b.txt" } }] })),
      stream(turn({ text: ["done"] })),
    ]);
    const source = await origin(home);
    await rm(workspace, { recursive: true });
    git(home, "clone", "-q", "--filter=blob:none", `file://${source}`, workspace);
    git(workspace, "remote", "set-url", "origin", "ssh://git@example.invalid/team/project.git");
    // The user's ssh, first on PATH: it leaves a marker when git runs it.
    const bin = join(home, "bin");
    await mkdir(bin);
    const marker = join(home, "ssh-ran");
    await writeFile(join(bin, "ssh"), `#!/bin/sh\ntouch ${marker}\nexit 1\n`);
    await chmod(join(bin, "ssh"), 0o755);
    const env = { ...options.env, PATH: `${bin}:${process.env.PATH}` };

    const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], { ...options, env });
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
    expect(existsSync(marker)).toBe(false);
    const [file = ""] = (await sessionFiles(home)).filter((path) => path.endsWith(".jsonl"));
    const records = (await sessionRecords(file)).filter((r) => r.type === "bash_change");
    const { reason } = partial("remote.origin.promisor");
    expect(records).toEqual([
      { type: "bash_change", toolCallId: "b1", paths: [], skipped: reason },
      { type: "bash_change", toolCallId: "b2", paths: [], skipped: reason },
    ]);
  });
});
