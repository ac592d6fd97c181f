// `mini-agent batch`: its cost per task beside the same headless children started by `xargs -P`,
// and the batch process's own peak memory with 10,000 tasks in its file. Every task is answered
// at once with one text reply by `mini-agent-testing serve --models` (the model `null`), so what
// is measured is the process per task and what the batch does around it (a fresh copy of the
// workspace, the stream-json log, the diff, the results line), not a model.

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

/** Tasks of the overhead row, and the children at once on both sides. */
const TASKS = 100;
const WORKERS = 4;
/** The memory row: tasks in the file, children at once, and how many are run before it stops. */
const BIG = 10_000;
const BIG_WORKERS = 8;
const BIG_RUN = 1000;
const PROMPT = "say hi";

export async function batchBench({ row, ms, median, scratch, root, runs }) {
  const bin = join(root, "dist/bundle/main.js");
  const dir = join(scratch, "batch");
  const workspace = join(dir, "tasks", "ws");
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, "hello.txt"), "hello\n");
  writeFileSync(join(workspace, "notes.md"), "# Notes\n\nNothing to do here.\n");
  const models = join(dir, "models.json");
  writeFileSync(models, "{}\n");
  const taskFile = (count) => {
    const file = join(dir, "tasks", `tasks-${count}.jsonl`);
    const lines = Array.from(
      { length: count },
      (_, i) =>
        `${JSON.stringify({ id: `t${i}`, prompt: PROMPT, workspace: "ws", model: "null" })}\n`,
    );
    writeFileSync(file, lines.join(""));
    return file;
  };
  const small = taskFile(TASKS);
  const big = taskFile(BIG);

  const clean = { PATH: process.env.PATH, HOME: process.env.HOME };
  const server = spawn(
    process.execPath,
    [join(root, "dist/testing/cli.js"), "serve", "--models", models],
    {
      env: clean,
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once("line", resolve);
    server.once("exit", (code) => reject(new Error(`mini-agent-testing serve exited ${code}`)));
  });
  const env = {
    ...clean,
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: "bench-key",
    MINI_AGENT_HOME: join(dir, "home"),
  };

  try {
    // Row 1: the whole batch of 100 tasks, then the same children by xargs, alternated.
    const count = Math.min(runs, 5);
    let outs = 0;
    const fresh = () => {
      const out = join(dir, `out-${outs++}`);
      rmSync(out, { recursive: true, force: true });
      return out;
    };
    const viaBatch = async () => {
      const out = fresh();
      const ran = await timed(
        process.execPath,
        [bin, "batch", small, "--out", out, "--workers", String(WORKERS)],
        env,
      );
      const passed = readFileSync(join(out, "results.jsonl"), "utf8")
        .trim()
        .split("\n")
        .filter((line) => JSON.parse(line).agent === "completed").length;
      if (ran.code !== 0 || passed !== TASKS)
        throw new Error(`batch: exit ${ran.code}, ${passed} of ${TASKS} completed`);
      rmSync(out, { recursive: true, force: true });
      return ran.wall;
    };
    const viaXargs = async () => {
      const out = fresh();
      mkdirSync(join(out, "work"), { recursive: true });
      mkdirSync(join(out, "logs"));
      // The flags the batch gives each child (src/batch/attempt.ts), but `--end-with-stdin`: under
      // xargs a child's stdin is /dev/null, so it would end at once. Each child in a session of
      // its own (`setsid`), as the batch starts it (`detached`): with the kernel's autogroups on,
      // children sharing xargs's session share one slice of a loaded machine's CPU (300 to 400 ms
      // a child, against the batch's, at a load average of 7-10 here).
      const hidden = ["work", "logs", "results.jsonl"]
        .map((name) => `--sandbox-hide=${join(out, name)}`)
        .concat(`--sandbox-hide=${join(dir, "tasks")}`);
      const script = [
        'w="$0/work/$1"',
        `cp -Rp ${quote(workspace)} "$w"`,
        `exec setsid ${quote(process.execPath)} ${quote(bin)} --print=${quote(PROMPT)} --output-format stream-json --cwd="$w" ${hidden.map(quote).join(" ")} --sandbox required --model=null > "$0/logs/$1.jsonl"`,
      ].join(" && ");
      const ids = Array.from({ length: TASKS }, (_, i) => `t${i}`).join("\n");
      const ran = await timed(
        "xargs",
        ["-P", String(WORKERS), "-n", "1", "sh", "-c", script, out],
        env,
        ids,
      );
      let completed = 0;
      for (let i = 0; i < TASKS; i++) {
        const log = readFileSync(join(out, "logs", `t${i}.jsonl`), "utf8");
        if (log.includes('"type":"result","status":"completed"')) completed++;
      }
      if (ran.code !== 0 || completed !== TASKS)
        throw new Error(`xargs: exit ${ran.code}, ${completed} of ${TASKS} completed`);
      rmSync(out, { recursive: true, force: true });
      return ran.wall;
    };
    await viaBatch();
    await viaXargs();
    const walls = { batch: [], xargs: [] };
    for (let i = 0; i < count; i++) {
      walls.batch.push(await viaBatch());
      walls.xargs.push(await viaXargs());
    }
    const batchWall = median(walls.batch);
    const xargsWall = median(walls.xargs);
    row(
      `batch: ${TASKS} tasks answered at once, \`--workers ${WORKERS}\`, wall per task (median of ${count} runs; each a fresh copy of a 2-file workspace)`,
      ms(batchWall / TASKS),
      `${ms(xargsWall / TASKS)} (\`xargs -P ${WORKERS}\`: \`cp -Rp\` and the same headless command per task)`,
      `${(batchWall / xargsWall).toFixed(2)}×`,
      "≤ 1.2×",
      "none set",
    );

    // Row 2: the batch process's own peak RSS (VmHWM), the whole file read and checked and the
    // first BIG_RUN tasks run; then SIGTERM, which it answers by stopping its children.
    const mem = (file, stopAfter) =>
      watched(
        process.execPath,
        [bin, "batch", file, "--out", fresh(), "--workers", String(BIG_WORKERS)],
        env,
        stopAfter,
      );
    const whole = await mem(small, TASKS);
    const most = await mem(big, BIG_RUN);
    const mib = (kib) => `${(kib / 1024).toFixed(0)} MB`;
    row(
      `batch: peak RSS of the batch process, ${BIG.toLocaleString("en-US")} tasks in its file, \`--workers ${BIG_WORKERS}\` (the file read and checked, ${BIG_RUN} tasks run, then SIGTERM)`,
      `${mib(most.peak)} (${mib(most.started)} once the file was checked, ${mib(most.atFloor)} after ${TASKS} tasks)`,
      `${mib(whole.peak)} (a file of ${TASKS} tasks, all run)`,
      `${(most.peak / whole.peak).toFixed(2)}×`,
      "≤ 100 MB",
      "none set",
    );
  } finally {
    server.kill();
  }
}

const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;

/** Runs a command to its end in the environment given; its wall time and exit code. */
function timed(command, args, env, stdin) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, {
      env,
      stdio: [stdin === undefined ? "ignore" : "pipe", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.stdin?.end(stdin);
    child.on("error", reject);
    child.on("close", (code) => {
      const wall = performance.now() - start;
      if (code !== 0) process.stderr.write(stderr);
      resolve({ wall, code });
    });
  });
}

/** VmHWM of a running process (KiB), or undefined once it is gone. */
function hwm(pid) {
  try {
    const found = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return found ? Number(found[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs a batch and reads its own VmHWM every 50 ms until it is gone; after `stopAfter` finished
 * tasks (its `[n/total]` lines), SIGTERM. The peak is the last VmHWM read (it only grows), beside
 * the VmHWM when its start line came (the file read and checked) and at `TASKS` finished.
 */
function watched(command, args, env, stopAfter) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let peak = 0;
    let started;
    let atFloor;
    let done = 0;
    const poll = setInterval(() => {
      peak = hwm(child.pid) ?? peak;
    }, 50);
    createInterface({ input: child.stderr }).on("line", (line) => {
      peak = hwm(child.pid) ?? peak;
      if (/ attempts of \d+ tasks/.test(line)) started = peak;
      if (/\[\d+\/\d+\]$/.test(line)) {
        done++;
        if (done === TASKS) atFloor = peak;
        if (done === stopAfter) child.kill("SIGTERM");
      }
    });
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(poll);
      if (done < stopAfter) reject(new Error(`batch exited ${code} after ${done} tasks`));
      else resolve({ peak, started, atFloor, done });
    });
  });
}
