import { type ChildProcess, spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutputLine } from "../src/cli/stream-json-protocol.js";
import { stream, turn, validate } from "../src/testing/anthropic-server.js";
import {
  bin,
  type CliOptions,
  runBin,
  sessionFiles,
  toolResults,
  useCliSetup,
} from "./support/cli.js";
import {
  everythingServer,
  freePort,
  type RecordingProxy,
  recorded,
  recorder,
  recordingProxy,
  startEverything,
} from "./support/mcp.js";
import { checkLine } from "./support/stream-json.js";
import { signalWhen } from "./support/until.js";

/**
 * The CLI against the reference server, `@modelcontextprotocol/server-everything`, over stdio
 * and over Streamable HTTP, driven by a scripted model through the strict local Messages API
 * server: every message the CLI sent the MCP server is recorded (a recorder around the stdio
 * server, a proxy in front of the HTTP one), and every request the model server saw is checked.
 */

const setup = useCliSetup();
const secret = "sk-live-0123456789abcdef";

let http: ChildProcess;
let proxy: RecordingProxy;
beforeAll(async () => {
  const port = await freePort();
  http = await startEverything(port);
  proxy = await recordingProxy(`http://127.0.0.1:${port}/mcp`);
}, 30_000);
afterAll(async () => {
  await proxy?.close();
  http?.kill("SIGKILL");
});

interface Transport {
  name: string;
  /** The server's entry, and how to read what the CLI sent it. */
  server(
    home: string,
    extra?: Record<string, unknown>,
  ): Promise<{
    entry: Record<string, unknown>;
    sent: () => Promise<Record<string, unknown>[]>;
  }>;
}

const stdio: Transport = {
  name: "stdio",
  server: async (home, extra = {}) => {
    const log = join(home, "mcp-sent.jsonl");
    const args = [recorder, log, process.execPath, everythingServer(), "stdio"];
    return { entry: { command: process.execPath, args, ...extra }, sent: () => recorded(log) };
  },
};

const streamableHttp: Transport = {
  name: "Streamable HTTP",
  server: async (_home, extra = {}) => {
    const from = proxy.messages.length;
    return {
      entry: { type: "http", url: proxy.url, ...extra },
      sent: async () => proxy.messages.slice(from),
    };
  },
};

async function configFile(home: string, entry: Record<string, unknown>): Promise<string> {
  const file = join(home, "mcp-test.json");
  await writeFile(file, JSON.stringify({ mcpServers: { everything: entry } }));
  return file;
}

const call = (id: string, tool: string, input: Record<string, unknown> = {}) => ({
  id,
  name: `mcp__everything__${tool}`,
  input,
});
const allow = ["--allow", "mcp__everything__*"];

/** Every request the strict model server received is one the real API accepts. */
function expectValid(requests: readonly { body: unknown }[]): void {
  expect(
    requests.map((request) => validate(request.body as Parameters<typeof validate>[0])),
  ).toEqual(requests.map(() => undefined));
}

describe.each([stdio, streamableHttp])(
  "the CLI with the reference MCP server over $name",
  (transport) => {
    it("lists the server as ready, with its tools as the model sees them", async () => {
      const { home, options } = await setup([]);
      const { entry } = await transport.server(home);
      const file = await configFile(home, entry);
      const run = await runBin(["mcp", "list", "--mcp-config", file], options);
      expect(run.code).toBe(0);
      expect(run.stdout.split("\n").slice(1, 4)).toEqual([
        "  ready, 13 tool(s)",
        "  mcp__everything__echo",
        "  mcp__everything__get-annotated-message",
      ]);
    }, 30_000);

    it("calls echo, get-sum and get-tiny-image (the image sent as an image), every request valid", async () => {
      const { server, home, options } = await setup([
        stream(
          turn({
            calls: [
              call("toolu_1", "echo", { message: "hi there" }),
              call("toolu_2", "get-sum", { a: 2, b: 40 }),
              call("toolu_3", "get-tiny-image"),
            ],
          }),
        ),
        stream(turn({ text: ["done"] })),
      ]);
      const { entry, sent } = await transport.server(home);
      const file = await configFile(home, entry);
      const run = await runBin(["--mcp-config", file, ...allow, "use the server"], options);
      expect(run).toMatchObject({ code: 0, stdout: "done\n" });
      const results = toolResults(server.requests[1]?.body ?? {});
      const image = (results[2]?.content as { source?: { data?: string } }[] | undefined)?.[1];
      const data = image?.source?.data ?? "";
      expect(results).toEqual([
        { id: "toolu_1", content: "Echo: hi there", isError: false },
        { id: "toolu_2", content: "The sum of 2 and 40 is 42.", isError: false },
        {
          id: "toolu_3",
          content: [
            { type: "text", text: "Here's the image you requested:" },
            { type: "image", source: { type: "base64", media_type: "image/png", data } },
            { type: "text", text: "The image above is the MCP logo." },
          ],
          isError: false,
        },
      ]);
      // The logo itself: a 20x20 PNG of 3.9 KB.
      const bytes = Buffer.from(data, "base64");
      expect([
        bytes.toString("latin1", 1, 4),
        bytes.readUInt32BE(16),
        bytes.readUInt32BE(20),
      ]).toEqual(["PNG", 20, 20]);
      expect((bytes.length / 1024).toFixed(1)).toBe("3.9");
      expectValid(server.requests);
      const calls = (await sent()).filter((message) => message.method === "tools/call");
      expect(calls.map((message) => message.params)).toEqual([
        {
          name: "echo",
          arguments: { message: "hi there" },
          _meta: { progressToken: expect.anything() },
        },
        {
          name: "get-sum",
          arguments: { a: 2, b: 40 },
          _meta: { progressToken: expect.anything() },
        },
        { name: "get-tiny-image", arguments: {}, _meta: { progressToken: expect.anything() } },
      ]);
    }, 30_000);

    it("lets progress extend the entry's per-call timeout, and times out a call without progress", async () => {
      const { server, home, options } = await setup([
        stream(
          turn({
            calls: [
              call("toolu_1", "trigger-long-running-operation", { duration: 2, steps: 5 }),
              call("toolu_2", "trigger-long-running-operation", { duration: 2, steps: 1 }),
            ],
          }),
        ),
        stream(turn({ text: ["done"] })),
      ]);
      const { entry } = await transport.server(home, { timeout: 1000 });
      const file = await configFile(home, entry);
      const run = await runBin(["--mcp-config", file, ...allow, "run long"], options);
      expect(run).toMatchObject({ code: 0, stdout: "done\n" });
      expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
        {
          id: "toolu_1",
          content: "Long running operation completed. Duration: 2 seconds, Steps: 5.",
          isError: false,
        },
        {
          id: "toolu_2",
          content:
            "mcp__everything__trigger-long-running-operation failed: timed out without progress",
          isError: true,
        },
      ]);
      expectValid(server.requests);
    }, 30_000);

    it("on Ctrl-C mid-call sends notifications/cancelled, records the call aborted, and the server answers the next turn", async () => {
      const { server, home, options } = await setup([
        stream(
          turn({
            calls: [call("toolu_1", "trigger-long-running-operation", { duration: 20, steps: 40 })],
          }),
        ),
        stream(turn({ calls: [call("toolu_2", "echo", { message: "still here" })] })),
        stream(turn({ text: ["done"] })),
      ]);
      const { entry, sent } = await transport.server(home);
      const file = await configFile(home, entry);
      const flags = ["--input-format", "stream-json", "--output-format", "stream-json"];
      // Ctrl-C once the server has the long call.
      const calling = async () =>
        (await sent()).some(
          (message) =>
            message.method === "tools/call" &&
            (message.params as { name?: string }).name === "trigger-long-running-operation",
        );
      const run = await driveWithSignal(
        [...flags, "--mcp-config", file, ...allow],
        options,
        calling,
      );
      expect(run.code).toBe(0);
      const results = run.lines.filter(
        (line) => line.type === "tool_result" || line.type === "result",
      );
      expect(
        results.map((line) => [line.type, line.type === "result" ? line.status : line.content]),
      ).toEqual([
        [
          "tool_result",
          "mcp__everything__trigger-long-running-operation aborted: the server was asked to cancel the call",
        ],
        ["result", "aborted"],
        ["tool_result", "Echo: still here"],
        ["result", "completed"],
      ]);
      const messages = await sent();
      const long = messages.find(
        (message) =>
          message.method === "tools/call" &&
          (message.params as { name?: string }).name === "trigger-long-running-operation",
      );
      const cancelled = messages.filter((message) => message.method === "notifications/cancelled");
      expect(
        cancelled.map((message) => (message.params as { requestId?: unknown }).requestId),
      ).toEqual([long?.id]);
      expectValid(server.requests);
      expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
        {
          id: "toolu_1",
          content:
            "mcp__everything__trigger-long-running-operation aborted: the server was asked to cancel the call",
          isError: true,
        },
      ]);
    }, 40_000);
  },
);

describe("the CLI with the reference MCP server over stdio, and secrets", () => {
  it("passes the entry's secret to the server, and the session file holds it only redacted", async () => {
    const { server, home, options } = await setup([
      stream(turn({ calls: [call("toolu_1", "get-env")] })),
      stream(turn({ text: ["done"] })),
    ]);
    // A key is named by a reference in the file (a literal one is refused) and comes from the
    // environment, which a server otherwise gets without its secret variables.
    const { entry } = await stdio.server(home, {
      env: { EVERYTHING_API_KEY: "${EVERYTHING_TEST_SECRET}" },
    });
    const file = await configFile(home, entry);
    const env = {
      ...options.env,
      EVERYTHING_TEST_SECRET: secret,
      GH_TOKEN: "ghp_agent_token_never_passed_on",
    };
    const run = await runBin(["--mcp-config", file, ...allow, "show env"], { ...options, env });
    expect(run).toMatchObject({ code: 0, stdout: "done\n" });
    const [result] = toolResults(server.requests[1]?.body ?? {});
    const shown = JSON.parse(String(result?.content)) as Record<string, string>;
    expect([shown.EVERYTHING_API_KEY, shown.GH_TOKEN]).toEqual(["[redacted]", undefined]);
    const [session] = await sessionFiles(home);
    const text = await readFile(session ?? "", "utf8");
    expect(text).toContain('\\"EVERYTHING_API_KEY\\": \\"[redacted]\\"');
    expect(text).not.toContain(secret);
    expect(text).not.toContain("ghp_agent_token_never_passed_on");
    expectValid(server.requests);
  }, 30_000);
});

/**
 * A program over stdin and stdout that sends one user line, Ctrl-C (SIGINT) once the call has
 * run a moment, then, when that turn's result is in, a second user line; it closes stdin after
 * the second result.
 */
function driveWithSignal(
  args: string[],
  options: CliOptions,
  ready: () => Promise<boolean>,
): Promise<{ code: number | null; lines: OutputLine[]; stderr: string }> {
  const user = (text: string) => `${JSON.stringify({ type: "user", text })}\n`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const lines: OutputLine[] = [];
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    createInterface({ input: child.stdout }).on("line", (text) => {
      const line = checkLine(JSON.parse(text) as unknown, text);
      lines.push(line);
      if (line.type === "tool_start" && line.id === "toolu_1") signalWhen(child, ready, "SIGINT");
      if (line.type === "result") {
        if (lines.filter((seen) => seen.type === "result").length === 1)
          child.stdin.write(user("again"));
        else child.stdin.end();
      }
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, lines, stderr }));
    child.stdin.write(user("run long"));
  });
}
