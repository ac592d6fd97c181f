import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAnthropicServer, status, type TurnScript } from "../src/testing/anthropic-server.js";
import { taskModels } from "../src/testing/task-models.js";
import { resultLines, runBatch, taskFile } from "./support/batch.js";
import { useCleanup } from "./support/cleanup.js";
import { cliEnv, runBin } from "./support/cli.js";
import { protocolLines } from "./support/stream-json.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const track = useCleanup();

/** Where the sandbox is not what a test is about, the children and checks run without it. */
const noSandbox = ["--sandbox", "off"];

/** Each task's own model: a request's model names the task that sent it. */
const solve: TurnScript[] = [
  { calls: [{ id: "toolu_w", name: "write", input: { path: "answer.txt", content: "42\n" } }] },
  { text: "done" },
];
const check = "grep -qx 42 answer.txt";

async function layout() {
  const [tasks, out, home] = [await tempDir(), join(await tempDir(), "out"), await tempDir()];
  await mkdir(join(tasks, "ws"));
  await writeFile(join(tasks, "ws", "README.md"), "a task\n");
  return { tasks, out, home };
}

/** `count` tasks `t1`…, each answered by its own model `m-tN`, all with the same check. */
function solvable(count: number) {
  const ids = Array.from({ length: count }, (_, at) => `t${at + 1}`);
  return {
    ids,
    models: Object.fromEntries(ids.map((id) => [`m-${id}`, solve])),
    lines: ids.map((id) => ({ id, prompt: "write 42", workspace: "ws", check, model: `m-${id}` })),
  };
}

/** The task a recorded request came from: its model is `m-ID`. */
const taskOf = (request: { body: Record<string, unknown> }) => String(request.body.model).slice(2);

/** The input plus output tokens of each `usage` line of an attempt's log. */
function requestTokens(out: string, log: string | undefined): number[] {
  if (log === undefined) return [];
  return readFileSync(join(out, log), "utf8")
    .split("\n")
    .filter((line) => line.includes('"type":"usage"'))
    .map((line) => {
      const { usage } = JSON.parse(line) as {
        usage: { inputTokens: number; outputTokens: number };
      };
      return usage.inputTokens + usage.outputTokens;
    });
}

const tokens = (line: { usage?: { inputTokens: number; outputTokens: number } }) =>
  (line.usage?.inputTokens ?? 0) + (line.usage?.outputTokens ?? 0);

describe("mini-agent batch --budget-tokens", () => {
  it("starts nothing once the budget is spent: the rest are skipped_budget, never started, and the total passes the budget by at most one request per running task", async () => {
    const { ids, models, lines } = solvable(6);
    const server = track(await startAnthropicServer([], { everyRequest: taskModels(models) }));
    const { tasks, out, home } = await layout();
    const file = await taskFile(tasks, lines);
    const budget = 100;
    const workers = 2;
    const args = [file, "--out", out, "--workers", String(workers)];
    const run = await runBatch(
      [...args, "--budget-tokens", String(budget), "--", ...noSandbox, "--token-budget", "30"],
      { cwd: tasks, home, url: server.url },
    );
    expect(run.code).toBe(5);
    const results = resultLines(out);
    const skipped = results.filter((line) => line.agent === "skipped_budget");
    const ran = results.filter((line) => line.agent !== "skipped_budget");
    // It ran out halfway: some tasks ran, the others were skipped, each task once.
    expect(ran.length).toBeGreaterThan(0);
    expect(skipped.length).toBeGreaterThan(0);
    expect([...ran, ...skipped].map((line) => line.id).sort()).toEqual(ids);
    for (const line of skipped) {
      expect(line).toMatchObject({ outcome: "unscored", unscored: "skipped_budget" });
      expect(line.usage).toBeUndefined();
    }
    // Never started: the server heard nothing of them, and no workspace or start was made.
    const heard = new Set(server.requests.map(taskOf));
    expect([...heard].sort()).toEqual(ran.map((line) => line.id).sort());
    const starts = readFileSync(join(out, "starts.jsonl"), "utf8");
    for (const { id, attempt } of skipped) {
      expect(starts).not.toContain(`"id":"${id}"`);
      expect(existsSync(join(out, "work", id, String(attempt)))).toBe(false);
    }
    // Each attempt passes what it was given by at most its last request, and the batch its
    // budget by at most one request per task that ran at once.
    const perRequest = ran.flatMap((line) => requestTokens(out, line.log));
    const largest = Math.max(...perRequest);
    expect(perRequest.reduce((sum, n) => sum + n, 0)).toBe(ran.reduce((s, l) => s + tokens(l), 0));
    for (const line of ran) {
      const last = requestTokens(out, line.log).at(-1) ?? 0;
      expect(line.reservedTokens).toBeGreaterThan(0);
      expect(tokens(line)).toBeLessThanOrEqual((line.reservedTokens ?? 0) + last);
    }
    const total = ran.reduce((sum, line) => sum + tokens(line), 0);
    expect(total).toBeLessThanOrEqual(budget + workers * largest);
    expect(run.stderr).toContain(`batch: the budget of ${budget} tokens is spent (${total} used)`);

    // The budget covers DIR as a whole: the same command starts nothing; a larger one runs the rest.
    const heardBefore = server.requests.length;
    const again = await runBatch(
      [...args, "--budget-tokens", String(budget), "--", ...noSandbox, "--token-budget", "30"],
      { cwd: tasks, home, url: server.url },
    );
    expect(again.code).toBe(5);
    expect(server.requests.length).toBe(heardBefore);
    const larger = await runBatch(
      [...args, "--budget-tokens", "1000", "--", ...noSandbox, "--token-budget", "30"],
      { cwd: tasks, home, url: server.url },
    );
    expect(larger.code).toBe(0);
    const last = new Map(resultLines(out).map((line) => [line.id, line.outcome]));
    expect([...last.values()].every((outcome) => outcome === "passed")).toBe(true);
  }, 120_000);

  it("refuses a budget when a task has no token budget of its own, before anything starts", async () => {
    const { tasks, out, home } = await layout();
    const file = await taskFile(tasks, [
      { id: "a", prompt: "p", workspace: "ws", tokenBudget: 50 },
      { id: "b", prompt: "p", workspace: "ws" },
    ]);
    const run = await runBatch([file, "--out", out, "--budget-tokens", "100"], {
      cwd: tasks,
      home,
      url: "http://127.0.0.1:9",
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "mini-agent batch: --budget-tokens needs each task's token budget, and 1 tasks have none (b): give them tokenBudget, or every task --token-budget N after --\n",
    );
    expect(existsSync(join(out, "work", "a"))).toBe(false);
  });
});

describe("mini-agent batch and the provider's limits", () => {
  it.each([
    [429, "rate_limited", "a rate limit"],
    [529, "overloaded", "an overload"],
  ] as const)(
    "pauses every start while the provider answers %i with retry-after, backs off and recovers, and every task passes",
    async (code, kind, said) => {
      const { ids, models, lines } = solvable(6);
      const answers = taskModels(models);
      const storm = 5;
      let refused = 0;
      const server = track(
        await startAnthropicServer([], {
          everyRequest: (body) => (refused++ < storm ? status(code, 0.05) : answers(body)),
        }),
      );
      const { tasks, out, home } = await layout();
      const file = await taskFile(tasks, lines);
      const run = await runBatch([file, "--out", out, "--workers", "3", "--", ...noSandbox], {
        cwd: tasks,
        home,
        url: server.url,
      });
      expect(run.code).toBe(0);
      const results = resultLines(out);
      expect(results.filter((line) => line.outcome === "failed")).toEqual([]);
      const last = new Map(results.map((line) => [line.id, line.outcome]));
      expect([...last.keys()].sort()).toEqual(ids);
      expect([...last.values()].every((outcome) => outcome === "passed")).toBe(true);
      // Every refusal the server gave is in the results: a retry the agent made, or an attempt it
      // gave up (then run again).
      const counted = kind === "rate_limited" ? "rateLimited" : "overloaded";
      const retried = results.reduce((sum, line) => sum + (line.retries?.[counted] ?? 0), 0);
      const gaveUp = results.filter((line) => line.agent === "rate_limited").length;
      expect(retried + gaveUp).toBe(storm);
      for (const line of results.filter((line) => line.retries !== undefined))
        expect(line.retries?.waitedMs).toBe(50 * (line.retries?.count ?? 0));
      // The first three tasks met the refusals; the batch paused its starts for what was asked
      // and halved its concurrency to 1, given back only by attempts that met none.
      expect(run.stderr).toMatch(
        new RegExp(
          `batch: t[123] #1 met ${said} \\(${code} [a-z_]+: [^)]*\\): new starts paused for 50 ms as retry-after asks, then 1 at once\\n`,
        ),
      );
      expect(run.stderr).toContain("batch: no 429 or overload since: 3 at once again\n");
      const order = server.requests.map(taskOf);
      const firstOf = (id: string) => order.indexOf(id);
      const lastOf = (id: string) => order.lastIndexOf(id);
      // t4 started alone, once t1, t2 and t3 had all ended; t5 and t6 only after t4 ended.
      expect(firstOf("t4")).toBeGreaterThan(Math.max(lastOf("t1"), lastOf("t2"), lastOf("t3")));
      expect(Math.min(firstOf("t5"), firstOf("t6"))).toBeGreaterThan(lastOf("t4"));
    },
    120_000,
  );

  it("stops starting tasks after N attempts in a row fail on a refused key, and leaves them unscored", async () => {
    const server = track(
      await startAnthropicServer([], {
        everyRequest: () => status(401, undefined, "invalid x-api-key"),
      }),
    );
    const { tasks, out, home } = await layout();
    const file = await taskFile(
      tasks,
      ["a", "b", "c", "d", "e"].map((id) => ({ id, prompt: "p", workspace: "ws", check })),
    );
    const run = await runBatch(
      [file, "--out", out, "--workers", "1", "--max-consecutive-errors", "2", "--", ...noSandbox],
      { cwd: tasks, home, url: server.url },
    );
    expect(run.code).toBe(1);
    // One request each: the SDK retries nothing itself, and a refused key is not retried.
    expect(server.requests).toHaveLength(2);
    expect(
      resultLines(out).map((line) => [
        line.id,
        line.agent,
        line.outcome,
        line.unscored,
        line.errorKind,
      ]),
    ).toEqual([
      ["a", "error", "unscored", "provider_error", "auth"],
      ["b", "error", "unscored", "provider_error", "auth"],
    ]);
    expect(run.stderr).toContain(
      "batch: 2 attempts in a row ended in an error (the last: provider error 401 authentication_error: invalid x-api-key",
    );
    expect(run.stderr).toContain(
      "nothing more starts (--max-consecutive-errors 2); the same command goes on\n",
    );
  }, 60_000);
});

describe("the child's stream-json for a batch", () => {
  it("tells each retry's errorKind and retry-after, with --max-retries bounding them and the SDK retrying nothing itself", async () => {
    const server = track(
      await startAnthropicServer([status(429, 0.05), status(529, 0.07), status(429, 0.05)]),
    );
    const [workspace, home] = [await tempDir(), await tempDir()];
    const run = await runBin(
      ["-p", "task", "--output-format", "stream-json", "--max-retries", "2"],
      { cwd: workspace, env: cliEnv(home, server.url) },
    );
    expect(run.code).toBe(1);
    expect(server.requests).toHaveLength(3);
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "retry")).toEqual([
      {
        version: 1,
        type: "retry",
        attempt: 2,
        attempts: 3,
        delayMs: 50,
        reason:
          "429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit",
        errorKind: "rate_limited",
        retryAfterMs: 50,
      },
      {
        version: 1,
        type: "retry",
        attempt: 3,
        attempts: 3,
        delayMs: 70,
        reason: "529 overloaded_error: Overloaded",
        errorKind: "overloaded",
        retryAfterMs: 70,
      },
    ]);
    expect(lines.at(-1)).toMatchObject({
      type: "result",
      status: "error",
      errorKind: "rate_limited",
      retryAfterMs: 50,
    });
  }, 30_000);

  it("refuses a --max-retries that is not a whole number from 0 to 10", async () => {
    const [workspace, home] = [await tempDir(), await tempDir()];
    const run = await runBin(["-p", "task", "--max-retries", "11"], {
      cwd: workspace,
      env: cliEnv(home, "http://127.0.0.1:9"),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--max-retries must be a whole number from 0 to 10, not "11"');
  });
});
