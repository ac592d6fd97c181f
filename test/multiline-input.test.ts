import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { useCliSetup } from "./support/cli.js";
import { afterBanner, converse, hasScript, screenOf } from "./support/pty.js";

/** Multi-line prompts on a real terminal (`script`): pastes as the terminal sends them, and keys. */

const setup = useCliSetup();
const paste = (text: string) => `\x1b[200~${text}\x1b[201~`;
/** Every prompt the model was sent, in order of the requests. */
function prompts(requests: { body?: Record<string, unknown> }[]): unknown[] {
  return requests.map((request) => {
    const messages = (request.body?.messages ?? []) as { content: { text?: string }[] }[];
    return messages.at(-1)?.content.at(-1)?.text;
  });
}

describe.skipIf(!hasScript)("multi-line input on a terminal", () => {
  it("sends a bracketed paste of three lines as one prompt, with a notice of its size", async () => {
    const { server, workspace, options } = await setup([stream(turn({ text: ["Got it."] }))]);
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", paste("first line\rsecond line\rthird line\r")],
      ["Enter sends]", "\r"],
      ["Got it.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(server.rejections).toEqual([]);
    expect(prompts(server.requests)).toEqual(["first line\nsecond line\nthird line\n"]);
    expect(afterBanner(screenOf(screen)).slice(0, 3)).toEqual([
      "› [pasted 3 lines, 34 characters: Enter sends]",
      "…",
      "Got it.",
    ]);
  });

  // 2,000 lines of 60 characters: a long log that fits the window (a megabyte would be compacted).
  it("sends a paste of 2,000 lines as one prompt", async () => {
    const { server, workspace, options } = await setup([stream(turn({ text: ["Long."] }))]);
    const body = Array.from({ length: 2_000 }, (_, i) => `${i}`.padEnd(59, "x")).join("\r");
    const { code } = await converse(options.env, workspace, [
      ["› ", `explain: ${paste(body)}`],
      ["Enter sends]", "\r"],
      ["Long.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(server.rejections).toEqual([]);
    expect(prompts(server.requests)).toEqual([`explain: ${body.replaceAll("\r", "\n")}`]);
  });

  it("continues a typed line after a backslash or Alt-Enter", async () => {
    const { server, workspace, options } = await setup([stream(turn({ text: ["Three."] }))]);
    const { code } = await converse(options.env, workspace, [
      ["› ", "first\\\r"],
      ["… ", "second\x1b\r"],
      ["… ", "third\r"],
      ["Three.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(prompts(server.requests)).toEqual(["first\nsecond\nthird"]);
  });

  it("turns bracketed paste on at the prompt and off at the end, on a terminal that has it", async () => {
    const { workspace, options } = await setup([]);
    const { code, screen } = await converse({ ...options.env, TERM: "xterm" }, workspace, [
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(screen.indexOf("\x1b[?2004h")).toBeGreaterThan(-1);
    expect(screen.indexOf("\x1b[?2004l")).toBeGreaterThan(screen.indexOf("\x1b[?2004h"));
  });
});
