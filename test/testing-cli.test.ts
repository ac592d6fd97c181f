import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { anthropicTurn, startAnthropicServer } from "mini-agent/testing";
import { describe, expect, it } from "vitest";
import { useCleanup } from "./support/cleanup.js";
import { cliEnv, runBin, sessionFiles, sessionRecords } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/** `mini-agent-testing serve`: the kit's strict servers from the command line, for a try without a key. */

const tempDir = useTempDirs();
const track = useCleanup();

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  bin: Record<string, string>;
};
const testingBin = fileURLToPath(new URL(`../${pkg.bin["mini-agent-testing"]}`, import.meta.url));

interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

/** Starts `mini-agent-testing` with `args` and waits for the URL it prints on its first line. */
async function serve(args: string[], cwd: string): Promise<Served> {
  const child = spawn(process.execPath, [testingBin, ...args], { cwd, stdio: "pipe" });
  track({ close: () => child.kill("SIGTERM") });
  let stdout = "";
  let stderr = "";
  // Both lines: the notice on stderr and the URL on stdout.
  const url = await new Promise<string>((resolve, reject) => {
    const ready = () => {
      if (stdout.includes("\n") && stderr.includes("\n")) resolve(stdout.split("\n")[0] ?? "");
    };
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      ready();
    });
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      ready();
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  return { child, url, stderr: () => stderr };
}

/** Runs `mini-agent-testing` to its end: its exit code and output. */
async function runTesting(args: string[], cwd: string) {
  const child = spawn(process.execPath, [testingBin, ...args], { cwd, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

const readThenAnswer = [
  { calls: [{ name: "read", input: { path: "hello.txt" } }] },
  { text: "hello.txt says hello." },
];

describe("mini-agent-testing serve", () => {
  it("serves a script of rounds to the real CLI over the Messages API", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "rounds.json"), JSON.stringify(readThenAnswer));
    await writeFile(join(dir, "hello.txt"), "hello\n");
    const server = await serve(["serve", "--script", "rounds.json"], dir);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.stderr()).toBe(
      `mini-agent-testing: serving 2 rounds (anthropic) at ${server.url}: set ANTHROPIC_BASE_URL to it and ANTHROPIC_API_KEY to any value; Ctrl-C stops\n`,
    );

    const env = cliEnv(dir, server.url);
    const run = await runBin(["what does hello.txt say?"], { cwd: dir, env });
    expect(run).toEqual({
      code: 0,
      stdout: "hello.txt says hello.\n",
      stderr: "  ✓ read hello.txt\n",
    });
    const [file] = await sessionFiles(dir);
    const records = await sessionRecords(file ?? "");
    const results = records.filter(
      (record) => (record.message as { role?: string } | undefined)?.role === "tool",
    );
    const sha256 = createHash("sha256")
      .update(await readFile(join(dir, "hello.txt")))
      .digest("hex");
    expect(results.map((record) => record.message)).toEqual([
      {
        role: "tool",
        toolCallId: "toolu_1",
        content: "hello",
        isError: false,
        seen: { path: "hello.txt", sha256 },
      },
    ]);
  });

  it("serves Chat Completions with --protocol openai, on the port asked for", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "rounds.json"), JSON.stringify([{ text: ["Hel", "lo."] }]));
    const probe = await startAnthropicServer([]);
    const port = Number(new URL(probe.url).port);
    await probe.close();
    const server = await serve(
      ["serve", "--script", "rounds.json", "--protocol", "openai", "--port", String(port)],
      dir,
    );
    expect(server.url).toBe(`http://127.0.0.1:${port}/v1`);
    const env = { PATH: process.env.PATH, HOME: dir, MINI_AGENT_HOME: join(dir, "state") };
    const run = await runBin(
      ["--provider", "openai", "--base-url", server.url, "--model", "local", "say hello"],
      { cwd: dir, env },
    );
    expect(run).toEqual({ code: 0, stdout: "Hello.\n", stderr: "" });
  });

  it.each([
    ["[", "rounds.json is not JSON: Unexpected end of JSON input"],
    ["{}", 'rounds.json must hold a list of rounds, e.g. [{"text": "Hello."}]'],
    ["[]", "rounds.json holds no rounds"],
    ['[{"txt": "hi"}]', 'rounds.json: round 1 has an unknown field "txt" (text, calls)'],
    ['[{"text": 7}]', "rounds.json: round 1: text must be a string or a list of strings"],
    ["[{}]", "rounds.json: round 1 has neither text nor calls"],
    [
      '[{"text": "a"}, {"calls": [{"name": "read", "input": "x"}]}]',
      "rounds.json: round 2: calls[0].input must be an object",
    ],
    [
      '[{"calls": [{"input": {}}]}]',
      "rounds.json: round 1: calls[0].name must be a non-empty string",
    ],
  ])("refuses the script %s in one line, exit 2", async (script, message) => {
    const dir = await tempDir();
    await writeFile(join(dir, "rounds.json"), script);
    const result = await runTesting(["serve", "--script", "rounds.json"], dir);
    expect(result).toEqual({ code: 2, stdout: "", stderr: `mini-agent-testing: ${message}\n` });
  });

  it.each([
    [
      [],
      "usage: mini-agent-testing serve --script ROUNDS.json [--port N] [--protocol anthropic|openai]",
    ],
    [["serve"], "serve needs --script ROUNDS.json"],
    [["serve", "--script"], "--script needs a value"],
    [
      ["serve", "--script", "r.json", "--port", "http"],
      '--port must be a number from 0 to 65535, not "http"',
    ],
    [
      ["serve", "--script", "r.json", "--protocol", "gemini"],
      '--protocol must be anthropic or openai, not "gemini"',
    ],
    [
      ["serve", "--script", "r.json", "--verbose"],
      "unknown option --verbose (mini-agent-testing --help lists the options)",
    ],
    [["serve", "--script", "missing.json"], "cannot read missing.json: no such file"],
  ])("refuses %j in one line, exit 2", async (args, message) => {
    const dir = await tempDir();
    const result = await runTesting(args, dir);
    expect(result).toEqual({ code: 2, stdout: "", stderr: `mini-agent-testing: ${message}\n` });
  });
});

describe("the kit's servers take a turn as its replies", () => {
  it("serves anthropicTurn(...) given straight to startAnthropicServer, text as one string", async () => {
    const server = track(await startAnthropicServer([anthropicTurn({ text: "Hi there." })]));
    const response = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k" },
      body: JSON.stringify({
        model: "m",
        max_tokens: 100,
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      }),
    });
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).toContain('"text":"Hi there."');
    expect(body).toContain("event: message_stop");
  });
});
