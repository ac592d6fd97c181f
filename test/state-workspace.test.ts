import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, useCliSetup } from "./support/cli.js";

const setup = useCliSetup();

describe("the state folder as a workspace", () => {
  it("is refused in one line with exit 2, as is a folder inside it, before anything is created", async () => {
    const { server, home, options } = await setup([stream(turn({ text: "never" }))]);
    const state = join(home, "state");
    await mkdir(join(state, "sessions"), { recursive: true });
    const runs = [];
    for (const cwd of [state, join(state, "sessions")]) {
      runs.push(await runBin(["--cwd", cwd, "--sandbox", "off", "hello"], options));
      runs.push(await runBin(["hello"], { ...options, cwd }));
    }
    expect(
      runs.map(({ code, stdout, stderr }) => ({ code, stdout, lines: stderr.split("\n").length })),
    ).toEqual(runs.map(() => ({ code: 2, stdout: "", lines: 2 })));
    expect(runs[0]?.stderr).toContain(
      `${state} is mini-agent's state folder or inside it: the agent never works there`,
    );
    expect(server.requests).toEqual([]);
    expect(await sessionFiles(home)).toEqual([]);
  });
});
