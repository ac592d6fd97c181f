import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, useCliSetup } from "./support/cli.js";

/** `--approval-timeout` takes only what a timer can wait: up to 2147483 seconds (2^31-1 ms). */

const setup = useCliSetup();
const jsonFlags = ["--input-format", "stream-json", "--output-format", "stream-json"];
const message = (value: string) =>
  `mini-agent: --approval-timeout must be a number of seconds from 0 (exclusive) to 2147483, not ${JSON.stringify(value)}\n`;

describe("--approval-timeout range", () => {
  it("refuses a value a timer cannot wait, or not a plain number, in one line with exit 2", async () => {
    const { server, options } = await setup([stream(turn({ text: ["no"] }))]);
    for (const value of ["2147484", "2147483.5", "1e9", "99999999999", "0", "-1", "abc"]) {
      const run = await runBin([...jsonFlags, "--approval-timeout", value], options);
      expect({ value, ...run }).toEqual({ value, code: 2, stdout: "", stderr: message(value) });
    }
    expect(server.requests).toEqual([]);
  }, 60_000);

  it("accepts the largest value and says the range in --help", async () => {
    const { server, options } = await setup([stream(turn({ text: ["fine"] }))]);
    const run = await runBin([...jsonFlags, "--approval-timeout", "2147483"], {
      ...options,
      input: `${JSON.stringify({ type: "user", text: "hi" })}\n`,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    expect(server.requests).toHaveLength(1);
    const help = await runBin(["--help"], options);
    expect(help.stdout).toContain(
      [
        "      --approval-timeout S  with --input-format stream-json or acp, deny a call whose",
        "                            approval request has no answer after S seconds (default 300;",
        "                            S above 0, at most 2147483: almost 25 days)",
      ].join("\n"),
    );
  }, 30_000);
});
