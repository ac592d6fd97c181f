// MCP start-up: the time from spawning `mini-agent "task"` to its first model request, with no MCP
// configuration (beside `--no-mcp`, which looks for none) and with 1 and 5 stdio servers (each the reference server,
// `@modelcontextprotocol/server-everything`), beside the servers' own start: spawn to the answer
// of `tools/list` after the handshake, for 1 and for 5 started at once (the slowest of the 5).
// Side by side, in the same run, Claude Code (`claude -p`) with the same servers given by
// `--mcp-config`: found through `BENCH_CLAUDE` (the path of its `claude`) or on PATH, never
// installed by the bench; without it, its rows say so. It gets a home of its own in the scratch
// folder (none of the user's settings or servers), the mock server as its API and no other traffic.
import { execFileSync, spawn } from "node:child_process";
import { accessSync, constants, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { createInterface } from "node:readline";

function everythingServer() {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@modelcontextprotocol/server-everything/package.json");
  return join(dirname(pkg), require(pkg).bin["mcp-server-everything"]);
}

/** One server from spawn to its `tools/list` answer, in ms; the process is ended after. */
function serverStart(args) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      stdio: ["pipe", "pipe", "ignore"],
    });
    const send = (message) =>
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    createInterface({ input: child.stdout }).on("line", (line) => {
      const message = JSON.parse(line);
      if (message.id === 1) {
        send({ method: "notifications/initialized" });
        send({ id: 2, method: "tools/list", params: {} });
      } else if (message.id === 2) {
        resolve(performance.now() - start);
        child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    send({
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bench", version: "0" },
      },
    });
  });
}

/** Claude Code's `claude`: `BENCH_CLAUDE`, else the first on PATH; undefined when there is none. */
function findClaude() {
  const candidates = process.env.BENCH_CLAUDE
    ? [process.env.BENCH_CLAUDE]
    : (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, "claude"));
  return candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const PROMPT = "what do the notes say?";

/**
 * The first request of a run that carries the user's prompt, as a message's content or one of its
 * text blocks: Claude Code sends others before it (a title for the session, with the prompt
 * quoted inside a longer text).
 */
function promptRequest(requests) {
  const carries = (message) =>
    message.content === PROMPT ||
    (Array.isArray(message.content) &&
      message.content.some((block) => block.type === "text" && block.text === PROMPT));
  const found = requests.find((request) => request.body.messages?.some(carries));
  if (!found) throw new Error("no model request carried the prompt");
  return found;
}

/** How many of the servers `s1`…`sN` have tools in a request (Claude Code's `mcp__s1__echo`). */
function serversIn(request) {
  const names = (request.body.tools ?? []).map((tool) => /^mcp__(s\d+)__/.exec(tool.name)?.[1]);
  return new Set(names.filter(Boolean)).size;
}

export async function mcpBench({ run, row, ms, median, scratch, bin, runs, startMockServer }) {
  const server = await startMockServer();
  const work = join(scratch, "mcp-task");
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, "notes.txt"), "hello\n");
  const everything = [everythingServer(), "stdio"];
  const configs = {};
  for (const n of [1, 5]) {
    const servers = {};
    for (let i = 1; i <= n; i++) servers[`s${i}`] = { command: process.execPath, args: everything };
    configs[n] = join(scratch, `mcp-${n}.json`);
    writeFileSync(configs[n], JSON.stringify({ mcpServers: servers }));
  }
  const env = {
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "bench-key",
    MINI_AGENT_HOME: join(scratch, "mcp-home"),
  };
  // Each run's time to its first request, and the servers whose tools that request carried.
  const seen = new Map();
  const firstRequest = async (command, args, runEnv, key) => {
    server.requests.length = 0;
    const start = performance.now();
    await run(command, args, { cwd: work, env: runEnv });
    const request = promptRequest(server.requests);
    if (key) seen.set(key, [...(seen.get(key) ?? []), serversIn(request)]);
    return request.at - start;
  };
  const mini = (flags) => () => firstRequest(process.execPath, [bin, ...flags, PROMPT], env);
  const contenders = [
    mini(["--no-mcp"]),
    mini([]),
    mini(["--mcp-config", configs[1]]),
    mini(["--mcp-config", configs[5]]),
    () => serverStart(everything),
    async () =>
      Math.max(...(await Promise.all([1, 2, 3, 4, 5].map(() => serverStart(everything))))),
  ];
  const claude = findClaude();
  const peer = claude && claudeContenders(claude, { scratch, server, configs, firstRequest });
  if (peer) contenders.push(...peer.contenders);
  const samples = contenders.map(() => []);
  for (let i = -1; i < runs; i++) {
    for (const [j, contender] of contenders.entries()) {
      const value = await contender();
      if (i >= 0) samples[j].push(value);
    }
  }
  const [skipped, none, one, five, alone, slowest, ...theirs] = samples.map(median);
  const over = (value, floor) => `${(value / floor).toFixed(2)}×`;
  row(
    "time to first model request, no MCP config",
    ms(none),
    `${ms(skipped)} (--no-mcp: no file looked for)`,
    over(none, skipped),
    "within noise",
  );
  row(
    "time to first model request, 1 stdio MCP server",
    ms(one),
    `${ms(alone)} (the server's own start)`,
    over(one, alone),
    "",
  );
  row(
    "time to first model request, 5 stdio MCP servers",
    ms(five),
    `${ms(slowest)} (slowest of 5 started at once)`,
    over(five, slowest),
    "",
  );
  peerRows({ row, ms, over, peer, theirs, seen, mine: { 0: skipped, 1: one, 5: five } });
  server.close();
}

/**
 * Claude Code's runs: with no server, and with 1 and 5, first awaiting its servers as mini-agent
 * does (`MCP_CONNECTION_NONBLOCKING=false`), then as it starts by default, which may send the
 * first request before every server has answered (its tool `WaitForMcpServers` waits later).
 */
function claudeContenders(claude, { scratch, server, configs, firstRequest }) {
  const home = join(scratch, "claude-home");
  mkdirSync(home, { recursive: true });
  const env = {
    HOME: home,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "bench-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
  const awaiting = { ...env, MCP_CONNECTION_NONBLOCKING: "false" };
  const version = execFileSync(claude, ["--version"], { env: { PATH: process.env.PATH, ...env } })
    .toString()
    .trim();
  // The prompt first: `--mcp-config` takes every argument after it.
  const flags = (n) => [
    "-p",
    PROMPT,
    "--strict-mcp-config",
    ...(n ? ["--mcp-config", configs[n]] : []),
  ];
  const contender = (n, runEnv, key) => () => firstRequest(claude, flags(n), runEnv, key);
  return {
    version,
    contenders: [
      contender(0, awaiting),
      contender(1, awaiting, "awaited 1"),
      contender(5, awaiting, "awaited 5"),
      contender(1, env, "default 1"),
      contender(5, env, "default 5"),
    ],
  };
}

/** The rows beside Claude Code, or one row saying it was not found. */
function peerRows({ row, ms, over, peer, theirs, seen, mine }) {
  if (!peer) {
    row(
      "time to first model request beside Claude Code",
      "not measured",
      "Claude Code not found: set BENCH_CLAUDE to its `claude`, or put it on PATH",
      "",
      "",
    );
    return;
  }
  const [none, one, five, defaultOne, defaultFive] = theirs;
  const servers = (key) => {
    const counts = seen.get(key) ?? [];
    const [low, high] = [Math.min(...counts), Math.max(...counts)];
    return low === high ? `${low}` : `${low}–${high}`;
  };
  const who = `Claude Code ${peer.version.split(" ")[0]}`;
  row(
    "time to first model request, no MCP server, beside Claude Code",
    `${ms(mine[0])} (--no-mcp)`,
    `${ms(none)} (${who}, \`-p --strict-mcp-config\`)`,
    over(mine[0], none),
    "",
  );
  for (const [n, awaited, started] of [
    [1, one, defaultOne],
    [5, five, defaultFive],
  ]) {
    const s = n === 1 ? "" : "s";
    row(
      `time to first model request, ${n} stdio MCP server${s}, beside Claude Code`,
      ms(mine[n]),
      `${ms(awaited)} (${who}, \`--mcp-config\`, servers awaited: ${servers(`awaited ${n}`)} of ${n} in the request); ${ms(started)} as it starts by default (${servers(`default ${n}`)} of ${n})`,
      over(mine[n], awaited),
      "",
    );
  }
}
