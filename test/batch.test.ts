import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { modelsServer, resultLines, runBatch, taskFile } from "./support/batch.js";
import { useCleanup } from "./support/cleanup.js";
import { survivors } from "./support/processes.js";
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

/** A folder with a task file's folder, an output folder and a workspace holding `files`. */
async function layout(files: Record<string, string> = { "README.md": "a task\n" }) {
  const [tasks, out, home] = [await tempDir(), join(await tempDir(), "out"), await tempDir()];
  await mkdir(join(tasks, "ws"));
  for (const [name, text] of Object.entries(files)) await writeFile(join(tasks, "ws", name), text);
  return { tasks, out, home };
}

const byId = (lines: { id: string }[]) => lines.map((line) => line.id).sort();

describe("mini-agent batch", () => {
  it("scores each task by its check: the oracle passes, the null model fails, no check is no_check", async () => {
    const server = track(await modelsServer({ oracle: [write("answer.txt", "42\n"), done] }));
    const { tasks, out, home } = await layout();
    const check = "grep -qx 42 answer.txt";
    const file = await taskFile(tasks, [
      { id: "solved", prompt: "write 42", workspace: "ws", check, model: "oracle" },
      { id: "untouched", prompt: "write 42", workspace: "ws", check, model: "null" },
      { id: "unchecked", prompt: "anything", workspace: "ws", model: "null" },
    ]);
    const run = await runBatch([file, "--out", out, "--workers", "3"], {
      cwd: tasks,
      home,
      url: server.url,
    });
    expect(run).toMatchObject({ code: 0, stdout: "" });
    const lines = resultLines(out);
    expect(lines.map((line) => [line.id, line.attempt, line.agent, line.outcome]).sort()).toEqual([
      ["solved", 1, "completed", "passed"],
      ["unchecked", 1, "completed", "no_check"],
      ["untouched", 1, "completed", "failed"],
    ]);
    const solved = lines.find((line) => line.id === "solved");
    expect(solved?.diffStat).toEqual({ files: 1, insertions: 1, deletions: 0 });
    expect(readFileSync(join(out, solved?.diff ?? ""), "utf8")).toContain("+42");
    expect(readFileSync(join(out, solved?.log ?? ""), "utf8")).toContain('"type":"result"');
    expect(existsSync(solved?.sessionPath ?? "")).toBe(true);
    // The same command again: nothing left, no request sent.
    const requests = server.requests.length;
    const again = await runBatch([file, "--out", out], { cwd: tasks, home, url: server.url });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("already complete");
    expect(server.requests.length).toBe(requests);
  });

  it("refuses a task file with every bad line named, and starts nothing", async () => {
    const { tasks, out, home } = await layout();
    const file = await taskFile(tasks, [
      { id: "ok", prompt: "p", workspace: "ws" },
      { id: "OK", prompt: "p", workspace: "ws" },
      { id: "..", prompt: "p", workspace: "ws" },
      { id: "a", prompt: "p", workspace: "ws", colour: "red" },
      { id: "b", workspace: "ws" },
      { id: "c", prompt: "p", workspace: "missing" },
      { id: "d", prompt: "p", workspace: "ws", ref: "main" },
    ]);
    await writeFile(file, `${await readFile(file, "utf8")}not json\n`);
    const run = await runBatch([file, "--out", out], {
      cwd: tasks,
      home,
      url: "http://127.0.0.1:9",
    });
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split("\n");
    for (const [line, why] of [
      [2, "is already the id of line 1"],
      [3, "id"],
      [4, "colour"],
      [5, "give exactly one of prompt and promptFile"],
      [6, "workspace: missing does not exist"],
      [7, "ref goes with repo"],
      [8, "not JSON"],
    ] as const) {
      expect(
        lines.some((text) => text.includes(`tasks.jsonl:${line}:`) && text.includes(why)),
      ).toBe(true);
    }
    expect(lines.some((text) => text.includes("tasks.jsonl:1:"))).toBe(false);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses a changed task line with why, and runs it again with --rerun-changed", async () => {
    const server = track(await modelsServer({}));
    const { tasks, out, home } = await layout();
    const line = { id: "t", prompt: "first", workspace: "ws", model: "null" };
    const file = await taskFile(tasks, [line]);
    expect((await runBatch([file, "--out", out], { cwd: tasks, home, url: server.url })).code).toBe(
      0,
    );
    await taskFile(tasks, [{ ...line, prompt: "second" }]);
    const refused = await runBatch([file, "--out", out], { cwd: tasks, home, url: server.url });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("the line of t changed since its results were recorded");
    const rerun = await runBatch([file, "--out", out, "--rerun-changed"], {
      cwd: tasks,
      home,
      url: server.url,
    });
    expect(rerun.code).toBe(0);
    expect(resultLines(out).map((result) => [result.attempt, result.outcome])).toEqual([
      [1, "no_check"],
      [2, "no_check"],
    ]);
  });

  it.skipIf(!sandbox)(
    "keeps a task from reading a sibling's workspace, the results or the task file, and env values from every file",
    async () => {
      const { tasks, out, home } = await layout({ "secret.txt": "SIBLING-SECRET\n" });
      const reader = bash(
        "toolu_r",
        `cat ${out}/work/sibling/1/secret.txt ${out}/results.jsonl ${tasks}/tasks.jsonl; echo "token:$TASK_VALUE"`,
      );
      const server = track(await modelsServer({ reader: [reader, done] }));
      const file = await taskFile(tasks, [
        { id: "sibling", prompt: "p", workspace: "ws", model: "null" },
        {
          id: "reader",
          prompt: "p",
          workspace: "ws",
          model: "reader",
          env: { TASK_VALUE: "zebra-7731-value" },
        },
      ]);
      const run = await runBatch([file, "--out", out, "--workers", "1", "--", "--allow-bash"], {
        cwd: tasks,
        home,
        url: server.url,
      });
      expect(run.code).toBe(0);
      const result = resultLines(out).find((line) => line.id === "reader");
      const log = readFileSync(join(out, result?.log ?? ""), "utf8");
      const output = log.split("\n").find((line) => line.includes('"type":"tool_result"')) ?? "";
      expect(output).toContain("token:[redacted]");
      // The reader's own copy of the workspace holds secret.txt too: the sibling's is what is hidden.
      expect(output).not.toContain("SIBLING-SECRET");
      expect(output).not.toContain("taskHash");
      expect(output).not.toContain('"prompt"');
      const leaked: string[] = [];
      const walk = async (folder: string) => {
        for (const entry of await readdir(folder, { withFileTypes: true })) {
          const path = join(folder, entry.name);
          if (entry.isDirectory()) await walk(path);
          else if (readFileSync(path, "utf8").includes("zebra-7731-value")) leaked.push(path);
        }
      };
      await walk(out);
      expect(leaked).toEqual([]);
      expect(run.stderr).not.toContain("zebra-7731-value");
    },
  );

  it.skipIf(!sandbox)(
    "puts checkFiles back before the check, so a task that edits its tests still fails",
    async () => {
      const { tasks, out, home } = await layout({ "check.sh": "test -f solved\n" });
      await mkdir(join(tasks, "check"));
      await writeFile(join(tasks, "check", "check.sh"), "test -f solved\n");
      const cheat = bash("toolu_c", "echo 'exit 0' > check.sh && ln -s /etc/hostname link.sh");
      const server = track(await modelsServer({ cheat: [cheat, done] }));
      const line = { prompt: "p", workspace: "ws", check: "sh check.sh", model: "cheat" };
      const file = await taskFile(tasks, [
        { id: "restored", ...line, checkFiles: "check" },
        { id: "unguarded", ...line },
      ]);
      const run = await runBatch([file, "--out", out, "--", "--allow-bash"], {
        cwd: tasks,
        home,
        url: server.url,
      });
      expect(run.code).toBe(0);
      const outcomes = Object.fromEntries(
        resultLines(out).map((result) => [result.id, result.outcome]),
      );
      expect(outcomes).toEqual({ restored: "failed", unguarded: "passed" });
    },
  );

  it.skipIf(!sandbox)(
    "leaves no child alive 2 s after a SIGKILL, then scores every task exactly once",
    async () => {
      const slow = bash("toolu_s", "sleep 271828");
      const first = track(await modelsServer({ slow: [slow, done] }));
      const { tasks, out, home } = await layout();
      const lines = [
        { id: "fast-1", prompt: "p", workspace: "ws", model: "null" },
        { id: "fast-2", prompt: "p", workspace: "ws", model: "null" },
        { id: "slow-1", prompt: "p", workspace: "ws", model: "slow" },
        { id: "slow-2", prompt: "p", workspace: "ws", model: "slow" },
      ];
      const file = await taskFile(tasks, lines);
      const args = [file, "--out", out, "--workers", "4", "--", "--allow-bash"];
      let batchPid = 0;
      const killed = runBatch(args, {
        cwd: tasks,
        home,
        url: first.url,
        started: (child) => {
          batchPid = child.pid ?? 0;
        },
      });
      const sleeping = (id: string) =>
        existsSync(join(out, "logs", `${id}.1.jsonl`)) &&
        readFileSync(join(out, "logs", `${id}.1.jsonl`), "utf8").includes('"type":"tool_start"');
      await until(
        () => resultLines(out).length === 2 && sleeping("slow-1") && sleeping("slow-2"),
        60_000,
      );
      process.kill(batchPid, "SIGKILL");
      await killed;
      const markers = ["sleep 271828", `--cwd=${out}/work`];
      expect(await survivors(markers, 2000)).toEqual([]);
      // A line torn by the kill: dropped on resume, the rest kept.
      appendFileSync(join(out, "results.jsonl"), '{"version":1,"id":"slow-1","att');
      const second = track(await modelsServer({ slow: [done] }));
      const resumed = await runBatch(args, { cwd: tasks, home, url: second.url });
      expect(resumed.code).toBe(0);
      // The finished tasks were not run again: the second server heard only the slow ones.
      expect(second.requests.map((request) => request.body.model)).toEqual(["slow", "slow"]);
      const results = resultLines(out);
      expect(byId(results.filter((line) => line.outcome !== "unscored"))).toEqual(byId(lines));
      expect(
        results
          .filter((line) => line.outcome === "unscored")
          .map((line) => [line.id, line.attempt, line.unscored])
          // Both were running when the batch died: their records come in either order.
          .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      ).toEqual([
        ["slow-1", 1, "crashed"],
        ["slow-2", 1, "crashed"],
      ]);
    },
    120_000,
  );

  it.skipIf(!sandbox)(
    "ends an agent at its timeout from outside and scores it failed, or unscored on request",
    async () => {
      const server = track(await modelsServer({ slow: [bash("toolu_t", "sleep 314159"), done] }));
      const { tasks, out, home } = await layout();
      const file = await taskFile(tasks, [
        { id: "late", prompt: "p", workspace: "ws", model: "slow", timeoutS: 1, check: "true" },
      ]);
      const run = await runBatch([file, "--out", out, "--", "--allow-bash"], {
        cwd: tasks,
        home,
        url: server.url,
      });
      expect(run.code).toBe(0);
      expect(resultLines(out).map((line) => [line.agent, line.outcome])).toEqual([
        ["timeout", "failed"],
      ]);
      expect(await survivors(["sleep 314159"])).toEqual([]);
      const unscoredOut = join(await tempDir(), "out");
      const unscored = await runBatch(
        [
          file,
          "--out",
          unscoredOut,
          "--timeout-unscored",
          "--max-attempts",
          "1",
          "--",
          "--allow-bash",
        ],
        {
          cwd: tasks,
          home,
          url: server.url,
        },
      );
      expect(unscored.code).toBe(1);
      expect(
        resultLines(unscoredOut).map((line) => [line.agent, line.outcome, line.unscored]),
      ).toEqual([["timeout", "unscored", "timeout"]]);
    },
  );
});
