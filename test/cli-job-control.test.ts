import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { cliEnv, sessionFiles, sessionRecords, toolResults, useCliSetup } from "./support/cli.js";
import { cliCommandLine, converseWith, hasScript, interactiveShell } from "./support/pty.js";

/**
 * Job control: in a shell that has it, Ctrl-Z stops the interactive session and `fg` goes on
 * with it where it was, at the prompt or at the question before a bash call.
 */

const setup = useCliSetup();
const shellPrompt = "SHELL$ ";
const question = "[y/N/a] (a = always";
const noSandbox = ["--sandbox", "off"];
/** `fg`, then the exit code of the session it continued: `EXIT=N` (the test waits for `EXIT=0`). */
const fg = "fg; echo EXIT=$?\r";

describe.skipIf(!hasScript)("Ctrl-Z and fg in a job-control shell", () => {
  it("stops at the idle prompt and, after fg, goes on reading prompts", async () => {
    const { server, home, workspace } = await setup([stream(turn({ text: ["Hello there."] }))]);
    const env = { ...cliEnv(home, server.url), TERM: "xterm", PS1: shellPrompt };
    await converseWith(interactiveShell, env, workspace, [
      [shellPrompt, `${cliCommandLine(noSandbox)}\r`],
      ["› ", "\x1a"],
      ["Stopped", fg],
      ["› ", "hi\r"],
      ["Hello there.", ""],
      ["› ", "/exit\r"],
      ["EXIT=0", "exit\r"],
    ]);
    expect(server.requests).toHaveLength(1);
    expect(server.rejections).toEqual([]);
  });

  it("stops at the bash question and, after fg, takes the answer and runs the call", async () => {
    const { server, home, workspace } = await setup([
      stream(
        turn({
          calls: [
            { id: "toolu_1", name: "bash", input: { command: "echo from-bash | tee out.txt" } },
          ],
        }),
      ),
      stream(turn({ text: ["It printed from-bash."] })),
    ]);
    const env = { ...cliEnv(home, server.url), TERM: "xterm", PS1: shellPrompt };
    await converseWith(interactiveShell, env, workspace, [
      [shellPrompt, `${cliCommandLine(noSandbox)}\r`],
      ["› ", "run it\r"],
      [question, "\x1a"],
      ["Stopped", fg],
      [question, "y\r"],
      ["It printed from-bash.", ""],
      ["› ", "/exit\r"],
      ["EXIT=0", "exit\r"],
    ]);
    expect(server.rejections).toEqual([]);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "from-bash\n[exit code 0]", isError: false },
    ]);
    const [file = ""] = await sessionFiles(home);
    const approvals = (await sessionRecords(file)).filter((r) => r.type === "approval");
    expect(approvals).toEqual([
      { type: "approval", toolCallId: "toolu_1", tool: "bash", approved: true, by: "user" },
    ]);
  });
});
