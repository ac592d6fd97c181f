// `npm run bench`: every figure side by side in one run, medians after a warm-up, as ratios to a
// floor measured in the same run. Writes the table into bench/README.md. Every measured process
// gets a clean environment (PATH and HOME, plus what its row sets). `BENCH_ONLY=bigAnswers,...`
// runs only the named sections and prints their rows without touching bench/README.md.
import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { acpBench } from "./acp.mjs";
import { batchBench } from "./batch.mjs";
import { configBench } from "./config.mjs";
import { exportBench } from "./export.mjs";
import { imagesBench } from "./images.mjs";
import { mcpBench } from "./mcp.mjs";
import { startMockServer } from "./mock-server.mjs";
import { protectedBench } from "./protected.mjs";
import { rewindBench } from "./rewind.mjs";
import { rulesBench, rulesSection } from "./rules.mjs";
import { rulesExplainBench } from "./rules-explain.mjs";
import { snapshotBench } from "./snapshot.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = join(
  root,
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")).bin["mini-agent"],
);
const probe = join(root, "bench/rss-probe.mjs");
const runs = Number(process.env.BENCH_RUNS ?? 7);
/** Paired runs of the two-turn task: its target is a ratio of medians, so many. */
const PAIRS = Math.max(runs, 31);
const scratch = mkdtempSync(join(tmpdir(), "mini-agent-bench-"));
const rows = [];
/** The rules bench's tables for the page, when its section ran. */
let rulesTables;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const ms = (value) => `${value.toFixed(value < 10 ? 2 : 0)} ms`;
const mb = (kib) => `${(kib / 1024).toFixed(0)} MB`;
const ratio = (value, floor) => `${(value / floor).toFixed(2)}×`;
/**
 * A table row. `env` is, for a row measured in child processes, the start-up variables they saw
 * (`envNote`); rows measured inside a script leave it empty.
 */
const row = (what, value, floor, r, target = "", env = "") =>
  rows.push([what, value, floor, r, target, env]);
/** What the start-up variables held in the measured processes (all the same), said plainly. */
const envNote = (...results) => {
  const seen = [...new Set(results.map((r) => JSON.stringify(r.env ?? {})))];
  return seen
    .map((json) => {
      const env = Object.entries(JSON.parse(json));
      return env.length === 0 ? "none set" : env.map(([k, v]) => `${k}=${v}`).join(" ");
    })
    .join("; ");
};

function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const rssFile = join(scratch, `rss-${Math.random().toString(36).slice(2)}`);
    const start = performance.now();
    const child = spawn(command, args, {
      cwd: options.cwd ?? root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env, RSS_OUT: rssFile },
      stdio: [options.stdin ?? "ignore", options.discardStdout ? "ignore" : "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const wall = performance.now() - start;
      if (code !== 0 && !options.allowFailure)
        reject(new Error(`${command} ${args.join(" ")} exited ${code}: ${stderr}`));
      let probed = { rss: 0, cpu: undefined, env: undefined };
      try {
        probed = JSON.parse(readFileSync(rssFile, "utf8"));
      } catch {}
      resolve({ wall, rss: probed.rss, cpu: probed.cpu, env: probed.env, stdout, stderr });
    });
  });
}

/** Runs each contender in turn, `runs` times after a warm-up, and returns median wall and RSS. */
async function sideBySide(contenders, count = runs) {
  const samples = contenders.map(() => ({ wall: [], rss: [] }));
  for (let i = -1; i < count; i++) {
    for (const [j, contender] of contenders.entries()) {
      const result = await contender();
      if (i >= 0) {
        samples[j].wall.push(result.wall);
        samples[j].rss.push(result.rss);
        samples[j].env = result.env;
      }
    }
  }
  return samples.map((s) => ({
    wall: median(s.wall),
    rss: median(s.rss),
    env: s.env,
    // Each run's wall over the first contender's run beside it, their median.
    pairedWall: median(s.wall.map((wall, i) => wall / samples[0].wall[i])),
  }));
}

async function startup() {
  const [floor, version] = await sideBySide([
    () => run(process.execPath, ["--import", probe, "-e", "0"]),
    () => run(process.execPath, ["--import", probe, bin, "--version"]),
  ]);
  row(
    "`mini-agent --version` wall",
    ms(version.wall),
    `${ms(floor.wall)} (node -e 0)`,
    ratio(version.wall, floor.wall),
    "≤ 1.3×",
    envNote(floor, version),
  );
}

async function twoTurns() {
  const server = await startMockServer();
  const work = join(scratch, "task");
  mkdirSync(work);
  writeFileSync(join(work, "notes.txt"), "hello\n");
  const env = {
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "bench-key",
    MINI_AGENT_HOME: join(scratch, "home"),
  };
  const task = "what do the notes say?";
  const [floor, agent] = await sideBySide(
    [
      () =>
        run(process.execPath, ["--import", probe, join(root, "bench/floor-agent.mjs"), task], {
          cwd: work,
          env,
        }),
      () => run(process.execPath, ["--import", probe, bin, task], { cwd: work, env }),
    ],
    PAIRS,
  );
  row(
    `two-turn task wall (real bin, local server; median of ${PAIRS} paired runs)`,
    ms(agent.wall),
    `${ms(floor.wall)} (node:http floor)`,
    `${agent.pairedWall.toFixed(2)}×`,
    "≤ 2×",
    envNote(floor, agent),
  );
  row(
    "two-turn task peak RSS",
    mb(agent.rss),
    mb(floor.rss),
    ratio(agent.rss, floor.rss),
    "≤ 1.5×",
    envNote(floor, agent),
  );

  server.requests.length = 0;
  await run(process.execPath, [bin, task], { cwd: work, env });
  const [first, second] = server.requests;
  const size = (value) => Buffer.byteLength(JSON.stringify(value ?? ""));
  const marked = (value) => JSON.stringify(value ?? "").includes('"cache_control"');
  row(
    "first request: system / tools / total",
    `${size(first.body.system)} / ${size(first.body.tools)} / ${first.bytes} B`,
    "",
    "",
    "total ≤ 6 KB",
  );
  row("second request total", `${second.bytes} B`, "", "", "");
  row(
    "cache breakpoints (tools, system, newest message)",
    [marked(first.body.tools), marked(first.body.system), marked(second.body.messages.at(-1))]
      .map((m) => (m ? "yes" : "no"))
      .join(", "),
    "",
    "",
    "all yes",
  );
  server.close();
}

async function inProcess(script, env = {}) {
  const file = join(scratch, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, script);
  const result = await run(process.execPath, ["--import", probe, file], { env });
  return { ...JSON.parse(result.stdout), rss: result.rss, env: result.env };
}

async function loopOverhead() {
  const dist = join(root, "dist/index.js");
  for (const rounds of [10, 100, 1000]) {
    const result = await inProcess(`
      import { runAgent } from ${JSON.stringify(dist)};
      const noop = { spec: { name: "noop", description: "", inputSchema: { type: "object" } }, execute: async () => ({ content: "ok" }) };
      const client = (n) => { let i = 0; return { async *stream() { i++; if (i < n) yield { type: "tool_call", call: { id: "c" + i, name: "noop", input: {} } }; else yield { type: "text", text: "done" }; yield { type: "done" }; } }; };
      const times = [];
      for (let r = 0; r < ${runs + 1}; r++) {
        const start = performance.now();
        await runAgent({ client: client(${rounds}), tools: [noop], system: "", messages: [{ role: "user", content: "go" }] });
        if (r > 0) times.push((performance.now() - start) / ${rounds});
      }
      times.sort((a, b) => a - b);
      console.log(JSON.stringify({ perRound: times[times.length >> 1] }));
    `);
    row(
      `runAgent overhead per round, ${rounds} rounds (fake client, no-op tool)`,
      `${(result.perRound * 1000).toFixed(1)} µs`,
      "",
      "",
      "< 100 µs, flat",
      envNote(result),
    );
  }
}

async function sessions() {
  const dist = join(root, "dist/session/session.js");
  for (const count of [10_000, 100_000]) {
    const result = await inProcess(`
      import { Session, readSession } from ${JSON.stringify(dist)};
      const dir = ${JSON.stringify(join(scratch, `sessions-${count}`))};
      const session = await Session.create({ dir, workspace: "/w", model: "m", env: {} });
      let start = performance.now();
      for (let i = 0; i < ${count}; i++) await session.append({ role: "user", content: "message number " + i + " with some ordinary text in it" });
      const append = performance.now() - start;
      await session.close();
      start = performance.now();
      const loaded = await readSession(session.path);
      console.log(JSON.stringify({ append, load: performance.now() - start, n: loaded.messages.length }));
    `);
    row(
      `session: append ${count / 1000}k records, then load`,
      `${ms(result.append)}, ${ms(result.load)}`,
      "",
      `${((result.append * 1000) / count).toFixed(1)} µs/append`,
      "",
      envNote(result),
    );
  }
  const big = join(scratch, "big.jsonl");
  const header = `${JSON.stringify({ type: "session", version: 1, id: "big", createdAt: "", workspace: "/w", model: "m" })}\n`;
  const line = `${JSON.stringify({ type: "message", message: { role: "user", content: "x".repeat(1000) } })}\n`;
  writeFileSync(big, header + line.repeat(Math.ceil(100_000_000 / line.length)));
  const result = await inProcess(`
    import { readSession } from ${JSON.stringify(dist)};
    const start = performance.now();
    const loaded = await readSession(${JSON.stringify(big)});
    console.log(JSON.stringify({ load: performance.now() - start, n: loaded.messages.length, heap: process.memoryUsage().heapUsed }));
  `);
  row(
    "session: load a 100 MB file",
    ms(result.load),
    "",
    `peak RSS ${mb(result.rss)}`,
    "streams; memory ~ the history kept",
    envNote(result),
  );
}

/**
 * A session of `segments` stretches of ~1 MB (a prompt, then read rounds with 20 KB results),
 * each ended by a compaction that keeps only its last round: loading keeps what the model sees.
 */
function compactedSessionFile(file, segments, compacted = true) {
  const lines = [
    JSON.stringify({
      type: "session",
      version: 1,
      id: "c",
      createdAt: "",
      workspace: "/w",
      model: "m",
    }),
  ];
  const result = "a line of a file the agent read\n".repeat(640);
  let numbered = 0;
  let call = 0;
  for (let segment = 0; segment < segments; segment++) {
    const message = (m) => lines.push(JSON.stringify({ type: "message", message: m }));
    message({ role: "user", content: `task ${segment}` });
    numbered++;
    for (let round = 0; round < 50; round++) {
      const id = `call_${call++}`;
      message({
        role: "assistant",
        content: "",
        toolCalls: [{ id, name: "read", input: { path: `f${round}` } }],
      });
      numbered++;
      message({ role: "tool", toolCallId: id, content: result, isError: false });
    }
    const facts = { filesRead: [], filesChanged: [], commands: [], refused: [], omitted: 0 };
    if (!compacted) continue;
    lines.push(
      JSON.stringify({
        type: "compaction",
        firstKept: numbered - 1,
        count: segment + 1,
        trigger: "size",
        userMessages: Array.from({ length: segment + 1 }, (_, i) => `task ${i}`),
        facts,
        summary: "## Goal\n…",
        tokensBefore: 200_000,
        tokensAfter: 20_000,
      }),
    );
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
}

async function compactedSessions() {
  const dist = join(root, "dist/session/session.js");
  const load = (file) =>
    inProcess(`
      import { readSession } from ${JSON.stringify(dist)};
      const start = performance.now();
      const loaded = await readSession(${JSON.stringify(file)});
      console.log(JSON.stringify({ wall: performance.now() - start, n: loaded.messages.length }));
    `);
  const sizes = [10, 100];
  const measured = [];
  for (const segments of sizes) {
    const file = join(scratch, `compacted-${segments}.jsonl`);
    compactedSessionFile(file, segments);
    measured.push(await heavy(() => load(file)));
  }
  const whole = join(scratch, "uncompacted-100.jsonl");
  compactedSessionFile(whole, 100, false);
  const uncompacted = await heavy(() => load(whole));
  const [ten, hundred] = measured;
  row(
    "session: load 100 MB with a compaction every ~1 MB (`readSession`)",
    `${ms(hundred.wall)}, peak RSS ${mb(hundred.rss)}${hundred.note}`,
    `${ms(ten.wall)}, peak RSS ${mb(ten.rss)} (10 MB, same shape)`,
    `${ratio(hundred.rss, ten.rss)} RSS for 10× the file`,
    "memory flat",
    envNote(ten, hundred),
  );
  row(
    "session: the same 100 MB without compaction records",
    `${ms(uncompacted.wall)}, peak RSS ${mb(uncompacted.rss)}${uncompacted.note}`,
    "",
    "",
    "the whole history is kept",
    envNote(uncompacted),
  );
}

/**
 * Median wall and peak RSS of `measure` over up to 3 runs, without a warm-up (heavy rows); a run
 * over a minute is not repeated, and `note` says so.
 */
async function heavy(measure) {
  const samples = [];
  for (let i = 0; i < Math.min(runs, 3); i++) {
    samples.push(await measure());
    if (samples.at(-1).wall > 60_000) break;
  }
  const slow = samples.length < Math.min(runs, 3);
  return {
    wall: median(samples.map((s) => s.wall)),
    rss: median(samples.map((s) => s.rss)),
    env: samples[0]?.env,
    note: slow ? ` (${samples.length} run: over a minute, not repeated)` : "",
  };
}

async function bigRecord() {
  const file = join(scratch, "one-big-record.jsonl");
  const header = `${JSON.stringify({ type: "session", version: 1, id: "big", createdAt: "", workspace: "/w", model: "m" })}\n`;
  const line = "a line of a very large tool result, as a read of a big file gives it\n";
  const content = line.repeat(Math.ceil(100_000_000 / line.length));
  writeFileSync(
    file,
    `${header}${JSON.stringify({ type: "message", message: { role: "user", content } })}\n`,
  );
  const dist = join(root, "dist/session/session.js");
  const result = await heavy(() =>
    inProcess(`
      import { readSession } from ${JSON.stringify(dist)};
      const start = performance.now();
      const loaded = await readSession(${JSON.stringify(file)});
      console.log(JSON.stringify({ wall: performance.now() - start, n: loaded.messages.length }));
    `),
  );
  row(
    "session: load a file of one 100 MB record (`readSession`)",
    `${ms(result.wall)}${result.note}`,
    "",
    `peak RSS ${mb(result.rss)}`,
    "",
    envNote(result),
  );
}

async function bigAnswers() {
  const work = join(scratch, "answers");
  mkdirSync(work, { recursive: true });
  // The default output, then the one that writes the answer once more, whole, in its result line.
  const cases = [
    [1_000, []],
    [10_000_000, []],
    [50_000_000, []],
    [50_000_000, ["--output-format", "stream-json"]],
  ];
  const measured = [];
  for (const [chars, flags] of cases) {
    const server = await startMockServer({ answerChars: chars });
    const env = {
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: "bench-key",
      MINI_AGENT_HOME: join(scratch, "answers-home"),
    };
    measured.push(
      await heavy(() =>
        run(process.execPath, ["--import", probe, bin, ...flags, "say a lot"], {
          cwd: work,
          env,
          discardStdout: true,
        }),
      ),
    );
    server.close();
  }
  const [small, ...big] = measured;
  for (const [i, result] of big.entries()) {
    const [bytes, flags] = cases[i + 1];
    const format = flags.length > 0 ? `, \`${flags.join(" ")}\`` : "";
    row(
      `CLI peak RSS streaming a ${bytes / 1_000_000} MB answer (local server${format})`,
      `${mb(result.rss)} (${ms(result.wall)})${result.note}`,
      `${mb(small.rss)} (a 1 KB answer)`,
      `${(((result.rss - small.rss) * 1024) / bytes).toFixed(1)}× the answer above the floor (${((result.rss * 1024) / bytes).toFixed(1)}× in all)`,
      "≤ ~2× above the floor",
      envNote(small, result),
    );
  }
}

async function fileTools() {
  const tree = join(scratch, "tree");
  for (let d = 0; d < 500; d++) {
    mkdirSync(join(tree, `dir${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) {
      writeFileSync(
        join(tree, `dir${d}`, `file${f}.ts`),
        `export const value${f} = ${d};\n${f === 7 && d === 250 ? "// NEEDLE here\n" : ""}`,
      );
    }
  }
  const bigFile = join(tree, "big.log");
  writeFileSync(
    bigFile,
    `${"log line with ordinary words in it\n".repeat(2_900_000)}NEEDLE at the end\n`,
  );
  const tools = join(root, "dist/tools/index.js");
  const call = (name, input, env) =>
    inProcess(
      `
      import { createWorkspaceTools } from ${JSON.stringify(tools)};
      const tool = createWorkspaceTools(${JSON.stringify(tree)}).find((t) => t.spec.name === ${JSON.stringify(name)});
      const start = performance.now();
      const result = await tool.execute(${JSON.stringify(input)});
      console.log(JSON.stringify({ wall: performance.now() - start, lines: result.content.split("\\n").length }));
    `,
      env,
    );
  const js = { MINI_AGENT_SEARCH: "js" };
  const rg = (args) => run("rg", args, { cwd: tree, allowFailure: true }).catch(() => undefined);
  const cases = [
    ["read: first window of a 100 MB file", () => call("read", { path: "big.log" }), null],
    [
      "read: last line of a 100 MB file (offset)",
      () => call("read", { path: "big.log", offset: 2_900_001 }),
      ["-n", "NEEDLE at the end", "big.log"],
    ],
    [
      "grep: a 100 MB file (asking ripgrep)",
      () => call("grep", { pattern: "NEEDLE", path: "big.log" }),
      ["-n", "NEEDLE", "big.log"],
    ],
    [
      "grep: a 100 MB file (JavaScript only)",
      () => call("grep", { pattern: "NEEDLE", path: "big.log" }, js),
      ["-n", "NEEDLE", "big.log"],
    ],
    [
      "grep: 50k-file tree (asking ripgrep)",
      () => call("grep", { pattern: "NEEDLE", glob: "*.ts" }),
      ["-n", "NEEDLE", "-g", "*.ts"],
    ],
    [
      "grep: 50k-file tree (JavaScript only)",
      () => call("grep", { pattern: "NEEDLE", glob: "*.ts" }, js),
      ["-n", "NEEDLE", "-g", "*.ts"],
    ],
    [
      "find: *.ts in a 50k-file tree",
      () => call("find", { pattern: "*.ts" }),
      ["--files", "-g", "*.ts"],
    ],
  ];
  for (const [what, ours, rgArgs] of cases) {
    const walls = [];
    const rgWalls = [];
    let result;
    for (let i = -1; i < Math.min(runs, 3); i++) {
      result = await ours();
      const theirs = rgArgs ? await rg(rgArgs) : undefined;
      if (i >= 0) {
        walls.push(result.wall);
        if (theirs) rgWalls.push(theirs.wall);
      }
    }
    const mine = median(walls);
    const floor = rgWalls.length ? median(rgWalls) : undefined;
    row(
      what,
      ms(mine),
      floor ? `${ms(floor)} (rg, incl. process start)` : "",
      floor ? ratio(mine, floor) : "",
      "",
      envNote(result),
    );
  }
}

/** The sessions folder of `workspace` under `home`, as the CLI names it. */
async function sessionsFolder(home, workspace) {
  const { sessionsDir } = await import(join(root, "dist/session/store.js"));
  return sessionsDir({ MINI_AGENT_HOME: home }, workspace);
}

/** A session file of about `bytes`: a header, a first prompt, then 20 KB tool rounds. */
function sessionOfSize(file, id, bytes, when) {
  const header = JSON.stringify({
    type: "session",
    version: 1,
    id,
    createdAt: when.toISOString(),
    workspace: "/w",
    model: "m",
  });
  const prompt = JSON.stringify({
    type: "message",
    message: { role: "user", content: `task ${id}` },
  });
  const round = [
    JSON.stringify({
      type: "message",
      message: {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c", name: "read", input: { path: "f" } }],
      },
    }),
    JSON.stringify({
      type: "message",
      message: {
        role: "tool",
        toolCallId: "c",
        content: "a line of a file the agent read\n".repeat(640),
        isError: false,
      },
    }),
  ].join("\n");
  const rounds = Math.max(0, Math.round((bytes - header.length) / (round.length + 1)));
  writeFileSync(file, `${header}\n${prompt}\n${`${round}\n`.repeat(rounds)}`);
  utimesSync(file, when, when);
}

/**
 * `--sessions` and `--continue` with 1 GB of older sessions in the folder, against the same number
 * of small ones: each reads a file's metadata and first 64 KiB, whatever its size.
 */
async function sessionLookup() {
  const server = await startMockServer();
  const runOf = async (name, older, size) => {
    const work = join(scratch, name);
    const home = join(scratch, `${name}-home`);
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, "notes.txt"), "hello\n");
    const dir = await sessionsFolder(home, realpathSync(work));
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < older; i++)
      sessionOfSize(join(dir, `old-${i}.jsonl`), `old-${i}`, size, new Date(2026, 0, 1, 0, i));
    const env = {
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: "bench-key",
      MINI_AGENT_HOME: home,
    };
    const newest = join(dir, "newest.jsonl");
    return {
      list: () => run(process.execPath, ["--import", probe, bin, "--sessions"], { cwd: work, env }),
      resume: () => {
        // Each run appends to the newest session: it is made again, small, before each.
        sessionOfSize(newest, "newest", 30_000, new Date(2026, 1, 1));
        return run(process.execPath, ["--import", probe, bin, "--continue", "go on"], {
          cwd: work,
          env,
        });
      },
    };
  };
  const big = await runOf("lookup-big", 10, 100_000_000);
  const small = await runOf("lookup-small", 10, 30_000);
  const [listSmall, listBig] = await sideBySide([small.list, big.list]);
  row(
    "`--sessions` with 1 GB of sessions (10 × 100 MB)",
    ms(listBig.wall),
    `${ms(listSmall.wall)} (10 sessions of 30 KB)`,
    ratio(listBig.wall, listSmall.wall),
    "flat",
    envNote(listSmall, listBig),
  );
  const [resumeSmall, resumeBig] = await sideBySide([small.resume, big.resume]);
  row(
    "`--continue` (a turn) with 1 GB of older sessions (10 × 100 MB) beside the newest",
    ms(resumeBig.wall),
    `${ms(resumeSmall.wall)} (10 older sessions of 30 KB)`,
    ratio(resumeBig.wall, resumeSmall.wall),
    "flat",
    envNote(resumeSmall, resumeBig),
  );
  server.close();
}

/**
 * The CLI resuming (`--continue`, one turn) a 100 MB session with a compaction every ~1 MB,
 * against the same shape at 10 MB: what the model sees is the same size, so memory should be.
 */
async function resumeCompacted() {
  const server = await startMockServer();
  const measured = [];
  for (const segments of [10, 100]) {
    const work = join(scratch, `resume-${segments}`);
    const home = join(scratch, `resume-${segments}-home`);
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, "notes.txt"), "hello\n");
    const dir = await sessionsFolder(home, realpathSync(work));
    mkdirSync(dir, { recursive: true });
    const env = {
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: "bench-key",
      MINI_AGENT_HOME: home,
    };
    measured.push(
      await heavy(() => {
        compactedSessionFile(join(dir, "c.jsonl"), segments);
        return run(process.execPath, ["--import", probe, bin, "--continue", "go on"], {
          cwd: work,
          env,
        });
      }),
    );
  }
  const [ten, hundred] = measured;
  row(
    "CLI `--continue` of a 100 MB session with a compaction every ~1 MB (one turn)",
    `${ms(hundred.wall)}, peak RSS ${mb(hundred.rss)}${hundred.note}`,
    `${ms(ten.wall)}, peak RSS ${mb(ten.rss)} (10 MB, same shape)`,
    `${ratio(hundred.rss, ten.rss)} RSS, ${ratio(hundred.wall, ten.wall)} wall`,
    "memory flat",
    envNote(ten, hundred),
  );
  server.close();
}

/**
 * What building one request costs as the history grows: the adapter's whole path (normalize the
 * history, convert it, mark the cache breakpoints, serialise the body) at 10, 100 and 1,000
 * rounds of real tool outputs (this repository's files read, listed and searched by the tools),
 * against serialising the same body alone.
 */
async function requestBuilding() {
  const dist = (path) => JSON.stringify(join(root, "dist", path));
  const result = await inProcess(`
    import { normalizeHistory } from ${dist("history/normalize.js")};
    import { toAnthropicMessages, toAnthropicTools, withCacheBreakpoints } from ${dist("providers/anthropic-protocol.js")};
    import { createWorkspaceTools } from ${dist("tools/index.js")};
    const tools = createWorkspaceTools(${JSON.stringify(root)});
    const byName = Object.fromEntries(tools.map((t) => [t.spec.name, t]));
    const files = ${JSON.stringify(readdirSync(join(root, "src")).filter((n) => n.endsWith(".ts")))};
    const calls = [
      ...files.map((f) => ["read", { path: "src/" + f }]),
      ["ls", { path: "src" }], ["grep", { pattern: "export", path: "src/tools" }], ["find", { pattern: "*.ts" }],
    ];
    const outputs = [];
    for (const [name, input] of calls) outputs.push([name, input, (await byName[name].execute(input)).content]);
    const specs = tools.map((t) => t.spec);
    const history = [{ role: "user", content: "go" }];
    const build = () => {
      const messages = normalizeHistory(history, { startWithUser: true }).messages;
      const body = withCacheBreakpoints({ system: "You are a coding agent.", tools: toAnthropicTools(specs), messages: toAnthropicMessages(messages) });
      return JSON.stringify({ model: "m", max_tokens: 8192, stream: true, ...body });
    };
    const rows = [];
    for (let round = 1; round <= 1000; round++) {
      const [name, input, content] = outputs[round % outputs.length];
      const id = "toolu_" + round;
      history.push({ role: "assistant", content: "", toolCalls: [{ id, name, input }] });
      history.push({ role: "tool", toolCallId: id, content, isError: false });
      if (round !== 10 && round !== 100 && round !== 1000) continue;
      const whole = [], alone = [];
      let bytes = 0;
      for (let i = 0; i < ${runs + 1}; i++) {
        let start = performance.now();
        const text = build();
        const took = performance.now() - start;
        bytes = text.length;
        const body = JSON.parse(text);
        start = performance.now();
        JSON.stringify(body);
        if (i > 0) { whole.push(took); alone.push(performance.now() - start); }
      }
      const med = (v) => v.sort((a, b) => a - b)[v.length >> 1];
      rows.push({ round, bytes, whole: med(whole), alone: med(alone) });
    }
    console.log(JSON.stringify({ rows }));
  `);
  for (const r of result.rows) {
    row(
      `building one request after ${r.round} rounds of real tool outputs (${(r.bytes / 1e6).toFixed(1)} MB body)`,
      ms(r.whole),
      `${ms(r.alone)} (serialising the body alone)`,
      ratio(r.whole, r.alone),
      "linear in the history",
      envNote(result),
    );
  }
}

const sections = {
  startup,
  twoTurns,
  loopOverhead,
  sessions,
  compactedSessions,
  bigRecord,
  bigAnswers,
  fileTools,
  sessionLookup,
  resumeCompacted,
  requestBuilding,
  exportSession: () => exportBench({ run, row, ms, mb, median, scratch, bin, probe, runs }),
  mcpStartup: () => mcpBench({ run, row, ms, median, scratch, bin, runs, startMockServer }),
  configStartup: () => configBench({ run, row, ms, median, scratch, bin, runs, startMockServer }),
  acpPrompt: () => acpBench({ row, ms, median, scratch, bin, runs, startMockServer }),
  rewindEdits: () => rewindBench({ row, ms, median, scratch, root, runs }),
  protectedCheck: () => protectedBench({ row, ms, median, scratch, root, runs }),
  bashSnapshot: () => snapshotBench({ row, ms, median, scratch, root, runs }),
  resumeImages: () =>
    imagesBench({ run, row, ms, mb, heavy, inProcess, envNote, scratch, root, bin }),
  rulesCorpus: async () => {
    rulesTables = await rulesBench({ row, root });
  },
  rulesExplain: () => rulesExplainBench({ run, row, envNote, scratch, bin, probe }),
  batchRun: () => batchBench({ row, ms, median, scratch, root, runs }),
};
const only = process.env.BENCH_ONLY?.split(",");
process.stderr.write(
  "bench: every measured process runs in a clean environment (PATH and HOME, plus what its row sets)\n",
);
try {
  for (const [name, section] of Object.entries(sections)) {
    if (!only || only.includes(name)) await section();
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const table = [
  "| measure | mini-agent | floor | ratio | target | start-up env of the measured processes |",
  "| --- | --- | --- | --- | --- | --- |",
  ...rows.map((r) => `| ${r.join(" | ")} |`),
].join("\n");
const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}; medians of ${runs} runs after a warm-up (file tools, the 100 MB record, the big answers and the CLI resume of a compacted session: 3, no warm-up).`;
process.stdout.write(`${table}\n\n${machine}\n`);
if (only) process.exit(0);
const readme = join(root, "bench/README.md");
const intro = `# Benchmarks

\`npm run bench\` (after \`npm ci\`) measures everything below in one run, side by side with its floor:
\`node -e 0\` for start-up, a no-dependency agent over \`node:http\` (\`floor-agent.mjs\`) for the
two-turn task against the same local Messages API stream (\`mock-server.mjs\`), and ripgrep for the
file tools when it is installed. Peak RSS comes from \`VmHWM\` (\`/proc/self/status\`) of each
measured process (\`rss-probe.mjs\`), not \`maxRSS\`: on Linux that also holds the runner's own memory,
folded in when the process is spawned. Every measured process starts with a clean environment
(\`PATH\` and \`HOME\`, plus what its row sets); the last column shows what the variables that
change how Node starts (\`NODE_*\`, \`UV_*\`, \`OPENSSL_*\`, \`SSL_CERT_*\`, e.g. \`NODE_OPTIONS\`,
\`NODE_EXTRA_CA_CERTS\`) held in those processes, as the probe read them. Machines are shared and noisy: read the ratios,
not the absolute times. \`BENCH_ONLY=bigRecord,bigAnswers node bench/run.mjs\` runs only the named
sections (see \`sections\` in \`run.mjs\`) and prints their rows without rewriting this page.
\`BENCH_CLAUDE=/path/to/claude\` (or \`claude\` on PATH) adds Claude Code beside the MCP rows.

`;
const notes = `
## Where the time goes

- \`--version\`: \`dist/bundle/main.js\` is a stub of a few lines that answers \`--version\` (the
  version written in by the build) and otherwise loads the entry, \`cli-<hash>.cjs\`, with its
  code cache (through \`load.cjs\`, the loader the turn's file uses too); the folder's
  \`package.json\` says CommonJS, so plain \`node\` starts without its ES module loader. The bench
  starts every process with \`--import rss-probe.mjs\`, and with \`--import\` (or a preload, or
  \`NODE_OPTIONS\`) Node runs even a CommonJS main file through the ES module loader, which first
  scans its whole source for exports with its JavaScript lexer; a file it requires is not
  scanned. With the 22 KB entry as the bin that scan was most of what \`--version\` cost above
  \`node -e 0\` (callgrind, clean environment, both with the probe: 110.1 M instructions for
  \`node -e 0\`, 191.9 M before, 116.8 M now, 1.74× to 1.06×); a turn saves it too.
- A turn loads one more file, \`turn-<hash>.cjs\` (the agent, its tools, the CLI and both SDKs),
  with the V8 code cache the build made for it: the build runs one real two-turn task against
  \`mock-server.mjs\` and keeps what V8 compiled (\`scripts/train-code-cache.cjs\`). Node 20 has no
  compile cache for modules (it came in Node 22); a cache made by another V8 or under other V8
  flags is rejected by V8 and the file is compiled as usual. V8 does not check the code in a
  cache, so the cache file starts with the CRC-32 the build recorded, and the CLI hands it to V8
  only when it is a regular file of at most 32 MiB whose CRC matches (\`zlib.crc32\`; a Node
  without it compiles as usual): a damaged cache costs time, never the run. Reading and
  deserialising that cache takes about 5-10 ms on a quiet machine (20-25 ms in a CPU profile of
  the task under load). The check costs loading \`node:zlib\` (about 1 ms) and the CRC of the
  0.85 MB cache (0.2 ms once its pages are touched): the two-turn task's CPU time went from 198.0
  to 199.5 ms (medians of 21 alternated runs, within the noise), its instructions counted by
  callgrind from 386 M to 396 M (medians of 5; the CRC itself 3 M).
- Requests go over \`node:http\` (\`src/providers/http-transport.ts\`): the SDKs get a small
  \`fetch\` and, in the bundle, a small \`Headers\`, so a run never loads Node's own fetch stack
  (undici with its web streams, TLS, HTTP/2, zlib and worker modules), which cost about 90 ms of
  CPU in this task. HTTPS loads \`node:https\` only for an https base URL.
- The bash tool's sweep for commands left by a killed mini-agent reads the environment of every
  process in \`/proc\` (5-25 ms before, growing with the machine's process count). It is no longer
  on the start-up path: it runs once per process, before bash's first command, or, in a run that
  never ran bash, once the run's work is done (a session of many turns: while its first prompt is
  awaited). It now finds the marker in each environment's bytes without decoding them and no
  longer reads \`/proc/<pid>/stat\` for it: about 2.4 ms at the end of the task in a CPU profile,
  with about 90 processes on the machine.
- The bwrap probe: whether bwrap works here is known only by running it (about 20 ms of wall
  and 26 ms of CPU, loading \`child_process\` and forking). The CLI keeps the answer "it works" in
  the state folder (\`src/sandbox/probe-cache.ts\`, [docs/sandbox.md](../docs/sandbox.md)), keyed
  on what could change it: bwrap's file, the kernel, the uid and gid, the namespace sysctls, the
  namespaces and seccomp status of the process. Checking the key is a few \`stat\`s and reads of
  \`/proc\`: 1.2-1.4 ms at its first call in a process (its code compiled then), 0.3-0.4 ms
  after, under a load average of 14. A kept answer is tested by the first command that ends; a failure then
  probes again and drops it. Before, the probe was meant to run while the turn loaded, but its
  \`await import("node:child_process")\` resumed only after the turn's file had loaded (strace:
  bwrap was started 30 ms after the entry asked for it); it now takes the module synchronously
  (\`process.getBuiltinModule\`) and bwrap starts before the turn loads, on a first run.
- The two-turn task. Measured first (strace timestamps, CPU profiles, callgrind instruction
  counts of the main process, which repeat where the machine's load does not; clean environment,
  the bench's \`--import\` probe): 393.5 M instructions against the floor's 159.2 M (2.47×). Now
  330.3 M (2.07×); 323 M against 149 M (2.18×, 2.58× before) without \`detail::sprp\`, a
  primality test inside Node whose count changes from run to run by up to 10 M. Paired
  whole-process runs (31 pairs each, clean environment, a machine under a load average of 13 to
  15, so walls 3-4 times a quiet machine's): against before, CPU 0.86×, wall 0.81×; against the
  floor, CPU 2.11× (2.56× before), wall 1.78× (2.63× before). \`--version\` against \`node -e 0\`, both
  with the probe: CPU 1.05×, wall 0.99× (1.47× and 1.45× before). Peak RSS 53.7 MiB against
  42.2 MiB (1.27×; 58.3 MiB before). On a quiet machine (load average about 1) the table's
  row and two more runs of it gave 2.03×, 2.21× and 2.14× of the floor: the 2× target is still
  missed by a few milliseconds of the turn's loading, below.
  This round removed from a turn: the bwrap run (kept answer), the lexer's scan of the entry,
  the patterns with Unicode classes for printable ASCII text (\`visible\`, column widths), and
  \`child_process\` (now loaded where a process starts: bash, ripgrep, git, an MCP server),
  \`perf_hooks\` (durations use \`process.hrtime\`: the global \`performance\` loads it with a
  dozen modules) and \`timers/promises\` (about 10 M, 4 M and 4 M instructions on top of the floor).
  Where the rest goes, above the floor (callgrind, inclusive): V8 compiling functions at their
  first call, 82.6 M against 48.1 M (Node's own modules are cached without their inner functions,
  and a turn uses many more of them: \`crypto\` with its dozen modules for ids and hashes,
  \`fs/promises\`, \`os\`, \`vm\`, \`zlib\`); deserialising the turn's 1.1 MB code cache, 38 M against
  the floor's 7.5 M for Node's own; running the turn's top level (the modules its commands import
  are initialised as it loads, e.g. the TypeBox schemas of records and tools), 17-30 ms of a run
  under load, about as long as the deserialising (timed around \`vm.Script\` and its run); the CRC-32 of the cache, 4.2 M; regular
  expressions compiled at first use, 5.8 M against 1.7 M (the Unicode classes of \`visible.ts\`
  are still compiled: the tool lines' \`✓\` is not ASCII); garbage collection 5-13 M. A cache
  trained a second time, from a run that used the first, changes nothing (82.8 M compiled
  lazily), nor does a cache of the top level only (625 KB, but 160 M compiled lazily, 418 M in
  all). A user-land start-up snapshot (\`node --build-snapshot\`) cannot replace the code cache:
  Node 20 takes a snapshot only from its own command line (\`--snapshot-blob\`), which the bin
  run as \`node main.js\` (or \`npx mini-agent\`) cannot set, and starting a second Node costs a
  whole \`node -e 0\` (a trivial user snapshot alone starts 1.08× the CPU of \`node -e 0\`: its
  4 MB blob is read from disk; and Node 20's snapshot builder refuses the turn as it is, e.g.
  \`Array.prototype.toSorted\` is missing there).
  The next round measured the turn's top level module by module (a mark before and after each
  module's code in an instrumented build) and what V8 compiled for the cache (\`--log-function-events\`,
  mapped back through the bundle's source map). In the turn's file every module is initialised
  only when something imports it, so it now exports the other commands as functions that load
  their module when called (the export page's two SHA-256 hashes, 0.7 ms, were the largest of
  theirs); the PNG CRC table, needed only on a Node without \`zlib.crc32\`, is built at its first
  use (1.2 ms in the interpreter); \`re2js\` is loaded by the first search (\`find\`, \`grep\`,
  a \`.gitignore\`), not by every run (0.9 ms of top level, and the code cache 1.18 to 1.08 MB);
  the turn, ASCII as esbuild writes it, is read as Latin-1 (0.7 ms less than UTF-8 decoding);
  and the entry is loaded with a code cache of its own (about 1% of the task's CPU and 4 M
  instructions less; \`--help\`, which compiles little of it, 4 M more, 121 M to 125 M). Paired runs
  (60 pairs, clean environment, load average 6.5): CPU 0.95× of before; against the floor CPU
  1.99× (2.09× before), wall 1.95× (2.04×). Instructions (callgrind, the whole process, medians of 5):
  316.0 M before, 300.9 M now, the floor 157.5 M (2.01× to 1.91×); of the 143 M above the floor,
  Node's own modules loaded and compiled 26 M (43.7 M against 18.1 M), the two code caches
  deserialised 30 M (37.1 M against Node's own 7.6 M), functions compiled at their first call 23 M
  (76.6 M against 53.3 M), garbage collection about 8 M; the rest is the turn's own work. A cache made without the training run (646 KB)
  costs 18% more CPU: what it leaves out is compiled at first call. A turn built without the
  OpenAI SDK (the Anthropic provider never initialises it, but its 171 KB sit in the file and
  add 42 KB to the cache) was 2-4% faster: moving it to its own file needs that file's own
  trained cache, or OpenAI runs start slower. Where a run goes now, in ms after Node's own
  start (marks in the code, medians of 25 runs, load average 2, so about 1.5× a quiet machine,
  before the entry had its cache): the entry about 4 (parsing the flags 0.9), \`sandbox.cjs\` and the kept bwrap answer 2.8 (a dozen
  reads of \`/proc\`), reading the turn and its cache with the CRC 2.7, deserialising the cache
  7-14, the turn's top level 12 (of it Node's modules: \`http\` 1.8, \`crypto\` 2, \`fs/promises\`
  0.7; garbage collection about 1.2; the TypeBox schemas of records, messages, configuration and
  stream-json about 1), the configuration and workspace 3.5, the client, rules, tools, skills and
  MCP 3.5, the session and system prompt 0.9, to the first request 5.5, the first answer, the
  \`read\` call and the second request 14, the rest of the turn 4.3, the orphan sweep 1.75.
  The table's row is the median of per-pair ratios over 31 paired runs (a median of 7 runs a
  side had swung from 1.93× to 2.27× between runs on the same quiet machine): 2.06×, 2.09× and
  2.07× in three runs, so the 2× target is missed by about 3 ms. The next lever measured is the
  OpenAI SDK in a file of its own (2-4%, above).
  The round after measured each piece a short run pays and the floor does not (CPU profiles,
  \`--trace-gc\`, \`strace\`, the modules loaded), and removed six, each a paired comparison of 100
  runs against the build before it (clean environment, medians of per-pair ratios): \`node:crypto\`,
  loaded for the SHA-256 of a few paths, a session id's random digits and the digest of what
  \`read\` shows, now loads at its first real use (SHA-256 of up to 256 bytes is computed in
  JavaScript, the same digest; \`src/crypto.ts\`): 2.5%; the wrapper the turn's text was joined to
  at load is written into the file by the build, so V8 compiles the megabyte as read instead of a
  heap copy of it (that copy filled the young generation: a collection less, the three
  scavenges' pauses 3.4 to 2.3 ms): 1.5%; the sweep for a killed agent's leftovers, which opened
  the environment of every process on the machine (about 70 here, 9 µs an \`open\`; a desktop has
  hundreds), runs only when a recorded agent is gone (docs/sandbox.md): 1.3%; the command line is
  parsed by a parser of its own, not \`util.parseArgs\` (its module and the checking of 45 option
  definitions): 1.3%; whether stdin is a terminal is asked of the descriptor (\`process.stdin\`,
  a stream, was made for it): 0.7%; and the search of \`PATH\` for bwrap no longer throws an error
  per folder. Measured and not taken: \`projectRoot\` with synchronous calls (it runs four times per
  start, each a few thread-pool round trips; 0.75%, but a hung mount would then hold off Ctrl-C)
  and \`sandbox.cjs\` inside the cached files (within noise). What a run still pays above the floor:
  deserialising the code caches (about 12% of a profiled run), the turn's top level (\`http\` and
  its streams, which the floor loads too, the TypeBox schemas, the esbuild module wrappers: about
  12%), three scavenges of the objects the top level makes (about 3%: they live for the whole
  run), and the thread-pool round trips of the start-up's file checks (about 3 ms idle before the
  first request). The row, from a quiet machine: 1.95×; four more runs of the section gave 1.92×,
  1.91×, 2.01× and 2.00× (the last two while another process used the second core). The
  configuration row read 1.05-1.12× in five runs (1.01-1.05× before): the run with nothing
  configured lost the 2.5 ms of \`node:crypto\`, the configured one 1.5 ms, as it hashes its file
  and the project root in JavaScript (trust by hash), cold in V8's interpreter.
- \`rules explain --stdin\` decides each line with the run's own policy; the rows time the whole
  process over 5,000 distinct commands of 28 shapes (\`bench/rules-explain.mjs\`), and over 50,000.
  Measured on a machine shared with other work (load average about 12 on its 2 cores), where wall
  time was 2-4 times the CPU time: the CPU columns are the steadier figures, though not steady (a
  second run of the section, load average 12-14, gave 2,260, 2,151, 1,659 and 5,640 commands a
  second of CPU for the four rows). The 5,000-command rows
  miss the 5,000 a second target here; 50,000 commands reach about 7,000 a second of CPU: past the
  start-up, most of a short input's time is the code warming up (about 98 µs a command once warm,
  about 300 µs over the first 5,000). Where a warm decision goes (CPU profiles, the decision alone
  in a loop): the parse about 40-55 µs (tree-sitter in WebAssembly and its node objects), reading
  the tree and the rules 40-60 µs, the policy and the answer about 20 µs; a redirect's real path
  costs a few file-system calls in the thread pool (about 25 µs each). \`--sandbox off\` asks more,
  and each command no rule allows is asked again of the run with the sandbox, to say whether the
  sandbox decided (\`sandbox:off\`). Made cheaper this round: the rules' module is imported once
  per process, not per decision (\`shellRules\`), and the answers ready together go out in one
  write.
- WebAssembly stays on V8's baseline compiler (\`--liftoff-only\`): the shell parser's first
  decision then takes about 0.1 s instead of 0.6 s (\`mini-agent rules explain\`). The flag is set
  just before the parser loads (\`shellRules\` in \`src/cli/policy.ts\`), after the turn was compiled
  with the code cache made without it: V8 accepts a cache only under the flags it was made with.
- Session appends are one synchronous \`write\` each: no thread-pool round trip per record.
- \`--sessions\` and \`--continue\` read each session file's metadata and first 64 KiB only: the
  1 GB rows cost what the same number of small sessions cost.
- Building a request converts and serialises the whole history each round: linear in its size;
  the floor column is \`JSON.stringify\` of the same body alone. The tool outputs are real: this
  repository's files read, listed and searched by the tools.
- \`grep\` asks ripgrep (when installed) which files of a tree and which lines of a file of 8 MiB
  or more hold a fixed string every match must contain, and tests only those (see the README):
  the 100 MB file 38 ms against 182 ms with JavaScript alone (rg itself 23 ms), the 50k-file tree
  867 ms against 1,566 ms (rg 366 ms). What is left in the tree is our own walk (the find row:
  369 ms), which ripgrep runs beside, and opening the files it has not yet cleared; each opened
  file is also checked through \`/proc/self/fd\` (a folder swapped for a link outside must not
  lead a search out of the workspace). With JavaScript alone, a small file is read in one call
  and each 64 KiB chunk of a large one is tried whole before it is split into lines.
- \`find\` does not use ripgrep: its whole cost is the walk, and the walk's rules (skipped entries
  counted by kind, links never followed but reported, a \`.gitignore\` over 256 KiB ignored and
  counted) are not ripgrep's; \`rg --files\` could replace the walk only by changing what \`find\`
  answers.
- Loading a session keeps in memory only the history since its last compaction (what the model
  sees): at each compaction record the messages it covers are dropped as the file streams by, so
  a 100 MB session with compactions loads in about the memory of a 10 MB one. The file is read in
  chunks, so the overhead beyond the history itself stays bounded.
- The big-answer rows run the real CLI against \`mock-server.mjs\` streaming one text block in
  16 KiB deltas, stdout to \`/dev/null\`; the ratio is peak RSS over the answer's size. The answer
  is held whole (it is the round's text, committed to the history and the session file), so memory
  grows with it; the floor column is the same run with a 1 KB answer. Measured with heap, smaps
  and peak-resident marks at each step of a 50 MB answer (48 MiB): the answer held once while it
  streams (48), as bytes in memory that grows in place (\`src/streamed-text.ts\`: past 1 Mi units,
  one byte a unit for Latin-1 text, so each 16 KiB piece dies young and no old buffer is left
  behind); then, for a moment, those bytes and the one string made from them (+48), the bytes
  given back at once; then, for the write, the string and the line's bytes (+48: one \`write\` per
  record needs them whole), escaped in one pass into the same kind of memory and given back right
  after the write. Both moments are twice the answer, and they now reach the same peak. Beyond
  them: V8's young generation, which the streaming grew from 1-2 to 16 MB a semi-space (32 MB in
  all, 4-22 MB more of the stream's dead network buffers waiting for it). Past 64 Ki units of
  streamed text the CLI now tells V8 to grow it no more (\`--semi-space-growth-factor=1\`,
  \`src/cli/young-generation.ts\`): set when a turn starts instead, any flag (even \`--liftoff-only\`)
  cost the 1 KB run 7 MB (57 → 64) and tens of ms, loading \`node:v8\` alone nothing: V8 checks a
  code cache against its flags, so Node's built-in modules loaded after are most likely compiled
  anew. \`--max-semi-space-size\` set at run time is not taken up. What is left above the two copies,
  at the 50 MB peak (smaps): about 3 MB of V8 heap; 8 MB more of the C allocator's main heap,
  which a full collection does not give back: Node's HTTP client copies each body chunk into a
  buffer of its own there, freed only when a collection finds it dead (3-4 MB of them still alive
  before the answer's string is made; a bare \`node:http\` read of the same stream that drops each
  chunk leaves that heap at 31 MB); and about 5-7 MB in three or four arenas of that allocator made during
  the stream by background threads (V8's collector's helpers, most likely: turning parallel
  scavenges off at run time left them, and turning concurrent marking off at run time crashed V8). In medians of five alternated runs on a loaded machine: 50 MB,
  199 MB (199-222) → 170 MB (169-170), 3.0× → 2.4× above the floor; 10 MB, 95 MB (94-96) →
  88 MB (84-89), 4.0× → 3.0× (the part that does not grow with the answer weighs more there);
  the 1 KB run stays at 57 MB. \`--output-format json\` and \`stream-json\` wrote the answer once more
  as a JSON string of the whole result line, then its bytes (263 and 309 MB for 50 MB); they now
  write the line's bytes made by \`encodeLine\` (169 and 166 MB). Below 2× itself there is no way
  here: Node makes a string from bytes only by copying them, and one \`write\` per record needs the
  line's bytes whole while the history holds the string.
  Measured again for what lies above the two copies (resident memory at the stream's end, by
  mapping, 50 MB answer against the 1 KB run; 17-21 MB in all): Node's own code pages, +4 MB; V8's
  heap pages, +4; the C allocator's arenas of background threads, +5; its main heap, +8-10 (the
  per-read buffers of Node's HTTP client and of the SDK's event parsing: few of them alive at
  once, 1-7 MB, but the heap they leave is fragmented). None of it comes back: a full collection
  forced at the stream's end (\`--expose-gc\`, tried outside the product) gave back 0 MB. A bare
  \`node:http\` client that reads the same stream from another process and drops every chunk peaks
  43 MB above its start. A smaller young generation from the start (\`--max-semi-space-size=1\`)
  saved 3 MB at the peak, against the 7 MB any start-up flag costs every short run. So the target
  of about 2× above the floor (the answer held once) would need a string made without a copy
  (Node has none) and a record written in more than one \`write\` with the answer kept in pieces
  wherever it goes: not this design under the contract's one \`write\` per record.
- Images (\`bench/images.mjs\`): a session keeps each image's bytes in its blob store, and loading
  reads none of them: each image still in view is checked by its blob's size and read (its hash
  checked) when a request first sends it. So 100 screenshots in view load in about the time and
  memory of the same session without them, and with a compaction covering them the session
  also resumes so. \`--continue\` with all 100 in view sends them with each request: their base64
  (26 MB, kept once read), and per request the body as JSON text and then as bytes (26 MB each;
  two requests in this turn), which is where its time and memory go.
- The MCP rows beside Claude Code run \`claude -p "task" --strict-mcp-config --mcp-config FILE\`
  with the same server files, found through \`BENCH_CLAUDE\` (the path of its \`claude\`) or on
  PATH and never installed by the bench; without it the row says so. It gets a home of its own in
  the scratch folder, \`CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1\` and the mock server as its API;
  its first model request is the first that carries the prompt (it sends a \`HEAD /\` before).
  By default it does not wait for its MCP servers before that request (a \`WaitForMcpServers\` tool
  waits later), so the row's main figure sets \`MCP_CONNECTION_NONBLOCKING=false\`, which waits for
  them as mini-agent does, and says how many servers' tools the request carried; its default start
  follows.
- Export (\`bench/export.mjs\`) reads the session line by line and writes the page in 64 KiB
  pieces, waiting for each write: it holds one round and one piece, whatever the file's size.
- Batch (\`bench/batch.mjs\`, section \`batchRun\`): every task is answered at once with one text
  reply by \`mini-agent-testing serve --models\` (the model \`null\`), so the rows measure the process
  per task and what the batch does around it. The floor is \`xargs -P 4\` running, per task, \`cp -Rp\`
  of the workspace and then the headless command the batch gives its children (\`--print\`,
  \`--output-format stream-json\` to a file, \`--cwd\`, the \`--sandbox-hide\` folders, \`--sandbox
  required\`, \`--model\`), each child under \`setsid\`, as the batch starts it (\`detached\`); only
  \`--end-with-stdin\` is left out (under xargs stdin is \`/dev/null\`). The batch also takes a
  \`git diff --no-index\` of each workspace and appends its results. Without \`setsid\` the row read
  0.84×: with the kernel's autogroups on, xargs's children shared one slice of a loaded machine's
  CPU (child median 397 ms against the batch's 306 ms, load average 7-10), the batch's children a
  slice each. Runs: 5 a side, alternated, after a warm-up (about 3 minutes with the memory row);
  the environment holds only \`PATH\`, \`HOME\`, \`ANTHROPIC_BASE_URL\`, \`ANTHROPIC_API_KEY\` and
  \`MINI_AGENT_HOME\`, so its column says none set without a probe. The memory row reads the batch
  process's own \`VmHWM\` (\`/proc/PID/status\`, every 50 ms and at each line it writes) while it
  runs the first 1,000 of 10,000 tasks, then sends SIGTERM (all 10,000 would take about 12
  minutes here). It was 117 MB before the batch streamed its files and held its young
  generation; it is 69 MB now. Where it went: the batch read the whole task file and
  \`results.jsonl\` into memory and kept every parsed line, and every appended results and starts
  line after it; V8's young generation, which grows each time enough of it survives its
  collections, reached its largest (16 MB a semi-space, 32 MB committed) while the 10,000 lines
  were read and checked, and old space grew to about 16 MB between full collections. Now the
  task file and the results are read a line at a time (\`fileLines\`, as sessions are read); each
  task is kept as its line's text, its hash and a few counts, and a line is parsed again when an
  attempt of it starts; and the batch tells V8, once its modules are loaded, to grow the young
  generation no more (\`--semi-space-growth-factor=1\`, as a long streamed answer does), which
  costs about 300 scavenges of a millisecond each over 1,000 tasks. Measured on the same machine
  with the row's run stopped after 300 tasks: 98 MB before, 83 MB with the files streamed, 71 MB
  with the young generation held too. With \`--trace-gc\` over 1,000 tasks the live heap after a
  full collection stays at 9.5 to 10 MB, and the whole heap committed at 21 to 25 MB.
`;
// The rules bench's part of the page (its classes, sources and notes) is written by hand and kept.
const rulesPart = rulesSection(readFileSync(readme, "utf8"), rulesTables);
writeFileSync(readme, `${intro}${table}\n\n${machine}\n${notes}${rulesPart}`);
