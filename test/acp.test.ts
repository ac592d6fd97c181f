import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session/session.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { assertValidHistory } from "../src/testing/history.js";
import { invalidLines, noAnswer, select, withAcpAgent } from "./support/acp.js";
import { runBin, sessionFiles, systemText, toolResults, useCliSetup } from "./support/cli.js";
import { everythingServer } from "./support/mcp.js";
import { until } from "./support/until.js";

const setup = useCliSetup();

const newSession = (agent: acp.ClientContext, cwd: string) =>
  agent.request("session/new", { cwd, mcpServers: [] });

const prompt = (agent: acp.ClientContext, sessionId: string, text: string) =>
  agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

const updatesOf = (updates: acp.SessionNotification[]) => updates.map((note) => note.update);

describe("mini-agent acp", () => {
  it("initializes, opens a session in the workspace and runs a prompt with a read as updates", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "read", input: { path: "notes.txt" } }] })),
      stream(turn({ text: ["It says ", "hello."] })),
      stream(turn({ text: "Still hello." })),
    ]);
    await writeFile(join(workspace, "notes.txt"), "hello\n");
    const { value, run, code } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent) => {
        const init = await agent.request("initialize", { protocolVersion: 1 });
        const session = await newSession(agent, workspace);
        const answer = await prompt(agent, session.sessionId, "what do the notes say?");
        return { init, session, answer };
      },
    );
    expect(code).toBe(0);
    expect(value.init).toEqual({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: false },
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: { list: {}, close: {} },
      },
      agentInfo: { name: "mini-agent", version: expect.any(String) },
      authMethods: [
        {
          id: "anthropic-api-key",
          name: "Anthropic API key",
          description:
            "Set ANTHROPIC_API_KEY in the environment the editor starts mini-agent with (its agent server settings), then restart the agent.",
        },
      ],
    });
    expect(value.answer).toEqual({ stopReason: "end_turn" });
    const path = join(workspace, "notes.txt");
    expect(updatesOf(run.updates)).toEqual([
      {
        sessionUpdate: "tool_call",
        toolCallId: "toolu_1",
        title: "read notes.txt",
        kind: "read",
        status: "pending",
        locations: [{ path }],
        rawInput: { path: "notes.txt" },
      },
      { sessionUpdate: "tool_call_update", toolCallId: "toolu_1", status: "in_progress" },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "toolu_1",
        status: "completed",
        content: [
          { type: "content", content: { type: "text", text: expect.stringContaining("hello") } },
        ],
        rawOutput: { content: expect.stringContaining("hello"), isError: false },
      },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "It says " } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hello." } },
    ]);
    expect(run.updates.every((note) => note.sessionId === value.session.sessionId)).toBe(true);
    expect(invalidLines(run.lines)).toEqual([]);
    expect(server.rejections).toEqual([]);
    // The session file is the CLI's: `--continue` resumes it with the whole conversation.
    const [file] = await sessionFiles(home);
    expect(file).toContain(value.session.sessionId);
    const next = await runBin(["--continue", "and now?"], options);
    expect(next.stdout).toBe("Still hello.\n");
    expect(toolResults(server.requests[2]?.body ?? {})).toEqual([
      { id: "toolu_1", content: expect.stringContaining("hello"), isError: false },
    ]);
  });

  it("asks the editor for a call the rules cannot decide; a rejection denies that call alone", async () => {
    const calls = [
      { id: "toolu_1", name: "bash", input: { command: "echo one | tee one.txt" } },
      { id: "toolu_2", name: "bash", input: { command: "echo two | tee two.txt" } },
    ];
    const { server, workspace, options } = await setup([
      stream(turn({ calls })),
      stream(turn({ text: "done" })),
    ]);
    const answers = ["reject_once", "allow_once"];
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      () => select(answers.shift() ?? "reject_once"),
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const session = await newSession(agent, workspace);
        return await prompt(agent, session.sessionId, "write two files");
      },
    );
    expect(value).toEqual({ stopReason: "end_turn" });
    expect(run.permissions.map((request) => request.toolCall.toolCallId)).toEqual([
      "toolu_1",
      "toolu_2",
    ]);
    expect(run.permissions[0]?.options.map((option) => option.kind)).toEqual([
      "allow_once",
      "allow_always",
      "reject_once",
    ]);
    expect(existsSync(join(workspace, "one.txt"))).toBe(false);
    expect(await readFile(join(workspace, "two.txt"), "utf8")).toBe("two\n");
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "the user denied this call", isError: true },
      { id: "toolu_2", content: expect.any(String), isError: false },
    ]);
    const statuses = updatesOf(run.updates)
      .filter(
        (update) => update.sessionUpdate === "tool_call_update" && update.status !== "in_progress",
      )
      .map(
        (update) =>
          update.sessionUpdate === "tool_call_update" && [update.toolCallId, update.status],
      );
    expect(statuses).toEqual([
      ["toolu_1", "failed"],
      ["toolu_2", "completed"],
    ]);
    expect(invalidLines(run.lines)).toEqual([]);
    expect(server.rejections).toEqual([]);
  });

  it("stops at the turn limit and at the token budget with their stop reasons", async () => {
    const round = stream(turn({ calls: [{ id: "toolu_1", name: "ls", input: {} }] }));
    const { workspace, options, server } = await setup([round, round, round]);
    const limits = async (flags: string[]) =>
      (
        await withAcpAgent(["--sandbox", "off", ...flags], options, noAnswer, async (agent) => {
          await agent.request("initialize", { protocolVersion: 1 });
          const session = await newSession(agent, workspace);
          return await prompt(agent, session.sessionId, "go");
        })
      ).value;
    expect(await limits(["--max-turns", "1"])).toEqual({ stopReason: "max_turn_requests" });
    expect(await limits(["--token-budget", "29"])).toEqual({ stopReason: "max_tokens" });
    expect(server.rejections).toEqual([]);
  });

  it("cancels a running tool: the prompt answers cancelled, the call is recorded, the session goes on", async () => {
    const call = { id: "toolu_1", name: "bash", input: { command: "touch started; sleep 20" } };
    const { workspace, options, server, home } = await setup([
      stream(turn({ calls: [call] })),
      stream(turn({ text: "after" })),
    ]);
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off", "--allow-bash"],
      options,
      noAnswer,
      async (agent, run) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const session = await newSession(agent, workspace);
        const answer = prompt(agent, session.sessionId, "wait");
        await until(() => run.updates.some((note) => isStatus(note.update, "in_progress")));
        // The call is in progress before its command starts (the look at what bash changes
        // comes first): cancel once the command runs, so the answer is the killed one.
        await until(() => existsSync(join(workspace, "started")));
        await agent.notify("session/cancel", { sessionId: session.sessionId });
        const cancelled = await answer;
        const next = await prompt(agent, session.sessionId, "and now?");
        return { cancelled, next };
      },
    );
    expect(value).toEqual({
      cancelled: { stopReason: "cancelled" },
      next: { stopReason: "end_turn" },
    });
    expect(updatesOf(run.updates).filter((update) => isStatus(update, "failed"))).toHaveLength(1);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: "[aborted: the command and its processes were killed]",
        isError: true,
      },
    ]);
    const [file] = await sessionFiles(home);
    const loaded = await readSession(file ?? "");
    expect(loaded.repaired).toBe(0);
    assertValidHistory(loaded.messages);
    expect(invalidLines(run.lines)).toEqual([]);
  });

  it("cancels during a permission request: the call is denied as cancelled, the prompt answers cancelled", async () => {
    const call = { id: "toolu_1", name: "bash", input: { command: "touch made.txt" } };
    const { workspace, options, server } = await setup([
      stream(turn({ calls: [call] })),
      stream(turn({ text: "after" })),
    ]);
    const agentOf: { agent?: acp.ClientContext; session?: string } = {};
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      async () => {
        await agentOf.agent?.notify("session/cancel", { sessionId: agentOf.session ?? "" });
        return { outcome: { outcome: "cancelled" } };
      },
      async (agent) => {
        agentOf.agent = agent;
        await agent.request("initialize", { protocolVersion: 1 });
        const session = await newSession(agent, workspace);
        agentOf.session = session.sessionId;
        const cancelled = await prompt(agent, session.sessionId, "make it");
        const next = await prompt(agent, session.sessionId, "and now?");
        return { cancelled, next };
      },
    );
    expect(value).toEqual({
      cancelled: { stopReason: "cancelled" },
      next: { stopReason: "end_turn" },
    });
    expect(run.permissions).toHaveLength(1);
    expect(existsSync(join(workspace, "made.txt"))).toBe(false);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: "aborted before execution",
        isError: true,
      },
    ]);
    expect(invalidLines(run.lines)).toEqual([]);
    expect(server.rejections).toEqual([]);
  });

  it("offers the session modes, and in plan mode refuses an edit with a receipt that says so", async () => {
    const edit = {
      id: "toolu_1",
      name: "edit",
      input: { path: "notes.txt", oldText: "hello", newText: "bye" },
    };
    const { workspace, options, server } = await setup([
      stream(turn({ calls: [edit] })),
      stream(turn({ text: "planned" })),
    ]);
    await writeFile(join(workspace, "notes.txt"), "hello\n");
    const { value } = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      const session = await newSession(agent, workspace);
      const unknown = await agent
        .request("session/set_mode", { sessionId: session.sessionId, modeId: "yolo" })
        .then(
          () => "accepted",
          (error: Error) => error.message,
        );
      await agent.request("session/set_mode", { sessionId: session.sessionId, modeId: "plan" });
      const answer = await prompt(agent, session.sessionId, "change it");
      return { session, unknown, answer };
    });
    expect(value.session.modes).toEqual({
      currentModeId: "code",
      availableModes: [
        { id: "code", name: "Code", description: "The approval rules as they are" },
        { id: "ask", name: "Ask", description: expect.any(String) },
        { id: "plan", name: "Plan", description: expect.any(String) },
      ],
    });
    expect(value.unknown).toContain('no mode "yolo"');
    expect(value.answer).toEqual({ stopReason: "end_turn" });
    expect(await readFile(join(workspace, "notes.txt"), "utf8")).toBe("hello\n");
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: expect.stringMatching(/^the session is in plan mode: edit /),
        isError: true,
      },
    ]);
    expect(systemText(server.requests[0]?.body)).toContain("The session is in plan mode");
  });

  it("loads a session the CLI wrote, replaying it as updates, and goes on from it", async () => {
    const { workspace, options, server, home } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "read", input: { path: "notes.txt" } }] })),
      stream(turn({ text: "It says hello." })),
      stream(turn({ text: "Still hello." })),
    ]);
    await writeFile(join(workspace, "notes.txt"), "hello\n");
    expect((await runBin(["what do the notes say?"], options)).code).toBe(0);
    const [file] = await sessionFiles(home);
    const sessionId = basename(file ?? "", ".jsonl");
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent, seen) => {
        const init = await agent.request("initialize", { protocolVersion: 1 });
        const loaded = await agent.request("session/load", {
          sessionId,
          cwd: workspace,
          mcpServers: [],
        });
        const replayed = seen.updates.length;
        const missing = await agent
          .request("session/load", { sessionId: "nope", cwd: workspace, mcpServers: [] })
          .then(
            () => "loaded",
            (error: Error) => error.message,
          );
        const answer = await prompt(agent, sessionId, "and now?");
        return { init, loaded, replayed, missing, answer };
      },
    );
    expect(value.init.agentCapabilities?.loadSession).toBe(true);
    expect(value.loaded.modes?.currentModeId).toBe("code");
    const path = join(workspace, "notes.txt");
    expect(updatesOf(run.updates.slice(0, value.replayed))).toEqual([
      {
        sessionUpdate: "user_message_chunk",
        content: { type: "text", text: "what do the notes say?" },
      },
      {
        sessionUpdate: "tool_call",
        toolCallId: "toolu_1",
        title: "read notes.txt",
        kind: "read",
        status: "pending",
        locations: [{ path }],
        rawInput: { path: "notes.txt" },
      },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "toolu_1",
        status: "completed",
        content: [
          { type: "content", content: { type: "text", text: expect.stringContaining("hello") } },
        ],
        rawOutput: { content: expect.stringContaining("hello"), isError: false },
      },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "It says hello." } },
    ]);
    expect(value.missing).toContain("nope");
    expect(value.answer).toEqual({ stopReason: "end_turn" });
    expect(toolResults(server.requests[2]?.body ?? {})).toEqual([
      { id: "toolu_1", content: expect.stringContaining("hello"), isError: false },
    ]);
    expect(invalidLines(run.lines)).toEqual([]);
    expect(server.rejections).toEqual([]);
  });
});

describe("mini-agent acp with the editor's MCP servers", () => {
  it("connects an editor-passed stdio server (the reference server) and uses its tool in a turn", async () => {
    const echo = { id: "toolu_1", name: "mcp__everything__echo", input: { message: "hi there" } };
    const { workspace, options, server } = await setup([
      stream(turn({ calls: [echo] })),
      stream(turn({ text: "echoed" })),
    ]);
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      () => select("allow_once"),
      async (agent) => {
        const init = await agent.request("initialize", { protocolVersion: 1 });
        const session = await agent.request("session/new", {
          cwd: workspace,
          mcpServers: [
            {
              name: "everything",
              command: process.execPath,
              args: [everythingServer(), "stdio"],
              env: [],
            },
          ],
        });
        const answer = await prompt(agent, session.sessionId, "echo it");
        const sse = await agent
          .request("session/new", {
            cwd: workspace,
            mcpServers: [{ type: "sse", name: "old", url: "http://127.0.0.1:9/sse", headers: [] }],
          })
          .then(
            () => "opened",
            (error: Error) => error.message,
          );
        const stdio = { command: "true", args: [], env: [] };
        const twice = await agent
          .request("session/new", {
            cwd: workspace,
            mcpServers: [
              { name: "a", ...stdio },
              { name: "a", ...stdio },
            ],
          })
          .then(
            () => "opened",
            (error: Error) => error.message,
          );
        return { init, answer, sse, twice };
      },
    );
    expect(value.init.agentCapabilities?.mcpCapabilities).toEqual({ http: true, sse: false });
    expect(value.answer).toEqual({ stopReason: "end_turn" });
    expect(run.permissions.map((request) => request.toolCall.toolCallId)).toEqual(["toolu_1"]);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "Echo: hi there", isError: false },
    ]);
    expect(value.sse).toContain("SSE is not supported");
    expect(value.twice).toContain(`the editor's mcpServers: two servers are named "a"`);
    expect(invalidLines(run.lines)).toEqual([]);
    expect(server.rejections).toEqual([]);
  }, 30_000);

  it("skips the project's untrusted .mcp.json server and says so in an update", async () => {
    const { workspace, options, server } = await setup([stream(turn({ text: "ok" }))]);
    const marker = join(workspace, "ran.txt");
    await writeFile(
      join(workspace, ".mcp.json"),
      JSON.stringify({ mcpServers: { local: { command: "touch", args: [marker] } } }),
    );
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const session = await newSession(agent, workspace);
        return await prompt(agent, session.sessionId, "hi");
      },
    );
    expect(value).toEqual({ stopReason: "end_turn" });
    expect(existsSync(marker)).toBe(false);
    expect(updatesOf(run.updates)[0]).toEqual({
      sessionUpdate: "agent_message_chunk",
      content: {
        type: "text",
        text: expect.stringMatching(/^mini-agent: MCP server "local": .*not trusted/),
      },
    });
    expect(server.rejections).toEqual([]);
  });
});

const isStatus = (update: acp.SessionUpdate, status: string) =>
  update.sessionUpdate === "tool_call_update" && update.status === status;
