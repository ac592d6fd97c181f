import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { invalidLines, select, withAcpAgent } from "./support/acp.js";
import { runBin, sessionFiles, toolResults, useCliSetup } from "./support/cli.js";

const setup = useCliSetup();

const newSession = (agent: acp.ClientContext, cwd: string) =>
  agent.request("session/new", { cwd, mcpServers: [] });

const prompt = (agent: acp.ClientContext, sessionId: string, text: string) =>
  agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

const updatesOf = (updates: acp.SessionNotification[]) => updates.map((note) => note.update);

const noAnswer = (): acp.RequestPermissionResponse => {
  throw new Error("no permission request was expected");
};

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
        loadSession: false,
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
        mcpCapabilities: { http: false, sse: false },
      },
      agentInfo: { name: "mini-agent", version: expect.any(String) },
      authMethods: [],
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
      { id: "toolu_1", name: "bash", input: { command: "echo one > one.txt" } },
      { id: "toolu_2", name: "bash", input: { command: "echo two > two.txt" } },
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
});
