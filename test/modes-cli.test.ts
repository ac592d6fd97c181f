import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCliArgs } from "../src/cli/args.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, systemText, toolResults, useCliSetup } from "./support/cli.js";

const setup = useCliSetup();

describe("--mode", () => {
  it("reads code, ask and plan, code by default, and refuses any other name in one line", () => {
    expect(parseCliArgs(["t"], {}).mode).toBe("code");
    expect(
      ["code", "ask", "plan"].map((mode) => parseCliArgs(["--mode", mode, "t"], {}).mode),
    ).toEqual(["code", "ask", "plan"]);
    for (const bad of ["Plan", "", "plan\u001b[2J"])
      expect(() => parseCliArgs(["--mode", bad, "t"], {})).toThrow(
        `--mode must be code, ask, plan, not ${JSON.stringify(bad)}`,
      );
  });

  it("exits 2 on an unknown mode before any request", async () => {
    const { server, options } = await setup([]);
    const run = await runBin(["--mode", "yolo", "hi"], options);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('mini-agent: --mode must be code, ask, plan, not "yolo"\n');
    expect(server.requests).toEqual([]);
  });

  it("in ask mode with no one to ask, denies a write the rules would allow, and says why", async () => {
    const write = { id: "toolu_1", name: "write", input: { path: "a.txt", content: "x" } };
    const { server, workspace, options } = await setup([
      stream(turn({ calls: [write] })),
      stream(turn({ text: "ok" })),
    ]);
    const run = await runBin(["--mode", "ask", "--allow-bash", "write a"], options);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, "a.txt"))).toBe(false);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: "the session is in ask mode: write changes files, and no one can be asked here",
        isError: true,
      },
    ]);
    expect(systemText(server.requests[0]?.body)).toContain("The session is in ask mode");
  });

  it("in plan mode, --allow-bash lifts nothing: a command that writes is denied", async () => {
    const call = { id: "toolu_1", name: "bash", input: { command: "touch made.txt" } };
    const { server, workspace, options } = await setup([
      stream(turn({ calls: [call] })),
      stream(turn({ text: "ok" })),
    ]);
    const run = await runBin(["--mode", "plan", "--allow-bash", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, "made.txt"))).toBe(false);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content:
          "the session is in plan mode: bash is not allowed, as it may change something (the user can change the mode)",
        isError: true,
      },
    ]);
  });
});
