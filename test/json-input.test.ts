import { basename } from "node:path";
import { describe, expect, it } from "vitest";
import { approvalTimeoutReason, inputEndedReason } from "../src/cli/json-input.js";
import { readSession } from "../src/session/session.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { assertValidHistory } from "../src/testing/history.js";
import { runBin, sessionFiles, sessionRecords, toolResults, useCliSetup } from "./support/cli.js";
import { checkLine, drive, protocolLines } from "./support/stream-json.js";

const setup = useCliSetup();
const jsonFlags = ["--input-format", "stream-json", "--output-format", "stream-json"];

const user = (text: string) => JSON.stringify({ type: "user", text });
const decide = (id: string, decision: "allow" | "deny") =>
  JSON.stringify({ type: "approval", id, decision });
const bashTurn = (id: string, command: string) =>
  stream(turn({ calls: [{ id, name: "bash", input: { command } }] }));
const usage = { version: 1, type: "usage", usage: { inputTokens: 10, outputTokens: 5 } };

describe("--input-format stream-json", () => {
  it("closes a pending approval_request with an approval event when SIGTERM stops the run", async () => {
    const { server, home, options } = await setup([bashTurn("toolu_s", "make build")]);
    const run = await drive([...jsonFlags, "--sandbox", "off"], options, [user("build")], (line) =>
      line.type === "approval_request" ? "SIGTERM" : [],
    );
    expect(run.code).toBe(143);
    const closing = {
      version: 1,
      type: "approval",
      id: "toolu_s",
      name: "bash",
      approved: false,
      by: "interrupted",
    };
    expect(
      run.lines.filter((line) => line.type.startsWith("approval") || line.type === "tool_result"),
    ).toEqual([
      expect.objectContaining({ type: "approval_request", id: "toolu_s" }),
      closing,
      {
        version: 1,
        type: "tool_result",
        id: "toolu_s",
        content: "aborted before execution",
        isError: true,
      },
    ]);
    expect(server.requests).toHaveLength(1);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((record) => record.type === "approval")).toEqual([
      { type: "approval", toolCallId: "toolu_s", tool: "bash", approved: false, by: "interrupted" },
    ]);
  }, 30_000);

  it("holds a two-turn session over stdin and stdout, approving one bash call and denying another", async () => {
    const { server, home, workspace, options } = await setup([
      bashTurn("toolu_a", "echo approved | tee approved.txt"),
      stream(turn({ text: ["Ran it."] })),
      bashTurn("toolu_b", "rm -rf build"),
      stream(turn({ text: ["Not allowed, fine."] })),
    ]);
    let results = 0;
    const run = await drive(
      [...jsonFlags, "--sandbox", "off"],
      options,
      [user("run echo")],
      (line) => {
        if (line.type === "approval_request")
          return [decide(line.id, line.id === "toolu_a" ? "allow" : "deny")];
        if (line.type !== "result") return [];
        results++;
        return results === 1 ? [user("now remove build")] : "end";
      },
    );
    expect(run.code).toBe(0);
    const [file] = await sessionFiles(home);
    const sessionId = basename(file ?? "", ".jsonl");
    const ran = toolResults(server.requests[1]?.body ?? {});
    expect(ran).toEqual([
      { id: "toolu_a", content: expect.stringMatching(/^approved\n/), isError: false },
    ]);
    const denied = toolResults(server.requests[3]?.body ?? {}).at(-1);
    expect(denied).toEqual({ id: "toolu_b", content: "the user denied this call", isError: true });
    const request = (id: string, command: string) => ({
      version: 1,
      type: "approval_request",
      id,
      name: "bash",
      input: { command },
      reason: expect.any(String),
      timeoutSeconds: 300,
    });
    const totals = (n: number) => ({
      inputTokens: 10 * n,
      outputTokens: 5 * n,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(run.lines).toEqual([
      {
        version: 1,
        type: "session",
        id: sessionId,
        model: "claude-sonnet-5-5",
        workspace,
        sandbox: "off",
      },
      usage,
      {
        version: 1,
        type: "tool_call",
        id: "toolu_a",
        name: "bash",
        input: { command: "echo approved | tee approved.txt" },
      },
      request("toolu_a", "echo approved | tee approved.txt"),
      { version: 1, type: "approval", id: "toolu_a", name: "bash", approved: true, by: "user" },
      { version: 1, type: "tool_start", id: "toolu_a" },
      { version: 1, type: "bash_change", id: "toolu_a", paths: ["approved.txt"] },
      { version: 1, type: "tool_result", id: "toolu_a", content: ran[0]?.content, isError: false },
      { version: 1, type: "text", text: "Ran it." },
      usage,
      {
        version: 1,
        type: "result",
        status: "completed",
        text: "Ran it.",
        sessionId,
        usage: totals(2),
        denied: [],
      },
      usage,
      {
        version: 1,
        type: "tool_call",
        id: "toolu_b",
        name: "bash",
        input: { command: "rm -rf build" },
      },
      request("toolu_b", "rm -rf build"),
      { version: 1, type: "approval", id: "toolu_b", name: "bash", approved: false, by: "user" },
      {
        version: 1,
        type: "tool_result",
        id: "toolu_b",
        content: "the user denied this call",
        isError: true,
      },
      { version: 1, type: "text", text: "Not allowed, fine." },
      usage,
      {
        version: 1,
        type: "result",
        status: "completed",
        text: "Not allowed, fine.",
        sessionId,
        usage: totals(4),
        denied: [{ id: "toolu_b", name: "bash", by: "user" }],
      },
    ]);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((record) => record.type === "approval")).toEqual([
      { type: "approval", toolCallId: "toolu_a", tool: "bash", approved: true, by: "user" },
      { type: "approval", toolCallId: "toolu_b", tool: "bash", approved: false, by: "user" },
    ]);
    assertValidHistory((await readSession(file ?? "")).messages);
  });

  it("denies a call whose approval request has no answer in time, and records why", async () => {
    const { server, home, options } = await setup([
      bashTurn("toolu_t", "make"),
      stream(turn({ text: ["No answer came."] })),
    ]);
    const run = await drive(
      [...jsonFlags, "--sandbox", "off", "--approval-timeout", "0.5"],
      options,
      [user("build it")],
      (line) => (line.type === "result" ? "end" : []),
    );
    expect(run.code).toBe(0);
    const reason = approvalTimeoutReason(0.5);
    expect(reason).toBe(
      "no answer to the approval request came within 0.5 s; the call did not run",
    );
    expect(
      run.lines.filter((line) => line.type.startsWith("approval") || line.type === "tool_result"),
    ).toEqual([
      expect.objectContaining({ type: "approval_request", id: "toolu_t", timeoutSeconds: 0.5 }),
      {
        version: 1,
        type: "approval",
        id: "toolu_t",
        name: "bash",
        approved: false,
        by: "approval-timeout",
      },
      { version: 1, type: "tool_result", id: "toolu_t", content: reason, isError: true },
    ]);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_t", content: reason, isError: true },
    ]);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((record) => record.type === "approval")).toEqual([
      {
        type: "approval",
        toolCallId: "toolu_t",
        tool: "bash",
        approved: false,
        by: "approval-timeout",
      },
    ]);
  });

  it("skips each bad input line with one error event, keeps the good ones, and ends at the end of stdin", async () => {
    const { server, options } = await setup([
      bashTurn("toolu_e", "ls /"),
      stream(turn({ text: ["Done."] })),
    ]);
    const input = [
      "not json",
      JSON.stringify({ type: "user" }),
      decide("toolu_x", "allow"),
      "",
      user("list files"),
    ].join("\n");
    const run = await runBin([...jsonFlags, "--sandbox", "off"], {
      ...options,
      input: `${input}\n`,
    });
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((line) => checkLine(JSON.parse(line) as unknown, line));
    const error = (message: string) => ({ version: 1, type: "error", message });
    expect(lines.slice(0, 3)).toEqual([
      error("input line 1 is not JSON; it was skipped"),
      error(
        'input line 2 is not {"type":"user","text":…} or {"type":"approval","id":…,"decision":"allow"|"deny"}; it was skipped',
      ),
      error('input line 3 answers "toolu_x", which no approval request waits for; it was skipped'),
    ]);
    // stdin had ended before the call was asked about: no one is left to answer.
    expect(lines.filter((line) => line.type === "approval")).toEqual([
      {
        version: 1,
        type: "approval",
        id: "toolu_e",
        name: "bash",
        approved: false,
        by: "input-closed",
      },
    ]);
    expect(server.requests[0]?.body.messages).toEqual([
      {
        role: "user",
        content: [{ type: "text", text: "list files", cache_control: { type: "ephemeral" } }],
      },
    ]);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_e", content: inputEndedReason, isError: true },
    ]);
    expect(lines.at(-1)).toMatchObject({ type: "result", status: "completed", text: "Done." });
  });

  it("sends a user line that starts with / to the model as it is: JSON input has no commands", async () => {
    const { server, options } = await setup([
      stream(turn({ text: ["One."] })),
      stream(turn({ text: ["Two."] })),
      stream(turn({ text: ["Three."] })),
    ]);
    const input = [user("/help"), user("/exit"), user("/etc/hosts is odd")].join("\n");
    const run = await runBin(jsonFlags, { ...options, input: `${input}\n` });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    const prompts = server.requests.map((request) => {
      const messages = request.body.messages as { role: string; content: { text?: string }[] }[];
      return messages.at(-1)?.content[0]?.text;
    });
    expect(prompts).toEqual(["/help", "/exit", "/etc/hosts is odd"]);
    const results = protocolLines(run.stdout).filter((line) => line.type === "result");
    expect(results.map((line) => line.type === "result" && line.text)).toEqual([
      "One.",
      "Two.",
      "Three.",
    ]);
  });

  it("refuses --input-format stream-json without stream-json output, and with a task", async () => {
    const { options } = await setup([]);
    const text = await runBin(["--input-format", "stream-json"], options);
    expect(text).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "mini-agent: --input-format stream-json needs --output-format stream-json (approval requests are events)\n",
    });
    const task = await runBin([...jsonFlags, "do it"], options);
    expect(task.code).toBe(2);
    expect(task.stderr).toMatch(/the prompts come on stdin/);
  });
});
