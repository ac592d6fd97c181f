// The editor front end: the time from sending `session/prompt` to the first `session/update` of
// `mini-agent acp` (one agent, one session, a prompt per sample after a warm-up one), beside the
// CLI's time from spawning `mini-agent "task"` to the first byte of its answer, on the same
// scripted turn of the local Messages API stream.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

/** Spawn to the first byte on stdout, in ms; resolves once the process ended. */
function firstByte(bin, args, { cwd, env }) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let first;
    const child = spawn(process.execPath, [bin, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ["ignore", "pipe", "ignore"],
    });
    child.stdout.once("data", () => {
      first = performance.now() - start;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 && first !== undefined ? resolve(first) : reject(new Error(`exited ${code}`)),
    );
  });
}

/** `mini-agent acp` with a session open: `prompt()` times one prompt to its first update. */
async function acpAgent(bin, { cwd, env }) {
  const child = spawn(process.execPath, [bin, "acp"], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["pipe", "pipe", "ignore"],
  });
  const waiting = new Map();
  let onUpdate;
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line);
    if (message.method === "session/update") onUpdate?.();
    else if (message.id !== undefined && waiting.has(message.id)) {
      const { resolve, reject } = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result);
    }
  });
  let next = 0;
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  await request("initialize", { protocolVersion: 1 });
  const { sessionId } = await request("session/new", { cwd, mcpServers: [] });
  return {
    prompt: async () => {
      const start = performance.now();
      let first;
      onUpdate = () => {
        first ??= performance.now() - start;
      };
      await request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
      return first;
    },
    close: () => {
      child.stdin.end();
      return new Promise((resolve) => child.on("close", resolve));
    },
  };
}

export async function acpBench({ row, ms, median, scratch, bin, runs, startMockServer }) {
  const server = await startMockServer();
  const work = join(scratch, "acp-work");
  const home = join(scratch, "acp-home");
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(join(work, "notes.txt"), "hello\n");
  const setup = {
    cwd: work,
    env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "bench-key", MINI_AGENT_HOME: home },
  };
  const agent = await acpAgent(bin, setup);
  const editor = [];
  const cli = [];
  for (let i = -1; i < runs; i++) {
    const prompt = await agent.prompt();
    const answer = await firstByte(bin, ["what do the notes say?"], setup);
    if (i < 0) continue;
    editor.push(prompt);
    cli.push(answer);
  }
  await agent.close();
  server.close();
  const [toUpdate, toByte] = [median(editor), median(cli)];
  row(
    "ACP: session/prompt to its first update (one agent, one session)",
    ms(toUpdate),
    `${ms(toByte)} (the CLI: spawn to the first answer byte)`,
    `${(toUpdate / toByte).toFixed(2)}×`,
    "",
  );
}
