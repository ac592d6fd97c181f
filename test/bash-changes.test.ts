import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rewindAtPrompt } from "../src/cli/rewind-turn.js";
import { lookAtFiles } from "../src/rewind/bash-changes.js";
import { call, done, text } from "../src/testing/fake-client.js";
import { recordsOf, trackedRunner } from "./support/changes.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";

/**
 * After each `bash` call in a git repository, a `bash_change` record names the files whose stat
 * information changed among those git lists (tracked, and untracked ones no ignore rule leaves
 * out), through the runner's one event stream; outside a repository there is none.
 */

const tempDir = useTempDirs();

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd,
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  });
}

async function repository(workspace: string, files: Record<string, string>): Promise<void> {
  await mkdir(workspace, { recursive: true });
  git(workspace, "init", "-q");
  for (const [name, content] of Object.entries(files))
    await writeFile(join(workspace, name), content);
  git(workspace, "add", ...Object.keys(files));
  git(workspace, "commit", "-q", "-m", "start");
}

const bashRecords = (path: string) => recordsOf(path).filter((r) => r.type === "bash_change");

describe("what bash changed", () => {
  it("records the files a bash call changed, removed and made, not the ignored ones, nor the untouched", async () => {
    const home = await tempDir();
    await repository(join(home, "ws"), {
      ".gitignore": "ignored.txt\n",
      "a.txt": "a\n",
      "b.txt": "b\n",
      "same.txt": "same\n",
    });
    const { runner, path } = await trackedRunner(home, [
      [
        call("b1", "bash", {
          command:
            "echo x >> a.txt; rm b.txt; mkdir -p d; echo n > d/new.txt; echo i > ignored.txt",
        }),
        call("b2", "bash", { command: "true" }),
        done,
      ],
      [text("done"), done],
    ]);
    expect(await runner.runTurn("go")).toMatchObject({ status: "completed" });
    expect(bashRecords(path)).toEqual([
      { type: "bash_change", toolCallId: "b1", paths: ["a.txt", "b.txt", "d/new.txt"] },
      { type: "bash_change", toolCallId: "b2", paths: [] },
    ]);
  });

  it("names at most 1,000 files of one call and counts the rest", async () => {
    const home = await tempDir();
    await repository(join(home, "ws"), { "a.txt": "a\n" });
    const { runner, path } = await trackedRunner(home, [
      [call("b1", "bash", { command: "for i in $(seq 1000 2004); do : > f$i; done" }), done],
      [text("done"), done],
    ]);
    await runner.runTurn("go");
    const names = Array.from({ length: 1000 }, (_, i) => `f${1000 + i}`);
    expect(bashRecords(path)).toEqual([
      { type: "bash_change", toolCallId: "b1", paths: names, more: 5 },
    ]);
  });

  it("records nothing outside a git repository", async () => {
    const home = await tempDir();
    const { runner, path } = await trackedRunner(home, [
      [call("b1", "bash", { command: "echo x > a.txt" }), done],
      [text("done"), done],
    ]);
    await runner.runTurn("go");
    expect(bashRecords(path)).toEqual([]);
    expect(recordsOf(path).filter((r) => r.type === "message")).toHaveLength(4);
  });
});

describe("an interrupted bash call", () => {
  it("records that what it changed is not known, without a look after it that would hold up the abort", async () => {
    const home = await tempDir();
    await repository(join(home, "ws"), { "a.txt": "a\n" });
    const { runner, path } = await trackedRunner(home, [
      [call("b1", "bash", { command: "echo x >> a.txt; sleep 30" }), done],
    ]);
    const controller = new AbortController();
    const turn = runner.runTurn("go", { signal: controller.signal });
    // Aborted once the command has written: it runs, and has changed a file.
    await until(async () => (await readFile(join(home, "ws", "a.txt"), "utf8")) === "a\nx\n");
    controller.abort();
    const aborted = performance.now();
    expect(await turn).toMatchObject({ status: "aborted" });
    expect(performance.now() - aborted).toBeLessThan(1000);
    expect(bashRecords(path)).toEqual([
      { type: "bash_change", toolCallId: "b1", paths: [], skipped: "the call was interrupted" },
    ]);
  });
});

describe("the git that looks", () => {
  it("is never one planted in the repository, through a relative or an inside folder of PATH", async () => {
    const home = await tempDir();
    const workspace = join(home, "ws");
    await repository(workspace, { "a.txt": "a\n" });
    const marker = join(home, "planted-git-ran");
    await mkdir(join(workspace, "bin"));
    for (const planted of [join(workspace, "git"), join(workspace, "bin", "git")]) {
      await writeFile(planted, `#!/bin/sh\ntouch ${marker}\n`);
      await chmod(planted, 0o755);
    }
    const path = [".", "", "bin", join(workspace, "bin"), process.env.PATH].join(":");
    const look = await lookAtFiles(workspace, { path });
    expect(look instanceof Map ? [...look.keys()].sort() : look).toEqual([
      "a.txt",
      "bin/git",
      "git",
    ]);
    expect(existsSync(marker)).toBe(false);
    expect(await lookAtFiles(workspace, { path: ".:bin" })).toEqual({
      kind: "skipped",
      reason: "no git outside the repository on PATH: skipped",
    });
  });
});

describe("a file name that is not UTF-8", () => {
  it("is recorded as odd names are shown, \\xNN for each stray byte,, and its change is seen", async () => {
    const home = await tempDir();
    await repository(join(home, "ws"), { "a.txt": "a\n" });
    const { runner, path } = await trackedRunner(home, [
      [call("b1", "bash", { command: "printf x > \"$(printf 'caf\\351.txt')\"" }), done],
      [text("done"), done],
    ]);
    await runner.runTurn("go");
    expect(bashRecords(path)).toEqual([
      { type: "bash_change", toolCallId: "b1", paths: ["caf\\xE9.txt"] },
    ]);
  });
});

describe("a planted repository setting", () => {
  it("moves not the list: core.worktree elsewhere and core.bare are not followed", async () => {
    const home = await tempDir();
    const workspace = join(home, "ws");
    await repository(workspace, { "a.txt": "a\n" });
    await mkdir(join(home, "elsewhere"));
    await writeFile(join(home, "elsewhere", "secret.txt"), "s\n");
    await appendFile(
      join(workspace, ".git", "config"),
      `[core]\n\tworktree = ${join(home, "elsewhere")}\n\tbare = true\n`,
    );
    const look = await lookAtFiles(workspace);
    expect(look instanceof Map ? [...look.keys()] : look).toEqual(["a.txt"]);
  });
});

describe("/rewind at the prompt", () => {
  it("lists what bash changed as not restored, beside the files it puts back, and alone when only bash changed files", async () => {
    const home = await tempDir();
    await repository(join(home, "ws"), { "a.txt": "0", "b.txt": "b\n" });
    const session = await trackedRunner(home, [
      [
        call("r1", "read", { path: "a.txt" }),
        call("e1", "edit", { path: "a.txt", oldText: "0", newText: "1" }),
        call("b1", "bash", { command: "echo x >> b.txt" }),
        done,
      ],
      [text("one"), done],
      [call("b2", "bash", { command: "echo y > c.txt" }), done],
      [text("two"), done],
    ]);
    const { workspace, runner, journal } = session;
    await runner.runTurn("first");
    await runner.runTurn("second");
    let shown = "";
    const parts = {
      runner,
      journal,
      workspace,
      stateDir: session.state,
      write: (t: string) => (shown += t),
    };
    await rewindAtPrompt(parts, { kind: "rewind", to: 2 });
    expect(shown).toBe(
      [
        "changed by bash, not restored: c.txt",
        "mini-agent: the conversation went back to just before prompt 2; prompt 2 stays in the session file as a branch",
        "",
      ].join("\n"),
    );
    shown = "";
    await rewindAtPrompt(parts, { kind: "rewind", to: 1 });
    expect(shown).toBe(
      [
        "restored a.txt",
        // c.txt too: the rewind to prompt 2 left it as bash made it, on the branch now off.
        "changed by bash, not restored: b.txt, c.txt",
        "mini-agent: the conversation went back to just before prompt 1; prompt 1 stays in the session file as a branch",
        "",
      ].join("\n"),
    );
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("0");
  });
});
