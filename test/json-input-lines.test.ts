import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { JsonInput } from "../src/cli/json-input.js";
import type { OutputEvent } from "../src/cli/stream-json-protocol.js";
import { summaryPrompt } from "../src/compaction/summary.js";
import { status, stream, turn } from "../src/testing/anthropic-server.js";
import type { Body } from "../src/testing/sse-server.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { protocolLines } from "./support/stream-json.js";
import { signalWhen } from "./support/until.js";

/** `--input-format stream-json`: every user line that will not run gets one `error` event. */

const setup = useCliSetup();
const jsonFlags = ["--input-format", "stream-json", "--output-format", "stream-json"];
const user = (text: string) => JSON.stringify({ type: "user", text });
const error = (message: string) => ({ version: 1, type: "error", message });

describe("user lines that do not run", () => {
  it("skips a user text that is only whitespace with one error event, like an empty one", async () => {
    const { server, options } = await setup([stream(turn({ text: ["Done."] }))]);
    const input = [user(""), user("  "), user("\n"), user(" \t\r\n "), user("hello")];
    const run = await runBin([...jsonFlags, "--sandbox", "off"], {
      ...options,
      input: `${input.join("\n")}\n`,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "error")).toEqual([
      error(
        'input line 1 is not {"type":"user","text":…} or {"type":"approval","id":…,"decision":"allow"|"deny"}; it was skipped',
      ),
      error("input line 2 is a user message with only whitespace as its text; it was skipped"),
      error("input line 3 is a user message with only whitespace as its text; it was skipped"),
      error("input line 4 is a user message with only whitespace as its text; it was skipped"),
    ]);
    expect(lines.filter((line) => line.type === "result")).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
  }, 30_000);
});

describe("user lines queued when the token budget ends the run", () => {
  it("each get one error event naming its input line, before the exit 5", async () => {
    const { server, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_b", name: "bash", input: { command: "echo hi" } }] })),
      stream(turn({ text: ["never asked"] })),
    ]);
    const input = [user("first"), "not json", user("second"), user("third")];
    const run = await runBin(
      [...jsonFlags, "--sandbox", "off", "--allow-bash", "--token-budget", "20"],
      { ...options, input: `${input.join("\n")}\n` },
    );
    expect(run.code).toBe(5);
    const lines = protocolLines(run.stdout);
    const results = lines.filter((line) => line.type === "result");
    expect(results).toMatchObject([{ status: "budget_exceeded" }]);
    const end = lines.findIndex((line) => line.type === "result");
    expect(lines.filter((line) => line.type === "error")).toEqual([
      error("input line 2 is not JSON; it was skipped"),
      error("input line 3 was not run: the token budget was reached"),
      error("input line 4 was not run: the token budget was reached"),
    ]);
    // The lines not run are said after the turn's result, as the last lines of the run.
    expect(lines.slice(end + 1)).toEqual([
      error("input line 3 was not run: the token budget was reached"),
      error("input line 4 was not run: the token budget was reached"),
    ]);
    expect(server.requests).toHaveLength(1);
  }, 30_000);
});

/**
 * Every other way the run ends while user lines wait gets the same treatment as the budget: one
 * `error` event per line read and not run, after the turn's `result`, as the last lines.
 */
describe("user lines queued when something else ends the run", () => {
  const notRun = (reason: string) => [
    error(`input line 2 was not run: ${reason}`),
    error(`input line 3 was not run: ${reason}`),
  ];

  it("each get one error event when a compaction fails (exit 4)", async () => {
    const isSummary = (body: Body) =>
      ((body.system ?? []) as { text: string }[]).map((block) => block.text).join("") ===
      summaryPrompt;
    let round = 0;
    const dispatch = (body: Body) => {
      if (isSummary(body)) return status(400, undefined, "messages: bad summary");
      round++;
      const call = { id: `toolu_${round}`, name: "read", input: { path: "big.txt" } };
      return stream(turn({ calls: [call] }));
    };
    const script = Array.from({ length: 20 }, () => dispatch);
    const { server, workspace, options } = await setup(script, { contextLimit: 8000 });
    await writeFile(join(workspace, "big.txt"), "a line of a rather large file\n".repeat(200));
    const input = [user("read big.txt over and over"), user("second"), user("third")];
    const run = await runBin([...jsonFlags, "--sandbox", "off", "--context-window", "8000"], {
      ...options,
      input: `${input.join("\n")}\n`,
    });
    expect(run.code).toBe(4);
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "result")).toMatchObject([{ status: "error" }]);
    const end = lines.findIndex((line) => line.type === "result");
    expect(lines.filter((line) => line.type === "error")).toEqual(notRun("the compaction failed"));
    expect(lines.slice(end + 1)).toEqual(notRun("the compaction failed"));
    expect(server.requests.filter((request) => isSummary(request.body))).toHaveLength(1);
  }, 30_000);

  it("each get one error event when SIGTERM stops the run (exit 143)", async () => {
    const { server, options } = await setup([
      stream(turn({ text: ["never ", "finished"] }), { stallAfter: 3 }),
    ]);
    const input = [user("first"), user("second"), user("third")];
    const run = await runBin([...jsonFlags, "--sandbox", "off"], {
      ...options,
      input: `${input.join("\n")}\n`,
      // Once the first request is out: the turn runs, its answer stalled.
      started: (child) => signalWhen(child, () => server.requests.length > 0, "SIGTERM"),
    });
    expect(run.code).toBe(143);
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "result")).toMatchObject([{ status: "aborted" }]);
    const end = lines.findIndex((line) => line.type === "result");
    expect(lines.slice(end + 1)).toEqual(notRun("SIGTERM stopped the run"));
    expect(lines.filter((line) => line.type === "error")).toEqual(
      notRun("SIGTERM stopped the run"),
    );
    expect(server.requests).toHaveLength(1);
  }, 30_000);
});

describe("JsonInput once the run has ended", () => {
  it("answers the lines it holds and every user line read later with one error each, and runs none", async () => {
    const stdin = new PassThrough();
    const sent: OutputEvent[] = [];
    const input = new JsonInput(stdin, {
      send: (event) => sent.push(event),
      approvalTimeoutMs: 1000,
    });
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    stdin.write(`${user("first")}\n${user("second")}\n${user("third")}\n`);
    await settle();
    expect(await input.nextPrompt()).toBe("first");
    input.end("SIGTERM stopped the run");
    stdin.write(`${user("fourth")}\n`);
    stdin.end();
    await settle();
    expect(await input.nextPrompt()).toBeUndefined();
    const message = (line: number) => `input line ${line} was not run: SIGTERM stopped the run`;
    expect(sent).toEqual([2, 3, 4].map((line) => ({ type: "error", message: message(line) })));
  });
});

describe("JsonInput and a line too long to hold", () => {
  it("skips a stream-json line over 64 MiB with one error event and runs the next one", async () => {
    const { server, options } = await setup([stream(turn({ text: ["Done."] }))]);
    const flood = "x".repeat(64 * 1024 * 1024 + 1);
    const run = await runBin([...jsonFlags, "--sandbox", "off"], {
      ...options,
      input: `${flood}\n${user("hello after the flood")}\n`,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "error")).toEqual([
      error("input line 1 is over 64 MiB; it was skipped"),
    ]);
    expect(lines.filter((line) => line.type === "result")).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
  }, 60_000);

  it("skips a line over the cap to its newline with one error, and loses nothing around it", async () => {
    const stdin = new PassThrough();
    const sent: OutputEvent[] = [];
    const input = new JsonInput(stdin, {
      send: (event) => sent.push(event),
      approvalTimeoutMs: 1000,
      maxLineBytes: 64,
    });
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    stdin.write(`${user("before")}\n${user("x".repeat(30))}`);
    stdin.write(`${"y".repeat(100)}`);
    stdin.write(`${"z".repeat(100)}\n${user("after")}\r\n`);
    stdin.write(`${user("a".repeat(30))}\n`);
    stdin.end(user("last, without a newline"));
    await settle();
    const prompts = [];
    for (
      let prompt = await input.nextPrompt();
      prompt !== undefined;
      prompt = await input.nextPrompt()
    )
      prompts.push(prompt);
    expect(prompts).toEqual(["before", "after", "a".repeat(30), "last, without a newline"]);
    expect(sent).toEqual([
      { type: "error", message: "input line 2 is over 64 bytes; it was skipped" },
    ]);
  });

  it("keeps a multi-byte character split across reads whole", async () => {
    const stdin = new PassThrough();
    const input = new JsonInput(stdin, { send: () => {}, approvalTimeoutMs: 1000 });
    const bytes = Buffer.from(`${user("héllo 😀")}\n`);
    const split = bytes.indexOf(0xf0) + 2;
    stdin.write(bytes.subarray(0, split));
    stdin.end(bytes.subarray(split));
    expect(await input.nextPrompt()).toBe("héllo 😀");
  });
});
