import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { protocolLines } from "./support/stream-json.js";

/** `--input-format stream-json`: every user line that will not run gets one `error` event. */

const setup = useCliSetup();
const jsonFlags = ["--input-format", "stream-json", "--output-format", "stream-json"];
const user = (text: string) => JSON.stringify({ type: "user", text });
const error = (message: string) => ({ version: 1, type: "error", message });

describe("user lines that do not run", () => {
  it("skips a user text that is only whitespace with one error event, like an empty one", async () => {
    const { server, options } = await setup([stream(turn({ text: ["Done."] }))]);
    const input = [user(""), user("  "), user("\n"), user(" \t\r\n "), user("hello")];
    const run = await runBin([...jsonFlags, "--sandbox", "off"], {
      ...options,
      input: `${input.join("\n")}\n`,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "error")).toEqual([
      error(
        'input line 1 is not {"type":"user","text":…} or {"type":"approval","id":…,"decision":"allow"|"deny"}; it was skipped',
      ),
      error("input line 2 is a user message with only whitespace as its text; it was skipped"),
      error("input line 3 is a user message with only whitespace as its text; it was skipped"),
      error("input line 4 is a user message with only whitespace as its text; it was skipped"),
    ]);
    expect(lines.filter((line) => line.type === "result")).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
  }, 30_000);
});

describe("user lines queued when the token budget ends the run", () => {
  it("each get one error event naming its input line, before the exit 5", async () => {
    const { server, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_b", name: "bash", input: { command: "echo hi" } }] })),
      stream(turn({ text: ["never asked"] })),
    ]);
    const input = [user("first"), "not json", user("second"), user("third")];
    const run = await runBin(
      [...jsonFlags, "--sandbox", "off", "--allow-bash", "--token-budget", "20"],
      { ...options, input: `${input.join("\n")}\n` },
    );
    expect(run.code).toBe(5);
    const lines = protocolLines(run.stdout);
    const results = lines.filter((line) => line.type === "result");
    expect(results).toMatchObject([{ status: "budget_exceeded" }]);
    const end = lines.findIndex((line) => line.type === "result");
    expect(lines.filter((line) => line.type === "error")).toEqual([
      error("input line 2 is not JSON; it was skipped"),
      error("input line 3 was not run: the token budget was reached"),
      error("input line 4 was not run: the token budget was reached"),
    ]);
    // The lines not run are said after the turn's result, as the last lines of the run.
    expect(lines.slice(end + 1)).toEqual([
      error("input line 3 was not run: the token budget was reached"),
      error("input line 4 was not run: the token budget was reached"),
    ]);
    expect(server.requests).toHaveLength(1);
  }, 30_000);
});
