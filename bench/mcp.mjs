// MCP start-up: the time from spawning `mini-agent "task"` to its first model request, with no MCP
// configuration (beside `--no-mcp`, which looks for none) and with 1 and 5 stdio servers (each the reference server,
// `@modelcontextprotocol/server-everything`), beside the servers' own start: spawn to the answer
// of `tools/list` after the handshake, for 1 and for 5 started at once (the slowest of the 5).
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
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
  const firstRequest = async (flags) => {
    server.requests.length = 0;
    const start = performance.now();
    await run(process.execPath, [bin, ...flags, "what do the notes say?"], { cwd: work, env });
    return server.requests[0].at - start;
  };
  const contenders = [
    () => firstRequest(["--no-mcp"]),
    () => firstRequest([]),
    () => firstRequest(["--mcp-config", configs[1]]),
    () => firstRequest(["--mcp-config", configs[5]]),
    () => serverStart(everything),
    async () =>
      Math.max(...(await Promise.all([1, 2, 3, 4, 5].map(() => serverStart(everything))))),
  ];
  const samples = contenders.map(() => []);
  for (let i = -1; i < runs; i++) {
    for (const [j, contender] of contenders.entries()) {
      const value = await contender();
      if (i >= 0) samples[j].push(value);
    }
  }
  const [skipped, none, one, five, alone, slowest] = samples.map(median);
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
  server.close();
}
