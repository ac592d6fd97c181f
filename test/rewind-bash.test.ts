import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, chmod, mkdir, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, useCliSetup } from "./support/cli.js";
import { exitClockEnv, ranForMs } from "./support/exit-clock.js";
import { realSandbox } from "./support/sandbox.js";
import { protocolLines } from "./support/stream-json.js";

/**
 * What bash changed, where the workspace is a git repository: found from git's list of files
 * and their stat information before and after each bash call, recorded with the call, and listed
 * by a rewind as not restored. Git runs outside the sandbox on a repository the model can write:
 * no program its configuration names ever runs, and a git that hangs is skipped within its bound.
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

async function sessionId(home: string): Promise<string> {
  const [file] = (await sessionFiles(home)).filter((path) => path.endsWith(".jsonl"));
  return basename(file ?? "", ".jsonl");
}

const expected = (id: string, dry: boolean) =>
  dry
    ? [
        `would rewind the files and the conversation of session ${id} to just before prompt 1 ("first"):`,
        "would restore a.txt",
        "changed by bash, not restored: b.txt, c.txt",
        "would take the conversation back to just before prompt 1; prompt 1 would stay in the session file as a branch",
        "dry run: nothing was changed",
        "",
      ].join("\n")
    : [
        `rewinding the files and the conversation of session ${id} to just before prompt 1 ("first"):`,
        "restored a.txt",
        "changed by bash, not restored: b.txt, c.txt",
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
  expect(git(workspace, "status", "--porcelain")).toBe(" M b.txt\n?? c.txt\n");
}

describe("what bash changed, in a git repository", () => {
  it("is listed as not restored by a rewind, beside the file the edit changed, which is restored (--sandbox off)", async () => {
    await editAndBash("off");
  });

  it.skipIf(!sandboxed)(
    "is listed as not restored by a rewind, beside the restored edit, with bash in the sandbox",
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

  it("skips a git that hangs within its bound, and the rewind says what bash changed is not known", async () => {
    const { workspace, home, options } = await setup(script);
    await repository(workspace);
    const shims = join(home, "shims");
    await mkdir(shims);
    await writeFile(join(shims, "git"), "#!/bin/sh\nexec sleep 60\n");
    await chmod(join(shims, "git"), 0o755);
    const clock = join(home, "exit-clock.json");
    const env = exitClockEnv({ ...options.env, PATH: `${shims}:${process.env.PATH}` }, clock);
    const run = await runBin(["--allow-bash", "--sandbox", "off", "first"], { ...options, env });
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
    // Not the 60 s of the git that hangs: the run, on its own clock, ends within git's bound.
    expect(await ranForMs(clock)).toBeLessThan(15_000);
    const id = await sessionId(home);
    const dry = await runBin(["rewind", "--to", "1", "--dry-run"], options);
    expect(dry).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        `would rewind the files and the conversation of session ${id} to just before prompt 1 ("first"):`,
        "would restore a.txt",
        "note: what 1 bash command changed from prompt 1 on is not known (git took over 2 s: skipped); it is not restored",
        "would take the conversation back to just before prompt 1; prompt 1 would stay in the session file as a branch",
        "dry run: nothing was changed",
        "",
      ].join("\n"),
    });
  }, 30_000);

  it("is not tracked outside a git repository, and the rewind says so", async () => {
    const { home, options } = await setup(script);
    await writeFile(join(options.cwd, "a.txt"), "one\n");
    await writeFile(join(options.cwd, "b.txt"), "two\n");
    const run = await runBin(["--allow-bash", "--sandbox", "off", "first"], options);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
    const id = await sessionId(home);
    const dry = await runBin(["rewind", "--to", "1", "--dry-run"], options);
    expect(dry).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        `would rewind the files and the conversation of session ${id} to just before prompt 1 ("first"):`,
        "would restore a.txt",
        "note: 1 bash command ran from prompt 1 on; what bash changed is not tracked and not restored",
        "would take the conversation back to just before prompt 1; prompt 1 would stay in the session file as a branch",
        "dry run: nothing was changed",
        "",
      ].join("\n"),
    });
  });
});
