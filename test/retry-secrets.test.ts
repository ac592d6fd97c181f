import { describe, expect, it } from "vitest";
import { status } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, sessionRecords, useCliSetup } from "./support/cli.js";
import { protocolLines } from "./support/stream-json.js";

/**
 * A provider that echoes a secret in its error text (the API key it was given, another secret
 * variable's value): the retry lines, the retry events, the final error and the session's retry
 * records all show `[redacted]` in its place.
 */

const setup = useCliSetup();
const key = "sk-ant-api03-VERYSECRETKEYVALUE0123456789";
const token = "ghp_SECRETTOKENVALUE0123456789";
const echoed = `Overloaded for key ${key} token ${token}`;
const shown = "Overloaded for key [redacted] token [redacted]";

describe("a provider error text that echoes a secret", () => {
  it("is redacted in the retry line, the retry event, the final error and the session", async () => {
    const busy = () => status(529, 0.05, echoed);
    const { options, home } = await setup(Array.from({ length: 12 }, busy));
    const env = { ...options.env, ANTHROPIC_API_KEY: key, GH_TOKEN: token };
    const run = await runBin(["--output-format", "stream-json", "task"], { ...options, env });
    expect(run.code).toBe(1);
    const reason = `529 overloaded_error: ${shown}`;
    const line = `mini-agent: ${reason}; retrying in 50 ms`;
    const final = `provider error 529 overloaded_error: ${shown} (the provider is overloaded; try again later)`;
    expect(run.stderr).toBe(
      [
        `${line} (attempt 2 of 4)`,
        `${line} (attempt 3 of 4)`,
        `${line} (attempt 4 of 4)`,
        `mini-agent: ${final}`,
        "",
      ].join("\n"),
    );
    const events = protocolLines(run.stdout);
    expect(events.filter((event) => event.type === "retry")).toEqual(
      [2, 3, 4].map((attempt) => ({
        version: 1,
        type: "retry",
        attempt,
        attempts: 4,
        delayMs: 50,
        reason,
        errorKind: "overloaded",
        retryAfterMs: 50,
      })),
    );
    expect(events.at(-1)).toMatchObject({ type: "result", status: "error", error: final });
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((record) => record.type === "retry")).toEqual(
      [2, 3, 4].map((attempt) => ({
        type: "retry",
        attempt,
        attempts: 4,
        delayMs: 50,
        reason,
        errorKind: "overloaded",
        retryAfterMs: 50,
      })),
    );
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/VERYSECRET|SECRETTOKEN/);
  }, 30_000);
});

describe("with --debug", () => {
  it("the stack trace of a provider error that echoes a secret is redacted too", async () => {
    const { options } = await setup([status(400, undefined, echoed)]);
    const env = { ...options.env, ANTHROPIC_API_KEY: key, GH_TOKEN: token };
    const run = await runBin(["--debug", "task"], { ...options, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${shown} (the provider rejected the request)\n`);
    expect(run.stderr).toContain("\n    at ");
    expect(run.stderr).not.toMatch(/VERYSECRET|SECRETTOKEN/);
  }, 30_000);
});
