import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAnthropicServer, status } from "../src/testing/anthropic-server.js";
import { taskModels } from "../src/testing/task-models.js";
import { modelsServer, resultLines, runBatch, taskFile } from "./support/batch.js";
import { useCleanup } from "./support/cleanup.js";
import { catches, processesWith, survivors } from "./support/processes.js";
import { realSandbox } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";

const tempDir = useTempDirs();
const track = useCleanup();
const sandbox = await realSandbox();

const bash = (id: string, command: string) => ({
  calls: [{ id, name: "bash", input: { command } }],
});
const write = (path: string, content: string) => ({
  calls: [{ id: "toolu_w", name: "write", input: { path, content } }],
});
const done = { text: "done" };

/** Where the sandbox is not what a test is about, the children and checks run without it. */
const noSandbox = ["--", "--sandbox", "off"];

async function layout(files: Record<string, string> = { "README.md": "a task\n" }) {
  const [tasks, out, home] = [await tempDir(), join(await tempDir(), "out"), await tempDir()];
  await mkdir(join(tasks, "ws"));
  for (const [name, text] of Object.entries(files)) await writeFile(join(tasks, "ws", name), text);
  return { tasks, out, home };
}

const rows = (lines: ReturnType<typeof resultLines>) =>
  lines.map((line) => [line.id, line.attempt, line.agent, line.outcome, line.unscored]);

/** The text of the first user message of a recorded Messages API request. */
function firstPrompt(body: Record<string, unknown>): string {
  const [first] = (body.messages ?? []) as {
    content: string | { type: string; text?: string }[];
  }[];
  const content = first?.content ?? "";
  return typeof content === "string"
    ? content
    : content.map((block) => (block.type === "text" ? (block.text ?? "") : "")).join("");
}

const gitIn = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();

describe("mini-agent batch: the task line", () => {
  it("clones a repo at its ref (or its HEAD), with .git inside the workspace, and diffs against it", async () => {
    const server = track(await modelsServer({ oracle: [write("answer.txt", "42\n"), done] }));
    const { tasks, out, home } = await layout();
    const repo = join(tasks, "repo");
    await mkdir(repo);
    gitIn(repo, "init", "--quiet", "--initial-branch=main");
    await writeFile(join(repo, "version.txt"), "1\n");
    gitIn(repo, "add", "version.txt");
    gitIn(repo, "commit", "--quiet", "-m", "one");
    gitIn(repo, "tag", "v1");
    const v1 = gitIn(repo, "rev-parse", "HEAD");
    await writeFile(join(repo, "version.txt"), "2\n");
    gitIn(repo, "commit", "--quiet", "-am", "two");
    const head = gitIn(repo, "rev-parse", "HEAD");
    const at = (sha: string, version: string) =>
      `test "$(git rev-parse HEAD)" = ${sha} && grep -qx ${version} version.txt && test -d .git`;
    const file = await taskFile(tasks, [
      { id: "at-tag", prompt: "p", repo: "repo", ref: "v1", model: "oracle", check: at(v1, "1") },
      { id: "at-head", prompt: "p", repo: "repo", model: "null", check: at(head, "2") },
    ]);
    const run = await runBatch([file, "--out", out, "--workers", "2", ...noSandbox], {
      cwd: tasks,
      home,
      url: server.url,
    });
    expect(run).toMatchObject({ code: 0, stdout: "" });
    const lines = resultLines(out);
    expect(rows(lines).sort()).toEqual([
      ["at-head", 1, "completed", "passed", undefined],
      ["at-tag", 1, "completed", "passed", undefined],
    ]);
    const tagged = lines.find((line) => line.id === "at-tag");
    expect(tagged?.diffStat).toEqual({ files: 1, insertions: 1, deletions: 0 });
    const diff = readFileSync(join(out, tagged?.diff ?? ""), "utf8");
    expect(diff).toContain("b/answer.txt");
    expect(diff).not.toContain("version.txt");
    // Each workspace has its own .git, and the repository itself is untouched.
    expect(existsSync(join(out, "work", "at-tag", "1", ".git", "HEAD"))).toBe(true);
    expect(gitIn(repo, "status", "--porcelain")).toBe("");
  });

  it("reads promptFile relative to the task file's folder, wherever the batch runs", async () => {
    const server = track(await modelsServer({}));
    const { tasks, out, home } = await layout();
    await mkdir(join(tasks, "prompts"));
    await writeFile(join(tasks, "prompts", "one.md"), "Rename the widget to gadget.\n");
    const file = await taskFile(tasks, [
      { id: "from-file", promptFile: "prompts/one.md", workspace: "ws", model: "null" },
    ]);
    const elsewhere = await tempDir();
    const run = await runBatch([file, "--out", out, ...noSandbox], {
      cwd: elsewhere,
      home,
      url: server.url,
    });
    expect(run.code).toBe(0);
    expect(server.requests.map((request) => firstPrompt(request.body))).toEqual([
      "Rename the widget to gadget.\n",
    ]);
    expect(rows(resultLines(out))).toEqual([["from-file", 1, "completed", "no_check", undefined]]);
  });
  it("records the session's path where the agent wrote it, with a task's own MINI_AGENT_HOME", async () => {
    const server = track(await modelsServer({}));
    const { tasks, out, home } = await layout();
    const state = join(home, "task-state");
    const file = await taskFile(tasks, [
      {
        id: "own-home",
        prompt: "p",
        workspace: "ws",
        model: "null",
        env: { MINI_AGENT_HOME: state },
      },
    ]);
    expect(
      (await runBatch([file, "--out", out, ...noSandbox], { cwd: tasks, home, url: server.url }))
        .code,
    ).toBe(0);
    const [line] = resultLines(out);
    expect(line?.sessionPath?.startsWith(join(state, "sessions"))).toBe(true);
    expect(existsSync(line?.sessionPath ?? "")).toBe(true);
  });
});

describe("mini-agent batch: unscored attempts", () => {
  it("leaves a task whose setup timed out unscored, its setup ended, and runs it again on resume", async () => {
    const server = track(await modelsServer({}));
    const { tasks, out, home } = await layout();
    const file = await taskFile(tasks, [
      {
        id: "slow-setup",
        prompt: "p",
        workspace: "ws",
        model: "null",
        setup: "sleep 265358",
        timeoutS: 1,
      },
    ]);
    const args = [file, "--out", out, "--max-attempts", "1", ...noSandbox];
    const first = await runBatch(args, { cwd: tasks, home, url: server.url });
    expect(first.code).toBe(1);
    expect(await survivors(["sleep 265358"])).toEqual([]);
    expect(rows(resultLines(out))).toEqual([
      ["slow-setup", 1, undefined, "unscored", "setup_timeout"],
    ]);
    // The agent never ran; resume with an attempt more tries again.
    expect(server.requests).toEqual([]);
    args[args.indexOf("--max-attempts") + 1] = "2";
    const again = await runBatch(args, { cwd: tasks, home, url: server.url });
    expect(again.code).toBe(1);
    expect(rows(resultLines(out)).map((row) => row.slice(1))).toEqual([
      [1, undefined, "unscored", "setup_timeout"],
      [2, undefined, "unscored", "setup_timeout"],
    ]);
    // Out of attempts: nothing runs, and the line says why rather than "already complete".
    const spent = await runBatch(args, { cwd: tasks, home, url: server.url });
    expect(spent.code).toBe(1);
    expect(spent.stderr).toBe(
      "batch: nothing left to run: 1 tasks unscored after their last attempt (--max-attempts 2)\n",
    );
    expect(resultLines(out)).toHaveLength(2);
  });

  it("runs an agent that gave up on 429s again in the same batch up to --max-attempts, unscored (rate_limited), and scores it on resume", async () => {
    const answers = taskModels({});
    let limited = true;
    const server = track(
      await startAnthropicServer([], {
        everyRequest: (body) => (limited ? status(429, 0) : answers(body)),
      }),
    );
    const { tasks, out, home } = await layout();
    const file = await taskFile(tasks, [
      { id: "limited", prompt: "p", workspace: "ws", model: "null", check: "true" },
    ]);
    const args = [file, "--out", out, ...noSandbox];
    const first = await runBatch(args, { cwd: tasks, home, url: server.url });
    expect(first.code).toBe(1);
    // Three attempts of four requests each: the child's first and its three retries (--max-retries 3).
    expect(server.requests).toHaveLength(12);
    const lines = resultLines(out);
    expect(
      lines.map((line) => [
        line.agent,
        line.outcome,
        line.unscored,
        line.agentExitCode,
        line.errorKind,
      ]),
    ).toEqual(
      Array.from({ length: 3 }, () => [
        "rate_limited",
        "unscored",
        "rate_limited",
        1,
        "rate_limited",
      ]),
    );
    for (const line of lines) {
      expect(line.checkExitCode).toBeUndefined();
      expect(line.retries).toEqual({ count: 3, rateLimited: 3, overloaded: 0, waitedMs: 0 });
    }
    expect(first.stderr).toContain("batch: limited #1 met a rate limit (429 rate_limit_error:");
    limited = false;
    const again = await runBatch([file, "--out", out, "--max-attempts", "4", ...noSandbox], {
      cwd: tasks,
      home,
      url: server.url,
    });
    expect(again.code).toBe(0);
    expect(rows(resultLines(out))).toEqual([
      ["limited", 1, "rate_limited", "unscored", "rate_limited"],
      ["limited", 2, "rate_limited", "unscored", "rate_limited"],
      ["limited", 3, "rate_limited", "unscored", "rate_limited"],
      ["limited", 4, "completed", "passed", undefined],
    ]);
  });

  it.skipIf(!sandbox)(
    "leaves a task whose sandbox cannot start unscored (infra_error), never failed",
    async () => {
      const server = track(await modelsServer({}));
      const { tasks, out, home } = await layout();
      // A PATH with what the batch itself runs, and no bwrap.
      const bin = await tempDir();
      for (const program of ["sh", "git"]) {
        const found = execFileSync("sh", ["-c", `command -v ${program}`], { encoding: "utf8" });
        await symlink(found.trim(), join(bin, program));
      }
      const file = await taskFile(tasks, [
        { id: "checked", prompt: "p", workspace: "ws", model: "null", check: "true" },
        { id: "unchecked", prompt: "p", workspace: "ws", model: "null" },
      ]);
      const run = await runBatch(
        [file, "--out", out, "--max-attempts", "1", "--", "--allow-bash"],
        { cwd: tasks, home, url: server.url, env: { PATH: bin } },
      );
      expect(run.code).toBe(1);
      const lines = resultLines(out);
      expect(rows(lines).sort()).toEqual([
        ["checked", 1, "completed", "unscored", "infra_error"],
        ["unchecked", 1, "completed", "unscored", "infra_error"],
      ]);
      for (const line of lines) expect(line.error).toMatch(/sandbox/);
    },
  );
});

describe("mini-agent batch: choosing what runs again", () => {
  it("runs a failed task again with --retry-failed, and leaves the passed one alone", async () => {
    const server = track(await modelsServer({ oracle: [write("answer.txt", "42\n"), done] }));
    const { tasks, out, home } = await layout();
    const check = "grep -qx 42 answer.txt";
    const file = await taskFile(tasks, [
      { id: "passes", prompt: "p", workspace: "ws", model: "oracle", check },
      { id: "fails", prompt: "p", workspace: "ws", model: "null", check },
    ]);
    const args = [file, "--out", out, ...noSandbox];
    expect((await runBatch(args, { cwd: tasks, home, url: server.url })).code).toBe(0);
    const before = server.requests.length;
    const plain = await runBatch(args, { cwd: tasks, home, url: server.url });
    expect(plain.stderr).toContain("already complete");
    const retried = await runBatch([file, "--out", out, "--retry-failed", ...noSandbox], {
      cwd: tasks,
      home,
      url: server.url,
    });
    expect(retried.code).toBe(0);
    expect(server.requests.slice(before).map((request) => request.body.model)).toEqual(["null"]);
    expect(rows(resultLines(out)).sort()).toEqual([
      ["fails", 1, "completed", "failed", undefined],
      ["fails", 2, "completed", "failed", undefined],
      ["passes", 1, "completed", "passed", undefined],
    ]);
  });

  it("runs only the tasks --only names, whatever their record, and refuses an id the file lacks", async () => {
    const server = track(await modelsServer({ oracle: [write("answer.txt", "42\n"), done] }));
    const { tasks, out, home } = await layout();
    const check = "grep -qx 42 answer.txt";
    const file = await taskFile(tasks, [
      { id: "a", prompt: "p", workspace: "ws", model: "oracle", check },
      { id: "b", prompt: "p", workspace: "ws", model: "null", check },
      { id: "c", prompt: "p", workspace: "ws", model: "null" },
    ]);
    const only = (...ids: string[]) =>
      runBatch([file, "--out", out, ...ids.flatMap((id) => ["--only", id]), ...noSandbox], {
        cwd: tasks,
        home,
        url: server.url,
      });
    const first = await only("a");
    expect(first.code).toBe(0);
    expect(rows(resultLines(out))).toEqual([["a", 1, "completed", "passed", undefined]]);
    const again = await only("a", "b");
    expect(again.code).toBe(0);
    expect(rows(resultLines(out)).sort()).toEqual([
      ["a", 1, "completed", "passed", undefined],
      ["a", 2, "completed", "passed", undefined],
      ["b", 1, "completed", "failed", undefined],
    ]);
    const unknown = await only("a", "zz");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--only names no task of the file: zz");
    expect(resultLines(out)).toHaveLength(3);
    // The rest runs with the plain command: c alone is left.
    const rest = await runBatch([file, "--out", out, ...noSandbox], {
      cwd: tasks,
      home,
      url: server.url,
    });
    expect(rest.code).toBe(0);
    expect(rows(resultLines(out)).at(-1)).toEqual(["c", 1, "completed", "no_check", undefined]);
  });
});

describe("mini-agent batch: SIGINT", () => {
  /** Starts a batch, sends it SIGINT once `ready` holds, and resolves to how it ended. */
  async function interrupted(
    args: string[],
    options: { cwd: string; home: string; url: string },
    ready: () => boolean | Promise<boolean>,
  ) {
    let pid = 0;
    const run = runBatch(args, {
      ...options,
      started: (child) => {
        pid = child.pid ?? 0;
      },
    });
    await until(async () => pid !== 0 && catches(pid, "SIGINT") && (await ready()), 60_000);
    process.kill(pid, "SIGINT");
    return run;
  }

  it.skipIf(!sandbox)(
    "stops the running agents, keeps every result so far, leaves no process, and resumes",
    async () => {
      const first = track(await modelsServer({ slow: [bash("toolu_s", "sleep 358979"), done] }));
      const { tasks, out, home } = await layout();
      const file = await taskFile(tasks, [
        { id: "fast", prompt: "p", workspace: "ws", model: "null" },
        { id: "slow", prompt: "p", workspace: "ws", model: "slow" },
      ]);
      const args = [file, "--out", out, "--workers", "2", "--", "--allow-bash"];
      const sleeping = () => {
        const log = join(out, "logs", "slow.1.jsonl");
        return existsSync(log) && readFileSync(log, "utf8").includes('"type":"tool_start"');
      };
      const stopped = await interrupted(
        args,
        { cwd: tasks, home, url: first.url },
        () => resultLines(out).length === 1 && sleeping(),
      );
      expect(stopped.code).toBe(130);
      expect(await survivors(["sleep 358979", `--cwd=${out}/work`])).toEqual([]);
      expect(rows(resultLines(out))).toEqual([
        ["fast", 1, "completed", "no_check", undefined],
        ["slow", 1, "aborted", "unscored", "interrupted"],
      ]);
      const second = track(await modelsServer({ slow: [done] }));
      const resumed = await runBatch(args, { cwd: tasks, home, url: second.url });
      expect(resumed.code).toBe(0);
      expect(second.requests.map((request) => request.body.model)).toEqual(["slow"]);
      expect(rows(resultLines(out)).at(-1)).toEqual([
        "slow",
        2,
        "completed",
        "no_check",
        undefined,
      ]);
    },
    120_000,
  );

  it("stops a running setup at once and leaves the attempt unscored", async () => {
    const server = track(await modelsServer({}));
    const { tasks, out, home } = await layout();
    const file = await taskFile(tasks, [
      { id: "setting-up", prompt: "p", workspace: "ws", model: "null", setup: "sleep 323846" },
    ]);
    const stopped = await interrupted(
      [file, "--out", out, ...noSandbox],
      { cwd: tasks, home, url: server.url },
      async () => (await processesWith("sleep 323846")).length > 0,
    );
    expect(stopped.code).toBe(130);
    expect(await survivors(["sleep 323846"])).toEqual([]);
    expect(rows(resultLines(out))).toEqual([
      ["setting-up", 1, undefined, "unscored", "interrupted"],
    ]);
    expect(server.requests).toEqual([]);
  });

  it("stops a running check at once and leaves the attempt unscored, not failed", async () => {
    const server = track(await modelsServer({}));
    const { tasks, out, home } = await layout();
    const file = await taskFile(tasks, [
      { id: "checking", prompt: "p", workspace: "ws", model: "null", check: "sleep 264338" },
    ]);
    const stopped = await interrupted(
      [file, "--out", out, ...noSandbox],
      { cwd: tasks, home, url: server.url },
      async () => (await processesWith("sleep 264338")).length > 0,
    );
    expect(stopped.code).toBe(130);
    expect(await survivors(["sleep 264338"])).toEqual([]);
    expect(rows(resultLines(out))).toEqual([
      ["checking", 1, "completed", "unscored", "interrupted"],
    ]);
  });
});
