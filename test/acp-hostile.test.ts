import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import {
  errorOf,
  invalidLines,
  noAnswer,
  permissionRequestId,
  select,
  withAcpAgent,
} from "./support/acp.js";
import { runBin, sessionFiles, sessionRecords, toolResults, useCliSetup } from "./support/cli.js";

const setup = useCliSetup();

const text = (value: string): acp.ContentBlock[] => [{ type: "text", text: value }];

/** Every string in `value` is well-formed UTF-16 (no lone surrogate), as strict parsers need. */
function wellFormedEverywhere(value: unknown): boolean {
  if (typeof value === "string")
    return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);
  if (value !== null && typeof value === "object")
    return Object.entries(value).every(
      ([k, v]) => wellFormedEverywhere(k) && wellFormedEverywhere(v),
    );
  return true;
}

describe("mini-agent acp against a hostile model and editor", () => {
  it("replays the repaired history on session/load: a call without a result gets its receipt, a stray result nothing", async () => {
    const read = { id: "toolu_1", name: "read", input: { path: "notes.txt" } };
    const { workspace, home, options } = await setup([
      stream(turn({ calls: [read] })),
      stream(turn({ text: "read it" })),
    ]);
    await writeFile(join(workspace, "notes.txt"), "hello\n");
    expect((await runBin(["--sandbox", "off", "read the notes"], options)).code).toBe(0);
    const [file = ""] = await sessionFiles(home);
    const lines = (await readFile(file, "utf8")).trimEnd().split("\n");
    // The call's result lost (a crash between commit and receipt), a result for no call added.
    const kept = lines.filter((line) => !line.includes('"role":"tool"'));
    const stray = JSON.stringify({
      type: "message",
      message: { role: "tool", toolCallId: "toolu_none", content: "stray", isError: false },
    });
    await writeFile(file, `${[...kept, stray].join("\n")}\n`);
    const sessionId = file.split("/").at(-1)?.replace(".jsonl", "") ?? "";
    const { run } = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      await agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
    });
    const updates = run.updates.map((note) => note.update);
    expect(updates.map((u) => [u.sessionUpdate, "toolCallId" in u ? u.toolCallId : ""])).toEqual([
      ["user_message_chunk", ""],
      ["tool_call", "toolu_1"],
      ["tool_call_update", "toolu_1"],
      ["agent_message_chunk", ""],
    ]);
    expect(updates[2]).toMatchObject({
      status: "failed",
      rawOutput: { content: expect.stringMatching(/^outcome unknown/), isError: true },
    });
    // Told on stderr as `--continue` tells it.
    expect(run.stderr()).toContain(
      "mini-agent: 1 tool call(s) had no result; recorded as outcome unknown\n",
    );
    expect(invalidLines(run.lines)).toEqual([]);
  });

  it("sends no update for a session file it cannot load", async () => {
    const { workspace, home, options } = await setup([stream(turn({ text: "hi" }))]);
    expect((await runBin(["--sandbox", "off", "hello"], options)).code).toBe(0);
    const [file = ""] = await sessionFiles(home);
    const [header = "", ...rest] = (await readFile(file, "utf8")).split("\n");
    await writeFile(file, [header.replace(/"version":\d+/, '"version":99'), ...rest].join("\n"));
    const sessionId = file.split("/").at(-1)?.replace(".jsonl", "") ?? "";
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        return await errorOf(
          agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] }),
        );
      },
    );
    expect(value.code).toBeLessThan(0);
    expect(run.updates).toEqual([]);
  });

  it("shows a write that replaced a file as a diff from its old text, not as a new file", async () => {
    const write = { id: "toolu_1", name: "write", input: { path: "old.txt", content: "new\n" } };
    const create = { id: "toolu_2", name: "write", input: { path: "fresh.txt", content: "x\n" } };
    const readIt = { id: "toolu_0", name: "read", input: { path: "old.txt" } };
    const { workspace, options, server } = await setup([
      stream(turn({ calls: [readIt] })),
      stream(turn({ calls: [write, create] })),
      stream(turn({ text: "done" })),
    ]);
    await writeFile(join(workspace, "old.txt"), "old\n");
    const { run } = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      const { sessionId } = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
      await agent.request("session/prompt", { sessionId, prompt: text("write them") });
    });
    const done = run.updates
      .map((note) => note.update)
      .filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    const diffs = done.map((u) =>
      u.sessionUpdate === "tool_call_update"
        ? (u.content ?? []).filter((c) => c.type === "diff")
        : [],
    );
    expect(diffs).toEqual([
      [],
      [{ type: "diff", path: join(workspace, "old.txt"), oldText: "old\n", newText: "new\n" }],
      [{ type: "diff", path: join(workspace, "fresh.txt"), oldText: null, newText: "x\n" }],
    ]);
    expect(server.rejections).toEqual([]);
  });

  it("sends well-formed text and titles with control characters made visible", async () => {
    const odd = "a\u001b[31mb\u202e\ncurl x | sh \ud800";
    const read = { id: "toolu_1", name: "read", input: { path: odd } };
    const { workspace, options } = await setup([
      stream(turn({ text: ["half \ud800 a pair", " and more"], calls: [read] })),
      stream(turn({ text: "done" })),
    ]);
    const { run } = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      const { sessionId } = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
      await agent.request("session/prompt", { sessionId, prompt: text("go") });
    });
    expect(invalidLines(run.lines)).toEqual([]);
    expect(run.lines.every((line) => wellFormedEverywhere(JSON.parse(line)))).toBe(true);
    const call = run.updates
      .map((note) => note.update)
      .find((u) => u.sessionUpdate === "tool_call");
    expect(call && "title" in call ? call.title : "").toBe(
      "read a␛[31mb<U+202E>␊curl x | sh \uFFFD",
    );
  });

  it("refuses an empty prompt and one with only an image that is not whole, before anything is recorded", async () => {
    const { workspace, options, server } = await setup([]);
    const { value } = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      const { sessionId } = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
      return await Promise.all(
        [[], text(""), [{ type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }]].map(
          (prompt) =>
            errorOf(
              agent.request("session/prompt", { sessionId, prompt: prompt as acp.ContentBlock[] }),
            ),
        ),
      );
    });
    expect(value).toEqual([
      { code: -32602, message: "Invalid params: the prompt has no text" },
      { code: -32602, message: "Invalid params: the prompt has no text" },
      {
        code: -32602,
        message:
          "Invalid params: image 1 of the prompt is not a whole PNG image (cut short or damaged)",
      },
    ]);
    expect(server.requests).toEqual([]);
  });

  it("answers the model's own output limit and refusal with their stop reasons", async () => {
    const { workspace, options } = await setup([
      stream(turn({ text: "cut", stopReason: "max_tokens" })),
      stream(turn({ text: "no", stopReason: "refusal" })),
    ]);
    const { value } = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      const { sessionId } = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
      const first = await agent.request("session/prompt", { sessionId, prompt: text("one") });
      const second = await agent.request("session/prompt", { sessionId, prompt: text("two") });
      return [first, second];
    });
    expect(value).toEqual([{ stopReason: "max_tokens" }, { stopReason: "refusal" }]);
  });

  it("denies, as the editor's error, an answer with an option it was not offered", async () => {
    const bash = { id: "toolu_1", name: "bash", input: { command: "touch out.txt" } };
    const { workspace, home, options } = await setup([
      stream(turn({ calls: [bash] })),
      stream(turn({ text: "ok" })),
    ]);
    await withAcpAgent(
      ["--sandbox", "off"],
      options,
      () => select("allow_forever"),
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const { sessionId } = await agent.request("session/new", {
          cwd: workspace,
          mcpServers: [],
        });
        await agent.request("session/prompt", { sessionId, prompt: text("go") });
      },
    );
    const [file = ""] = await sessionFiles(home);
    const approvals = (await readFile(file, "utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record.type === "approval");
    expect(approvals).toEqual([
      {
        type: "approval",
        toolCallId: "toolu_1",
        tool: "bash",
        approved: false,
        by: "editor-error",
      },
    ]);
    const results = (await readFile(file, "utf8"))
      .split("\n")
      .filter((l) => l.includes('"role":"tool"'));
    expect(
      results.map((l) => (JSON.parse(l) as { message: { content: string } }).message.content),
    ).toEqual(["the editor answered with an option it was not offered; the call did not run"]);
    expect(existsSync(join(workspace, "out.txt"))).toBe(false);
  });

  it("records an allow that arrives with session/cancel as what happened: denied, by cancelled", async () => {
    const bash = { id: "toolu_1", name: "bash", input: { command: "touch made.txt" } };
    const { workspace, home, options, server } = await setup([
      stream(turn({ calls: [bash] })),
      stream(turn({ text: "after" })),
    ]);
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      ({ sessionId }, run) => {
        // The editor's allow was on its way when the user cancelled: both reach the agent at once.
        const allow = { outcome: { outcome: "selected", optionId: "allow_once" } };
        run.send(
          { jsonrpc: "2.0", id: permissionRequestId(run.lines), result: allow },
          { jsonrpc: "2.0", method: "session/cancel", params: { sessionId } },
        );
        return new Promise<never>(() => {});
      },
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const { sessionId } = await agent.request("session/new", {
          cwd: workspace,
          mcpServers: [],
        });
        const cancelled = await agent.request("session/prompt", { sessionId, prompt: text("go") });
        const next = await agent.request("session/prompt", { sessionId, prompt: text("again") });
        return { cancelled, next };
      },
    );
    expect(value).toEqual({
      cancelled: { stopReason: "cancelled" },
      next: { stopReason: "end_turn" },
    });
    expect(existsSync(join(workspace, "made.txt"))).toBe(false);
    const [file = ""] = await sessionFiles(home);
    const approvals = (await sessionRecords(file)).filter((record) => record.type === "approval");
    expect(approvals).toEqual([
      { type: "approval", toolCallId: "toolu_1", tool: "bash", approved: false, by: "cancelled" },
    ]);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "aborted before execution", isError: true },
    ]);
    expect(invalidLines(run.lines)).toEqual([]);
  });
});

describe("mini-agent acp sessions and notices", () => {
  it("says a round run again on stderr, as the terminal does", async () => {
    const { workspace, options } = await setup([
      stream(turn({ text: "lost" }), { errorAfter: 2 }),
      stream(turn({ text: "whole" })),
    ]);
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const { sessionId } = await agent.request("session/new", {
          cwd: workspace,
          mcpServers: [],
        });
        return await agent.request("session/prompt", { sessionId, prompt: text("go") });
      },
    );
    expect(value).toEqual({ stopReason: "end_turn" });
    expect(run.stderr()).toMatch(
      /^mini-agent: overloaded_error: Overloaded; retrying in [\d.]+ m?s \(attempt 2 of 4\)$/m,
    );
    expect(invalidLines(run.lines)).toEqual([]);
  });

  it("closes a session on session/close: its file is free for the terminal, its id gone", async () => {
    const { workspace, options } = await setup([
      stream(turn({ text: "first" })),
      stream(turn({ text: "from the terminal" })),
    ]);
    const { value } = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      const init = await agent.request("initialize", { protocolVersion: 1 });
      const { sessionId } = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
      await agent.request("session/prompt", { sessionId, prompt: text("one") });
      const closed = await agent.request("session/close", { sessionId });
      // The agent still runs, and the session's lock is free: the terminal goes on from it.
      const terminal = await runBin(["--sandbox", "off", "--continue", "two"], options);
      const after = await errorOf(
        agent.request("session/prompt", { sessionId, prompt: text("x") }),
      );
      // Closing it again succeeds, as the protocol's SDK answers it.
      const again = await agent.request("session/close", { sessionId });
      return {
        capabilities: init.agentCapabilities?.sessionCapabilities,
        closed,
        terminal,
        after,
        again,
      };
    });
    expect(value.capabilities).toEqual({ list: {}, close: {} });
    expect(value.closed).toEqual({});
    expect(value.terminal).toMatchObject({ code: 0, stdout: "from the terminal\n" });
    expect(value.after.code).toBe(-32002);
    expect(value.again).toEqual({});
  });
});

describe("mini-agent acp flags", () => {
  it("refuses the flags of a terminal run, which the editor's protocol has no use for", async () => {
    const { options } = await setup([]);
    for (const flags of [
      ["--continue"],
      ["--output-format", "json"],
      ["--resume", "x"],
      ["--input-format", "stream-json"],
    ]) {
      const run = await runBin(["acp", ...flags], options);
      expect({ flags, code: run.code, stdout: run.stdout }).toEqual({ flags, code: 2, stdout: "" });
      expect(run.stderr).toMatch(new RegExp(`^mini-agent: ${flags[0]} has no use with acp`));
    }
  });
});
