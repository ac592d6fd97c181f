import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, toolResults, useCliSetup } from "./support/cli.js";

const setup = useCliSetup();

/**
 * The CLI starts the bwrap probe before it loads the turn, so the probe runs meanwhile; the
 * turn then awaits that same probe, for its warning, its system prompt and bash's first command.
 */
describe("the CLI's start-up", () => {
  it("runs the bwrap probe once per run, started before the turn and reused by bash", async () => {
    const { server, home, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "echo hi" } }] })),
      stream(turn({ text: ["done"] })),
    ]);
    // A bwrap that notes each start and cannot build the sandbox: bash then runs plainly.
    const fakeBin = join(home, "fake-bin");
    const log = join(home, "bwrap.log");
    await mkdir(fakeBin);
    await writeFile(
      join(fakeBin, "bwrap"),
      `#!/bin/sh\necho started >> '${log}'\necho 'no user namespaces' >&2\nexit 1\n`,
    );
    await chmod(join(fakeBin, "bwrap"), 0o755);
    const env = { ...options.env, PATH: `${fakeBin}:${process.env.PATH}` };
    const run = await runBin(["--allow-bash", "task"], { ...options, env });
    expect(run).toEqual({
      code: 0,
      stdout: "done\n",
      stderr:
        "mini-agent: warning: bash runs without a sandbox: bwrap cannot create the sandbox here: no user namespaces\n  ✓ bash echo hi\n",
    });
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "hi\n[exit code 0]", isError: false },
    ]);
    expect(await readFile(log, "utf8")).toBe("started\n");
  });
});
