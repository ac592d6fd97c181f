import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { converse, hasScript, screenOf } from "./support/pty.js";

/** How an interactive session starts on a terminal: the banner, and the recap of a resumed one. */

const setup = useCliSetup();

describe.skipIf(!hasScript)("the start of a session on a terminal", () => {
  it("shows a banner with the model, provider, sandbox, folder and /help before the prompt", async () => {
    const { workspace, options } = await setup([]);
    const { code, screen } = await converse(options.env, workspace, [["› ", "/exit\r"]]);
    expect(code).toBe(0);
    const [first, second] = screenOf(screen);
    expect(first).toMatch(
      /^mini-agent · model claude-sonnet-5-5 · provider anthropic · sandbox (bwrap|unavailable)$/,
    );
    expect(second).toBe(`folder ${workspace} · /help lists the commands, /exit leaves`);
  });

  it("recaps the session --continue resumes: id, age, last prompt and last answer", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: ["The answer\x1b[2J is 42."] })),
      stream(turn({ text: ["Again."] })),
    ]);
    const first = await runBin(["what is it?\nsay"], options);
    expect(first.code).toBe(0);
    const { code, screen } = await converse(
      options.env,
      workspace,
      [["› ", "/exit\r"]],
      ["--continue"],
    );
    expect(code).toBe(0);
    expect(server.rejections).toEqual([]);
    const lines = screenOf(screen);
    const at = lines.findIndex((line) => line.startsWith("resumed session "));
    expect(lines[at]).toMatch(/^resumed session \d{8}-\d{6}-\w+, last used just now$/);
    expect(lines.slice(at + 1, at + 3)).toEqual([
      "  last prompt: what is it? say",
      "  last answer: The answer␛[2J is 42.",
    ]);
  });

  it("shows neither banner nor recap when the output is piped", async () => {
    const { workspace, options } = await setup([
      stream(turn({ text: ["One."] })),
      stream(turn({ text: ["Two."] })),
    ]);
    expect((await runBin(["hello"], options)).code).toBe(0);
    const piped = await runBin(["--continue", "again"], { ...options, cwd: workspace });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe("Two.\n");
    expect(piped.stderr).not.toContain("mini-agent · model");
    expect(piped.stderr).not.toContain("resumed session");
  });
});
