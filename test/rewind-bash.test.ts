import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, chmod, mkdir, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionId, useCliSetup } from "./support/cli.js";
import { realSandbox } from "./support/sandbox.js";
import { protocolLines } from "./support/stream-json.js";

/**
 * What bash changed, in a git repository and outside one: found by the workspace snapshot before
 * and after each bash call, recorded with the call, and put back by a rewind beside what `edit`
 * changed. The snapshot runs no program, so a repository's configuration never runs one either.
 */

const setup = useCliSetup();
const sandboxed = await realSandbox({ mode: "auto" });

/** git as the test runs it: its own clean configuration, never the user's. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd,
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    encoding: "utf8",
  });
}

/** A repository with a.txt and b.txt committed. */
async function repository(workspace: string): Promise<void> {
  git(workspace, "init", "-q");
  await writeFile(join(workspace, "a.txt"), "one\n");
  await writeFile(join(workspace, "b.txt"), "two\n");
  git(workspace, "add", "a.txt", "b.txt");
  git(workspace, "commit", "-q", "-m", "start");
}

/** The model reads and edits a.txt, then changes b.txt and makes c.txt with bash. */
const script = [
  stream(
    turn({
      calls: [
        { id: "r1", name: "read", input: { path: "a.txt" } },
        { id: "e1", name: "edit", input: { path: "a.txt", oldText: "one", newText: "1" } },
        { id: "b1", name: "bash", input: { command: "printf 'TWO\\n' > b.txt; echo new > c.txt" } },
      ],
    }),
  ),
  stream(turn({ text: ["done"] })),
];

const expected = (id: string, dry: boolean) =>
  dry
    ? [
        `would rewind the files and the conversation of session ${id} to just before prompt 1 ("first"):`,
        "would restore a.txt",
        "would restore b.txt",
        "would delete c.txt (the agent created it)",
        "would take the conversation back to just before prompt 1; prompt 1 would stay in the session file as a branch",
        "dry run: nothing was changed",
        "",
      ].join("\n")
    : [
        `rewinding the files and the conversation of session ${id} to just before prompt 1 ("first"):`,
        "restored a.txt",
        "restored b.txt",
        "deleted c.txt (the agent created it)",
        "the conversation goes on from just before prompt 1 (mini-agent --continue); prompt 1 stays in the session file as a branch",
        "",
      ].join("\n");

async function editAndBash(sandbox: string) {
  const { workspace, home, options, server } = await setup(script);
  await repository(workspace);
  const run = await runBin(["--allow-bash", "--sandbox", sandbox, "first"], options);
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
  expect(server.rejections).toEqual([]);
  const id = await sessionId(home);
  const dry = await runBin(["rewind", "--to", "1", "--dry-run"], options);
  expect(dry).toEqual({ code: 0, stderr: "", stdout: expected(id, true) });
  const real = await runBin(["rewind", "--to", "1"], options);
  expect(real).toEqual({ code: 0, stderr: "", stdout: expected(id, false) });
  expect(git(workspace, "status", "--porcelain")).toBe("");
}

describe("what bash changed, in a git repository", () => {
  it("is restored by a rewind, beside the file the edit changed (--sandbox off)", async () => {
    await editAndBash("off");
  });

  it.skipIf(!sandboxed)(
    "is restored by a rewind, beside the restored edit, with bash in the sandbox",
    async () => {
      await editAndBash("required");
    },
  );

  it("is a bash_change line of stream-json, checked against the shipped schema", async () => {
    const { workspace, options } = await setup(script);
    await repository(workspace);
    const args = ["--allow-bash", "--sandbox", "off", "--output-format", "stream-json", "first"];
    const run = await runBin(args, options);
    expect(run.code).toBe(0);
    const lines = protocolLines(run.stdout).filter((line) => line.type === "bash_change");
    expect(lines).toEqual([
      { version: 1, type: "bash_change", id: "b1", paths: ["b.txt", "c.txt"] },
    ]);
  });

  it("never runs a program the repository's configuration names: fsmonitor, a clean filter, hooks", async () => {
    const { workspace, home, options } = await setup(script);
    await repository(workspace);
    const markers = join(home, "markers");
    await mkdir(markers);
    const hooks = join(home, "hooks");
    await mkdir(hooks);
    for (const hook of ["post-index-change", "pre-commit", "post-checkout"]) {
      await writeFile(join(hooks, hook), `#!/bin/sh\ntouch ${join(markers, hook)}\n`);
      await chmod(join(hooks, hook), 0o755);
    }
    await appendFile(
      join(workspace, ".git", "config"),
      [
        "[core]",
        `\tfsmonitor = touch ${join(markers, "fsmonitor")}; false`,
        `\thooksPath = ${hooks}`,
        "\tuntrackedCache = true",
        '[filter "x"]',
        `\tclean = touch ${join(markers, "clean")}; cat`,
        "\trequired = true",
        "[status]",
        "\tshowUntrackedFiles = no",
        "",
      ].join("\n"),
    );
    await writeFile(join(workspace, ".git", "info", "attributes"), "* filter=x\n");
    // The configuration is live: git as a user runs it does run those programs.
    const later = new Date(Date.now() + 5000);
    await utimes(join(workspace, "b.txt"), later, later);
    git(workspace, "status", "--porcelain");
    expect(existsSync(join(markers, "fsmonitor"))).toBe(true);
    expect(existsSync(join(markers, "clean"))).toBe(true);
    await rm(markers, { recursive: true });
    await mkdir(markers);

    const run = await runBin(["--allow-bash", "--sandbox", "off", "first"], options);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
    const id = await sessionId(home);
    const dry = await runBin(["rewind", "--to", "1", "--dry-run"], options);
    expect(dry).toEqual({ code: 0, stderr: "", stdout: expected(id, true) });
    const real = await runBin(["rewind", "--to", "1"], options);
    expect(real).toEqual({ code: 0, stderr: "", stdout: expected(id, false) });
    expect(await readdir(markers)).toEqual([]);
  });

  it("is restored outside a git repository too", async () => {
    const { home, options } = await setup(script);
    await writeFile(join(options.cwd, "a.txt"), "one\n");
    await writeFile(join(options.cwd, "b.txt"), "two\n");
    const run = await runBin(["--allow-bash", "--sandbox", "off", "first"], options);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
    const id = await sessionId(home);
    const real = await runBin(["rewind", "--to", "1"], options);
    expect(real).toEqual({ code: 0, stderr: "", stdout: expected(id, false) });
    expect(await readdir(options.cwd)).toEqual(["a.txt", "b.txt"]);
  });
});
