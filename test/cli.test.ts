import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, realpath, symlink, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session/session.js";
import { status, stream, turn } from "../src/testing/anthropic-server.js";
import {
  completion,
  status as openaiStatus,
  stream as openaiStream,
  startOpenAIServer,
} from "../src/testing/openai-server.js";
import { useCleanup } from "./support/cleanup.js";
import { bin, runBin, sessionFiles, toolResults, useCliSetup } from "./support/cli.js";
import { protocolLines } from "./support/stream-json.js";
import { signalWhen } from "./support/until.js";

const setup = useCliSetup();
const track = useCleanup();

describe("mini-agent command", () => {
  it("answers a one-shot task on stdout, exits 0 and writes the session", async () => {
    const { server, home, options } = await setup([stream(turn({ text: ["Hello ", "there."] }))]);
    const run = await runBin(["say hello"], options);
    expect(run).toEqual({ code: 0, stdout: "Hello there.\n", stderr: "" });
    expect(server.requests[0]?.body.model).toBe("claude-sonnet-5-5");
    const [file] = await sessionFiles(home);
    const session = await readSession(file ?? "");
    expect(session.messages).toEqual([
      { role: "user", content: "say hello" },
      { role: "assistant", content: "Hello there.", toolCalls: [] },
    ]);
    expect(await readFile(file ?? "", "utf8")).not.toContain("sk-test-key-0123456789");
  });

  it("delivers a long answer whole to a slow reader on a pipe before it exits", async () => {
    const piece = "y".repeat(65_536);
    const pieces = Array.from({ length: 64 }, () => piece);
    const { options } = await setup([stream(turn({ text: pieces }))]);
    // The reader starts reading a second after the agent has written everything.
    const counted = await new Promise<string>((resolve) => {
      const command = `"${process.execPath}" "${bin}" go | (sleep 1; wc -c)`;
      const child = spawn("sh", ["-c", command], { cwd: options.cwd, env: options.env });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
      });
      child.on("close", () => resolve(out.trim()));
    });
    expect(counted).toBe(String(64 * 65_536 + 1));
  });

  it("keeps the model out of a state folder that lies inside the workspace", async () => {
    const calls = [
      { id: "toolu_1", name: "grep", input: { pattern: "plant the flag" } },
      { id: "toolu_2", name: "find", input: { pattern: "*.jsonl" } },
      {
        id: "toolu_3",
        name: "write",
        input: { path: "state/sessions/forged.jsonl", content: "x" },
      },
    ];
    const { server, workspace, options } = await setup([
      stream(turn({ calls })),
      stream(turn({ text: ["done"] })),
    ]);
    const env = { ...options.env, MINI_AGENT_HOME: join(workspace, "state") };
    const run = await runBin(["plant the flag"], { ...options, env });
    expect(run.code).toBe(0);
    const refused = "path is inside mini-agent's state folder";
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "no matches for plant the flag", isError: false },
      { id: "toolu_2", content: "no files match *.jsonl", isError: false },
      { id: "toolu_3", content: refused, isError: true },
    ]);
  });

  it("prints stream-json v1 events of a tool round, each line valid against the shipped schema", async () => {
    const { home, workspace, options } = await setup([
      stream(
        turn({
          text: ["Reading."],
          calls: [{ id: "toolu_1", name: "read", input: { path: "a.txt" } }],
        }),
      ),
      stream(turn({ text: ["It says hi."] })),
    ]);
    await writeFile(join(workspace, "a.txt"), "hi\n");
    const run = await runBin(
      ["--output-format", "stream-json", "--sandbox", "off", "-p", "read a.txt"],
      options,
    );
    expect(run.code).toBe(0);
    const [file] = await sessionFiles(home);
    const sessionId = basename(file ?? "", ".jsonl");
    const usage = { inputTokens: 10, outputTokens: 5 };
    expect(protocolLines(run.stdout)).toEqual([
      {
        version: 1,
        type: "session",
        id: sessionId,
        model: "claude-sonnet-5-5",
        workspace: await realpath(workspace),
        sandbox: "unused (bash denied)",
      },
      { version: 1, type: "text", text: "Reading." },
      { version: 1, type: "usage", usage },
      { version: 1, type: "tool_call", id: "toolu_1", name: "read", input: { path: "a.txt" } },
      {
        version: 1,
        type: "approval",
        id: "toolu_1",
        name: "read",
        approved: true,
        by: "default-policy",
      },
      { version: 1, type: "tool_start", id: "toolu_1" },
      { version: 1, type: "tool_result", id: "toolu_1", content: "hi", isError: false },
      { version: 1, type: "text", text: "It says hi." },
      { version: 1, type: "usage", usage },
      {
        version: 1,
        type: "result",
        status: "completed",
        text: "It says hi.",
        sessionId,
        usage: { inputTokens: 20, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
        denied: [],
      },
    ]);
  });

  it("prints one json object at the end with status, text, session id and usage", async () => {
    const { home, options } = await setup([stream(turn({ text: ["done"] }))]);
    const run = await runBin(["--output-format", "json", "task"], options);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as Record<string, unknown>;
    const [file] = await sessionFiles(home);
    expect(result).toEqual({
      status: "completed",
      text: "done",
      sessionId: (await readSession(file ?? "")).header.id,
      usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
  });

  it("denies bash without --allow-bash where there is no sandbox, tells the model why, records the decision", async () => {
    const { server, home, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "touch hi" } }] })),
      stream(turn({ text: ["Cannot run it."] })),
    ]);
    // In a working sandbox bash runs without asking (sandbox-boundary-cli.test.ts).
    const run = await runBin(["--sandbox", "off", "run echo"], options);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      '  ✗ bash touch hi: bash is denied by default: run mini-agent with --allow "touch hi" to let the agent run this command (--allow-bash allow…\n',
    );
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content:
          'bash is denied by default: run mini-agent with --allow "touch hi" to let the agent run this command (--allow-bash allows every command)',
        isError: true,
      },
    ]);
    const [file] = await sessionFiles(home);
    const lines = (await readFile(file ?? "", "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.filter((line) => line.type === "approval")).toEqual([
      { type: "approval", toolCallId: "toolu_1", tool: "bash", approved: false, by: "no-terminal" },
    ]);
  });

  it("shows control and bidi characters from the model and tools visibly, on stdout and stderr", async () => {
    const command = "printf 'x'\nrm -rf ~ \x1b]8;;http://e\x07\u202eevil";
    const { options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command } }] })),
      stream(turn({ text: ["\x1b[2J\x1b[31mred\x1b[0m\r\nfake prompt\rreal\u2066"] })),
    ]);
    const run = await runBin(["--sandbox", "off", "task"], options);
    expect(run).toEqual({
      code: 0,
      stdout: "␛[2J␛[31mred␛[0m\nfake prompt␍real<U+2066>\n",
      stderr:
        "  ✗ bash printf 'x'␊rm -rf ~ ␛]8;;http://e␇<U+202E>evil: bash is denied by default: run mini-agent with --allow-bash to let the agent run shell commands (the rules cannot allow…\n",
    });
  });

  it("runs bash with --allow-bash", async () => {
    const { server, options } = await setup([
      stream(
        turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "echo hi from bash" } }] }),
      ),
      stream(turn({ text: ["ran"] })),
    ]);
    const run = await runBin(["--allow-bash", "run echo"], options);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("  ✓ bash echo hi from bash\n");
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "hi from bash\n[exit code 0]", isError: false },
    ]);
  });

  it("on Ctrl-C during a slow tool exits 130 with a receipt for every call, and --continue sends a valid history", async () => {
    const { server, workspace, home, options } = await setup([
      stream(
        turn({
          calls: [
            { id: "toolu_1", name: "bash", input: { command: "touch started; sleep 30" } },
            { id: "toolu_2", name: "ls", input: {} },
          ],
        }),
      ),
      stream(turn({ text: ["continuing"] })),
    ]);
    const run = await runBin(["--allow-bash", "slow task"], {
      ...options,
      // Once the command runs, so that it is the command the interrupt kills.
      started: (child) => signalWhen(child, () => existsSync(join(workspace, "started")), "SIGINT"),
    });
    expect(run.code).toBe(130);
    const [file] = await sessionFiles(home);
    const session = await readSession(file ?? "");
    expect(session.messages.slice(2)).toEqual([
      {
        role: "tool",
        toolCallId: "toolu_1",
        content: "[aborted: the command and its processes were killed]",
        isError: true,
      },
      { role: "tool", toolCallId: "toolu_2", content: "aborted before execution", isError: true },
    ]);
    const next = await runBin(["--continue", "go on"], options);
    expect(next.code).toBe(0);
    expect(next.stdout).toBe("continuing\n");
    expect(server.rejections).toEqual([]);
    expect(toolResults(server.requests[1]?.body ?? {}).map((result) => result.id)).toEqual([
      "toolu_1",
      "toolu_2",
    ]);
  });

  it("records the sandbox in the session header, and warns when bash must run without one", async () => {
    const { home, options } = await setup([
      stream(turn({ text: ["a"] })),
      stream(turn({ text: ["b"] })),
      stream(turn({ text: ["c"] })),
    ]);
    expect((await runBin(["--allow-bash", "--sandbox", "off", "task"], options)).stderr).toBe("");
    const noBwrap = join(home, "bin");
    await mkdir(noBwrap);
    await symlink("/bin/bash", join(noBwrap, "bash"));
    const env = { ...options.env, PATH: noBwrap };
    const run = await runBin(["--allow-bash", "task"], { ...options, env });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      "mini-agent: warning: bash runs without a sandbox: bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)\n",
    );
    // Without bwrap and with no one to ask, bash cannot run: no warning, no sandbox recorded.
    expect(await runBin(["task"], { ...options, env })).toMatchObject({ code: 0, stderr: "" });
    const headers = await Promise.all(
      (await sessionFiles(home)).map(async (file) => (await readSession(file)).header.sandbox),
    );
    expect(headers.sort()).toEqual(["off", "unavailable", "unused (bash denied)"]);
    const bad = await runBin(["--sandbox", "maybe", "task"], options);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('mini-agent: unknown sandbox mode "maybe" (auto, required or off)\n');
  });

  it("lists sessions and resumes one across runs", async () => {
    const { server, options } = await setup([
      stream(turn({ text: ["first answer"] })),
      stream(turn({ text: ["second answer"] })),
      stream(turn({ text: ["third answer"] })),
    ]);
    expect((await runBin(["first task"], options)).code).toBe(0);
    expect((await runBin(["--continue", "second task"], options)).code).toBe(0);
    const listing = await runBin(["--sessions"], options);
    expect(listing.code).toBe(0);
    const [row, ...others] = listing.stdout.trim().split("\n");
    expect(others).toEqual([]);
    expect(row).toMatch(/^(\S+) {2}\d{4}-\d\d-\d\d \d\d:\d\d +[\d.]+ [KMG]?B {2}first task$/);
    const id = row?.split(" ")[0] ?? "";
    expect((await runBin(["--resume", id, "third task"], options)).code).toBe(0);
    const sent = server.requests[2]?.body.messages as {
      role: string;
      content: { text?: string }[];
    }[];
    expect(sent.map((message) => `${message.role}: ${message.content[0]?.text}`)).toEqual([
      "user: first task",
      "assistant: first answer",
      "user: second task",
      "assistant: second answer",
      "user: third task",
    ]);
  });

  it("explains a missing key, an unknown flag and an unknown session id with exit code 2", async () => {
    const { options } = await setup([]);
    const noKey = await runBin(["task"], {
      ...options,
      env: { ...options.env, ANTHROPIC_API_KEY: "" },
    });
    expect(noKey).toEqual({
      code: 2,
      stdout: "",
      stderr: "mini-agent: ANTHROPIC_API_KEY is not set: export your Anthropic API key in it\n",
    });
    const badFlag = await runBin(["--frobnicate", "task"], options);
    expect(badFlag).toEqual({
      code: 2,
      stdout: "",
      stderr: "mini-agent: unknown option --frobnicate (mini-agent --help lists the options)\n",
    });
    const badId = await runBin(["--resume", "nope", "task"], options);
    expect(badId).toEqual({
      code: 2,
      stdout: "",
      stderr: 'mini-agent: no session "nope" for this folder (mini-agent --sessions lists them)\n',
    });
    const noTask = await runBin([], options);
    expect(noTask.code).toBe(2);
    expect(noTask.stderr).toBe(
      "mini-agent: no task: give one as an argument, with --print, or on stdin\n",
    );
  });

  it("says which address it could not reach and exits 1", async () => {
    const { options } = await setup([]);
    const run = await runBin(["--base-url", "http://127.0.0.1:1", "task"], options);
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "mini-agent: could not reach http://127.0.0.1:1 (Connection error): check --base-url and the network\n",
    });
  });

  it("reports a provider error in one line with its status and exits 1", async () => {
    const { options } = await setup([
      status(400, undefined, "messages: text content blocks must be non-empty"),
    ]);
    const run = await runBin(["task"], options);
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "mini-agent: provider error 400 invalid_request_error: messages: text content blocks must be non-empty (the provider rejected the request)\n",
    });
  });

  it("exits 3 at the turn limit", async () => {
    const { options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "ls", input: {} }] })),
    ]);
    const run = await runBin(["--max-turns", "1", "loop"], options);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("stopped: turn limit reached (--max-turns)");
  });

  it("takes the task from stdin when it is not a terminal", async () => {
    const { server, options } = await setup([stream(turn({ text: ["ok"] }))]);
    const run = await runBin([], { ...options, input: "task from a pipe\n" });
    expect(run.code).toBe(0);
    expect(server.requests[0]?.body.messages).toEqual([
      {
        role: "user",
        content: [{ type: "text", text: "task from a pipe", cache_control: { type: "ephemeral" } }],
      },
    ]);
  });

  it("runs a task with --provider openai against a Chat Completions server", async () => {
    const server = await startOpenAIServer([
      openaiStream(completion({ calls: [{ id: "call_1", name: "ls", input: {} }] })),
      openaiStream(completion({ text: ["listed"] })),
      openaiStatus(400, "model not found"),
    ]);
    track(server);
    const { options } = await setup([]);
    const env = { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${server.url}/v1` };
    const run = await runBin(["--provider", "openai", "--model", "llama3.1", "list files"], {
      ...options,
      env,
    });
    expect(run).toEqual({ code: 0, stdout: "listed\n", stderr: "  ✓ ls\n" });
    expect(server.rejections).toEqual([]);
    expect(server.requests[0]?.body.model).toBe("llama3.1");
    const failed = await runBin(["--provider", "openai", "--model", "nope", "x"], {
      ...options,
      env,
    });
    expect(failed).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "mini-agent: provider error 400 invalid_request_error: model not found (the provider rejected the request)\n",
    });
    const noModel = await runBin(["--provider", "openai", "x"], { ...options, env });
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toBe(
      "mini-agent: --provider openai needs --model (or MINI_AGENT_MODEL), e.g. --model gpt-5 or --model llama3.1\n",
    );
    const noKey = await runBin(["--provider", "openai", "--model", "gpt-5", "x"], {
      ...options,
      env: { ...env, OPENAI_BASE_URL: "" },
    });
    expect(noKey).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "mini-agent: OPENAI_API_KEY is not set: export it, or point --base-url (OPENAI_BASE_URL) at a local server\n",
    });
  });

  it("prints its version and help without a key", async () => {
    const { options } = await setup([]);
    const env = { PATH: process.env.PATH };
    const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    expect(await runBin(["--version"], { ...options, env })).toEqual({
      code: 0,
      stdout: `${pkg.version}\n`,
      stderr: "",
    });
    const help = await runBin(["--help"], { ...options, env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      "Exit codes: 0 done, 1 error, 2 usage or configuration, 3 turn limit reached,\n4 compaction failed, 5 token budget reached, 130 interrupted (Ctrl-C), 143 SIGTERM, 129 SIGHUP, 141 stdout closed.",
    );
  });
});
