import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session/session.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, systemText, toolResults, useCliSetup } from "./support/cli.js";
import { afterBanner, converse, hasScript, screenOf } from "./support/pty.js";

/**
 * The terminal view, driven in a real pseudo-terminal (`script`), and the same runs piped.
 * Durations vary: `N.Ns` stands for them.
 */

const setup = useCliSetup();
const numbered = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
const answer = "Here:\n```ts\nconst x = 1;\n```\n- an **item**\n";
/** A read of a 20-line file, then an answer in Markdown; the first reply is slow to start. */
const readThenAnswer = () => [
  stream(turn({ calls: [{ id: "toolu_1", name: "read", input: { path: "notes.txt" } }] }), {
    frameDelayMs: 60,
  }),
  stream(turn({ text: ["Here:\n```t", "s\nconst x = 1;\n``", "`\n- an **item**\n"] })),
];
/** The text of the last block of a request: the prompt that request carries. */
function lastPrompt(body: Record<string, unknown> | undefined): unknown {
  const messages = (body?.messages ?? []) as { content: { text?: string }[] }[];
  return messages.at(-1)?.content.at(-1)?.text;
}
const durations = (lines: string[]) => lines.map((line) => line.replace(/\d+\.\ds/g, "N.Ns"));

describe("formatting helpers of the terminal tests", () => {
  it("screenOf overwrites after a carriage return and drops escapes", () => {
    expect(screenOf("abc\rX\r\n\x1b[1mbold\x1b[22m   \r\n\r\n")).toEqual(["Xbc", "bold"]);
    expect(screenOf("⠋ waiting\r         \rtext\r\n")).toEqual(["text"]);
  });
});

describe.skipIf(!hasScript)("the terminal view", () => {
  it("shows the indicator, the tool line with its duration and folded output, the answer rendered, then the status line", async () => {
    const { server, workspace, home, options } = await setup(readThenAnswer());
    await writeFile(join(workspace, "notes.txt"), `${numbered}\n`);
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", "read it\r"],
      ["session ", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(screen).toMatch(/\r⠋ waiting for the model · 0\.\ds/);
    // TERM=dumb: no colour, and nothing else that needs an escape sequence.
    expect(screen).not.toContain(String.fromCharCode(27));
    expect(screen).toMatch(/\r⠋ read notes\.txt · 0\.\ds| {2}✓ read notes\.txt/);
    expect(durations(afterBanner(screenOf(screen)))).toEqual([
      "› read it",
      "  ✓ read notes.txt · N.Ns",
      "    │ line 1",
      "    │ line 2",
      "    │ line 3",
      "    │ line 4",
      "    │ … 16 more lines",
      "",
      "Here:",
      "┌─ ts",
      "│ const x = 1;",
      "└─",
      "• an **item**",
      "claude-sonnet-5-5 · context 0% of 200k · 0 compactions · tokens in/out: turn 20/10, session 20/10",
      "› /exit",
    ]);
    // The model got the whole result; only the screen folded it.
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: numbered, isError: false },
    ]);
    const [file] = await sessionFiles(home);
    expect((await readSession(file ?? "")).messages.at(-1)).toEqual({
      role: "assistant",
      content: answer,
      toolCalls: [],
    });
  });

  it("piped, the same run is plain text: the answer as written, the bare tool line, nothing else", async () => {
    const { workspace, options } = await setup(readThenAnswer());
    await writeFile(join(workspace, "notes.txt"), `${numbered}\n`);
    const run = await runBin(["read it"], options);
    expect(run).toEqual({ code: 0, stdout: answer, stderr: "  ✓ read notes.txt\n" });
  });

  it("shows none of it for json or stream-json on a terminal", async () => {
    const { workspace, options } = await setup([stream(turn({ text: ["# Hi\n"] }))]);
    const { code, screen } = await converse(
      options.env,
      workspace,
      [],
      ["--output-format", "stream-json", "-p", "hi"],
    );
    expect(code).toBe(0);
    expect(screen).not.toContain("waiting for the model");
    expect(screen).not.toContain("compactions");
    expect(screen).not.toContain("tokens in/out");
    expect(screen).toContain('{"version":1,"type":"text","text":"# Hi\\n"}');
  });

  it("styles with colour on a colour terminal, and never obeys an escape from the model", async () => {
    const { workspace, options } = await setup([
      stream(turn({ text: ["# Title\x1b[31m\n```sh\necho\x1b]0;pwned\x07\n```\n"] })),
    ]);
    const { screen } = await converse({ ...options.env, TERM: "xterm-256color" }, workspace, [
      ["› ", "hi\r"],
      ["session ", ""],
      ["› ", "/exit\r"],
    ]);
    expect(screen).toContain("\x1b[4m\x1b[1mTitle␛[31m\x1b[22m\x1b[24m\r\n");
    expect(screen).toContain(
      "\x1b[2m┌─ sh\x1b[22m\r\n\x1b[2m│\x1b[22m \x1b[36mecho␛]0;pwned␇\x1b[39m\r\n",
    );
    expect(screen).not.toContain("\x1b[31m");
    expect(screen).not.toContain("\x1b]0;");
  });

  it("has no colour with NO_COLOR, and colour with FORCE_COLOR on TERM=dumb", async () => {
    const sgr = new RegExp(`${String.fromCharCode(27)}\\[[\\d;]*m`);
    const script = () => [stream(turn({ text: ["Use `npm test`.\n"] }))];
    const steps: [string, string][] = [
      ["› ", "hi\r"],
      ["session ", ""],
      ["› ", "/exit\r"],
    ];
    const plain = await setup(script());
    const noColour = await converse(
      { ...plain.options.env, TERM: "xterm-256color", NO_COLOR: "1" },
      plain.workspace,
      steps,
    );
    expect(noColour.screen).toContain("Use `npm test`.\r\n");
    expect(noColour.screen).not.toMatch(sgr);
    const forced = await setup(script());
    const colour = await converse(
      { ...forced.options.env, FORCE_COLOR: "1" },
      forced.workspace,
      steps,
    );
    expect(colour.screen).toContain("Use \x1b[36mnpm test\x1b[39m.\r\n");
  });

  it("stops the indicator on Ctrl-C while the model is awaited", async () => {
    const { workspace, options } = await setup([
      stream(turn({ text: ["never"] }), { stallAfter: 0 }),
      stream(turn({ text: ["Second."] })),
    ]);
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", "hi\r"],
      ["waiting for the model · 0.3s", "\x03"],
      ["interrupted", ""],
      ["› ", "again\r"],
      ["Second.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    const afterStop = screen.slice(screen.indexOf("interrupting"), screen.indexOf("› again"));
    expect(afterStop).not.toContain("waiting for the model");
    expect(afterBanner(screenOf(screen)).slice(0, 4)).toEqual([
      "› hi",
      "",
      "mini-agent: interrupting (Ctrl-C again to quit)",
      "interrupted",
    ]);
  });

  it("stops the indicator for the turn once the person types ahead, so it never draws over the typing", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: ["First", " answer."] }), { frameDelayMs: 150 }),
      stream(turn({ text: ["Second."] })),
    ]);
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", "first\r"],
      ["waiting for the model · 0.2s", "typed"],
      ["First answer.", " ahead\r"],
      ["Second.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    // From the typing to the end of that turn (its status line): no indicator drawn.
    const turnOne = screen.slice(screen.indexOf("typed"), screen.indexOf("session 10/5"));
    expect(turnOne).toContain("First answer.");
    expect(turnOne).not.toContain("waiting for the model");
    expect(lastPrompt(server.requests[1]?.body)).toBe("typed ahead");
  });

  it("lists the slash commands, hints at an unknown one, and sends a path as a prompt", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: ["A path."] })),
      stream(turn({ text: ["A slash."] })),
    ]);
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", "/help\r"],
      ["/exit", ""],
      ["› ", "/tmp\r"],
      ["unknown command", ""],
      ["› ", "/etc/hosts is weird?\r"],
      ["A path.", ""],
      ["› ", "//tmp is full\r"],
      ["A slash.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    const lines = afterBanner(screenOf(screen));
    expect(lines.slice(0, 15)).toEqual([
      "› /help",
      "/compact [what to keep]  summarise the conversation so far, to free context",
      "/skill NAME [text]       send skill NAME's text, then the text (mini-agent skills lists them)",
      "/mode [code|ask|plan]    show the session mode, or switch: ask asks before every change,",
      "                         plan only reads (changes are denied), code follows the rules",
      "/rewind [N]              the prompts and the files each changed; N: back to just before",
      "                         prompt N (files put back, the conversation goes on from there)",
      "/help                    this list",
      "/exit                    leave the session (Ctrl-D too)",
      "A line that starts with / and a name is a command; any other line goes to the model",
      "(/etc/hosts is weird? is sent as it is). Start a line with // to send it from its second /.",
      "Tab completes a command's name.",
      "Your commands: none yet (prompt files in ~/.mini-agent/commands or .agents/commands)",
      "› /tmp",
      "mini-agent: unknown command /tmp: /help lists the commands; start the line with // to send it to the model",
    ]);
    const prompts = server.requests.map((request) => lastPrompt(request.body));
    expect(prompts).toEqual(["/etc/hosts is weird?", "/tmp is full"]);
  });

  it("shows and switches the session mode with /mode; plan mode denies a write and says so", async () => {
    const write = { id: "toolu_1", name: "write", input: { path: "a.txt", content: "x" } };
    const { server, workspace, options } = await setup([
      stream(turn({ calls: [write] })),
      stream(turn({ text: ["Planned."] })),
    ]);
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", "/mode\r"],
      ["mode code", ""],
      ["› ", "/mode nope\r"],
      ["no mode", ""],
      ["› ", "/mode plan\r"],
      ["mode plan", ""],
      ["› ", "write a\r"],
      ["Planned.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(afterBanner(screenOf(screen)).slice(0, 6)).toEqual([
      "› /mode",
      "mini-agent: mode code (the approval rules as they are); /mode code|ask|plan switches",
      "› /mode nope",
      'mini-agent: no mode "nope": /mode code|ask|plan',
      "› /mode plan",
      "mini-agent: mode plan (reads and plans; edits, commands beyond reading and MCP calls are denied)",
    ]);
    expect(existsSync(join(workspace, "a.txt"))).toBe(false);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: expect.stringMatching(/^the session is in plan mode: write /),
        isError: true,
      },
    ]);
    expect(systemText(server.requests[0]?.body)).toContain("The session is in plan mode");
  });

  it("lists the prompts with /rewind and goes back to just before one with /rewind N", async () => {
    const write = { id: "toolu_1", name: "write", input: { path: "a.txt", content: "x" } };
    const { server, workspace, options } = await setup([
      stream(turn({ text: ["Nothing to do."] })),
      stream(turn({ calls: [write] })),
      stream(turn({ text: ["Wrote it."] })),
      stream(turn({ text: ["On the branch."] })),
    ]);
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", "hello\r"],
      ["Nothing to do.", ""],
      ["› ", "write a\r"],
      ["Wrote it.", ""],
      ["› ", "/rewind\r"],
      ["/rewind N goes back", ""],
      ["› ", "/rewind 2\r"],
      ["as a branch", ""],
      ["› ", "what now?\r"],
      ["On the branch.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    const lines = afterBanner(screenOf(screen));
    const from = lines.indexOf("› /rewind");
    expect(lines.slice(from, from + 7)).toEqual([
      "› /rewind",
      "  1  hello  (no file changed)",
      "  2  write a  (a.txt)",
      "/rewind N goes back to just before prompt N: the files changed since are put back, and the conversation goes on from there",
      "› /rewind 2",
      "deleted a.txt (the agent created it)",
      "mini-agent: the conversation went back to just before prompt 2; prompt 2 stays in the session file as a branch",
    ]);
    expect(existsSync(join(workspace, "a.txt"))).toBe(false);
    expect(lastPrompt(server.requests[3]?.body)).toBe("what now?");
    const prompts = ((server.requests[3]?.body?.messages ?? []) as { role: string }[]).filter(
      (m) => m.role === "user",
    );
    expect(prompts).toHaveLength(2);
  });
});
