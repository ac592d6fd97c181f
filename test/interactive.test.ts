import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session/session.js";
import { startAnthropicServer, stream, turn } from "../src/testing/anthropic-server.js";
import { useCleanup } from "./support/cleanup.js";
import {
  cliEnv,
  runBin,
  sessionFiles,
  sessionRecords,
  toolResults,
  useCliSetup,
} from "./support/cli.js";
import { converse, hasScript } from "./support/pty.js";
import { useTempDirs } from "./support/temp.js";

/** The interactive session on a real terminal: `script` gives the CLI a pseudo-terminal. */

const tempDir = useTempDirs();
const track = useCleanup();
const setup = useCliSetup();
const question = "[y/N/a] (a = always";
/** After a no: why, for the model (Enter for none). */
const whyNot = "why not (for the model; Enter for none)? ";
/**
 * Read-only commands run without a question in the sandbox, and without it too when every file
 * they read or write is in the workspace (`echo`, `true`, `echo x > f`): these tests ask about
 * commands that change files (`touch`, `tee`), with the sandbox off.
 */
const noSandbox = ["--sandbox", "off"];

/** The text of the last block of a request: the prompt that request carries. */
function lastText(body: Record<string, unknown> | undefined): unknown {
  const messages = (body?.messages ?? []) as { content: { text?: string }[] }[];
  return messages.at(-1)?.content.at(-1)?.text;
}

describe.skipIf(!hasScript)("interactive session on a terminal", () => {
  it("answers prompts, asks before bash, records the answer, and leaves on /exit", async () => {
    const server = track(
      await startAnthropicServer([
        stream(turn({ text: ["Hello there."] })),
        stream(
          turn({
            calls: [
              { id: "toolu_1", name: "bash", input: { command: "echo from-bash | tee out.txt" } },
            ],
          }),
        ),
        stream(turn({ text: ["It printed from-bash."] })),
      ]),
    );
    const home = await tempDir();
    const workspace = await tempDir();
    const { code, screen } = await converse(
      cliEnv(home, server.url),
      workspace,
      [
        ["› ", "hi\r"],
        ["Hello there.", ""],
        ["› ", "run it\r"],
        [question, "y\r"],
        ["It printed from-bash.", ""],
        ["› ", "/exit\r"],
      ],
      noSandbox,
    );
    expect(code).toBe(0);
    expect(screen).toContain("Allow bash: echo from-bash | tee out.txt");
    expect(screen).toContain("✓ bash echo from-bash | tee out.txt");
    expect(server.rejections).toEqual([]);
    const dir = join(home, "state", "sessions");
    const [folder] = await readdir(dir);
    const [file] = await readdir(join(dir, folder ?? ""));
    const path = join(dir, folder ?? "", file ?? "");
    const records = (await readFile(path, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records.filter((record) => record.type === "approval")).toEqual([
      { type: "approval", toolCallId: "toolu_1", tool: "bash", approved: true, by: "user" },
    ]);
    const session = await readSession(path);
    expect(session.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "hi",
      "run it",
    ]);
    const result = session.messages.find((m) => m.role === "tool");
    expect(result).toMatchObject({
      toolCallId: "toolu_1",
      content: "from-bash\n[exit code 0]",
      isError: false,
    });
  });

  it("sends the reason given after a no to the model and records it", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "npm install" } }] })),
      stream(turn({ text: ["Using pnpm."] })),
    ]);
    const { code, screen } = await converse(
      options.env,
      workspace,
      [
        ["› ", "install\r"],
        [question, "\r"],
        [whyNot, "use pnpm instead\r"],
        ["Using pnpm.", ""],
        ["› ", "/exit\r"],
      ],
      noSandbox,
    );
    expect(code).toBe(0);
    expect(screen).toContain(
      "Allow bash: npm install\r\n  (no rule allows npm install)\r\n[y/N/a] (a = always, saves allow npm install (exactly))? ",
    );
    expect(server.rejections).toEqual([]);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "the user denied this call: use pnpm instead", isError: true },
    ]);
    const [file] = await sessionFiles(home);
    expect((await sessionRecords(file ?? "")).filter((r) => r.type === "approval")).toEqual([
      {
        type: "approval",
        toolCallId: "toolu_1",
        tool: "bash",
        approved: false,
        by: "user",
        reason: "use pnpm instead",
      },
    ]);
  });

  it("offers the prefix of a command on always, and saves the one chosen", async () => {
    const call = (id: string, command: string) => ({ id, name: "bash", input: { command } });
    const { workspace, home, options } = await setup([
      stream(turn({ calls: [call("toolu_1", "touch one -c")] })),
      stream(turn({ calls: [call("toolu_2", "touch one two")] })),
      stream(turn({ text: ["Both ran."] })),
    ]);
    const { code, screen } = await converse(
      options.env,
      workspace,
      [
        ["› ", "touch\r"],
        [question, "a\r"],
        ["save [1] allow touch one -c (exactly) or [2] allow touch one? [1/2] ", "2\r"],
        ["Both ran.", ""],
        ["› ", "/exit\r"],
      ],
      noSandbox,
    );
    expect(code).toBe(0);
    expect(screen.split("[y/N/a]").length).toBe(2);
    const [file] = await sessionFiles(home);
    const approvals = (await sessionRecords(file ?? "")).filter((r) => r.type === "approval");
    expect(approvals.map((r) => `${r.toolCallId} ${r.approved} ${r.by}`)).toEqual([
      "toolu_1 true user-always (saved: allow touch one)",
      "toolu_2 true rule:allow touch one",
    ]);
  });

  it("asks twelve times in one turn without a listener warning", async () => {
    const { server, workspace, home, options } = await setup([
      stream(
        turn({
          calls: Array.from({ length: 12 }, (_, i) => ({
            id: `toolu_${i + 1}`,
            name: "bash",
            input: { command: `touch ${i + 1}` },
          })),
        }),
      ),
      stream(turn({ text: ["All denied."] })),
    ]);
    const { code, screen } = await converse(
      options.env,
      workspace,
      [
        ["› ", "run them\r"],
        ...Array.from({ length: 12 }, (): [string, string][] => [
          [question, "n\r"],
          [whyNot, "\r"],
        ]).flat(),
        ["All denied.", ""],
        ["› ", "/exit\r"],
      ],
      noSandbox,
    );
    expect(code).toBe(0);
    expect(screen).not.toContain("MaxListenersExceededWarning");
    expect(screen).not.toContain("Warning");
    expect(server.rejections).toEqual([]);
    const [file] = await sessionFiles(home);
    const approvals = (await sessionRecords(file ?? "")).filter((r) => r.type === "approval");
    expect(approvals.map((r) => `${r.toolCallId} ${r.approved} ${r.by}`)).toEqual(
      Array.from({ length: 12 }, (_, i) => `toolu_${i + 1} false user`),
    );
    expect(Array.from({ length: 12 }, (_, i) => existsSync(join(workspace, `${i + 1}`)))).toEqual(
      Array.from({ length: 12 }, () => false),
    );
  });

  it("Ctrl-C at the bash question cancels it with the turn, and the next typed line runs", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "touch no" } }] })),
      stream(turn({ text: ["Ran the line after."] })),
    ]);
    const { code } = await converse(
      options.env,
      workspace,
      [
        ["› ", "run it\r"],
        [question, "\x03"],
        ["› ", "the line after\r"],
        ["Ran the line after.", ""],
        ["› ", "/exit\r"],
      ],
      noSandbox,
    );
    expect(code).toBe(0);
    expect(server.rejections).toEqual([]);
    expect(lastText(server.requests[1]?.body)).toBe("the line after");
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "aborted before execution", isError: true },
    ]);
    expect(existsSync(join(workspace, "no"))).toBe(false);
    const [file] = await sessionFiles(home);
    expect((await readSession(file ?? "")).repaired).toBe(0);
  });

  // The three below ask about commands that, in a working sandbox, now run without a question.
  it("Ctrl-D at the bash question records a denial by the user, ends the turn and leaves with 130, as interrupted", async () => {
    const { server, workspace, home, options } = await setup([
      stream(
        turn({
          calls: [
            { id: "toolu_1", name: "bash", input: { command: "touch should-not-run" } },
            { id: "toolu_2", name: "ls", input: {} },
          ],
        }),
      ),
      stream(turn({ text: ["Resumed."] })),
    ]);
    const { code } = await converse(
      options.env,
      workspace,
      [
        ["› ", "run it\r"],
        [question, "\x04"],
      ],
      noSandbox,
    );
    expect(code).toBe(130);
    expect(existsSync(join(workspace, "should-not-run"))).toBe(false);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((r) => r.type === "approval")).toEqual([
      { type: "approval", toolCallId: "toolu_1", tool: "bash", approved: false, by: "user" },
    ]);
    const session = await readSession(file ?? "");
    expect(session.repaired).toBe(0);
    expect(session.messages.slice(2)).toEqual([
      {
        role: "tool",
        toolCallId: "toolu_1",
        content: "the user closed the input (Ctrl-D) instead of answering; the call did not run",
        isError: true,
      },
      { role: "tool", toolCallId: "toolu_2", content: "aborted before execution", isError: true },
    ]);
    const next = await runBin(["--continue", "go on"], options);
    expect(next).toEqual({ code: 0, stdout: "Resumed.\n", stderr: "" });
    expect(server.rejections).toEqual([]);
  });

  it("shows a line typed while a turn runs as the next prompt, then runs it", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: ["Thinking", " slowly", " about", " it", "."] }), { frameDelayMs: 150 }),
      stream(turn({ text: ["Second answer."] })),
    ]);
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", "first\r"],
      ["Thinking", "typed ahead\r"],
      ["about it.", ""],
      ["› typed ahead", ""],
      ["Second answer.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(screen).toContain("› typed ahead");
    expect(lastText(server.requests[1]?.body)).toBe("typed ahead");
  });

  it("shows a command's control characters in the question instead of obeying them", async () => {
    const spoof = "touch pwned-by-spoof #\x1b[2K\rAllow bash: ls -la";
    const { workspace, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: spoof } }] })),
      stream(turn({ text: ["Denied."] })),
    ]);
    const { code, screen } = await converse(
      options.env,
      workspace,
      [
        ["› ", "list\r"],
        [question, "n\r"],
        [whyNot, "\r"],
        ["Denied.", ""],
        ["› ", "/exit\r"],
      ],
      noSandbox,
    );
    expect(code).toBe(0);
    expect(screen).toContain("Allow bash: touch pwned-by-spoof #␛[2K␍Allow bash: ls -la\r\n");
    expect(screen).toContain(
      "✗ bash touch pwned-by-spoof #␛[2K␍Allow bash: ls -la: the user denied this call",
    );
    expect(screen).not.toContain("\x1b[2K\rAllow");
    expect(existsSync(join(workspace, "pwned-by-spoof"))).toBe(false);
  });

  it("shows a command padded with blanks whole, so its start cannot be pushed out of sight", async () => {
    const padded = `touch pwned-by-padding;${" ".repeat(20_000)}git status`;
    const { workspace, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: padded } }] })),
      stream(turn({ text: ["Denied."] })),
    ]);
    const { code, screen } = await converse(
      options.env,
      workspace,
      [
        ["› ", "status\r"],
        [question, "n\r"],
        [whyNot, "\r"],
        ["Denied.", ""],
        ["› ", "/exit\r"],
      ],
      noSandbox,
    );
    expect(code).toBe(0);
    expect(screen).toContain(
      `Allow bash:\r\n  │ touch pwned-by-padding;[20000 blanks]git status\r\n  (no rule allows touch pwned-by-padding)\r\n(1 line, 20033 characters) [y/N/a] (a = always, saves allow touch pwned-by-padding (exactly))? `,
    );
    expect(existsSync(join(workspace, "pwned-by-padding"))).toBe(false);
  });

  it("fails the test, showing the screen, when an expected text never comes", async () => {
    const { workspace, options } = await setup([]);
    await expect(
      converse(options.env, workspace, [["never shown", ""]], ["--version"]),
    ).rejects.toThrow(/^exited 0 before "never shown":\n/);
  });
});
