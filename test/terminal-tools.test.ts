import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { afterBanner, converse, hasScript, screenOf } from "./support/pty.js";

/** Tool results on a terminal: an edit as a diff, a command's output with its end in view. */

const setup = useCliSetup();
const durations = (lines: string[]) => lines.map((line) => line.replace(/\d+\.\ds/g, "N.Ns"));
const readThenEdit = () => [
  stream(turn({ calls: [{ id: "toolu_1", name: "read", input: { path: "a.txt" } }] })),
  stream(
    turn({
      calls: [
        {
          id: "toolu_2",
          name: "edit",
          input: { path: "a.txt", oldText: "two\nthree", newText: "two\nTHREE" },
        },
      ],
    }),
  ),
  stream(turn({ text: ["Edited."] })),
];

describe.skipIf(!hasScript)("tool results on a terminal", () => {
  it("shows an edit as a unified diff under its line", async () => {
    const { server, workspace, options } = await setup(readThenEdit());
    await writeFile(join(workspace, "a.txt"), "one\ntwo\nthree\n");
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", "edit it\r"],
      ["Edited.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(server.rejections).toEqual([]);
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("one\ntwo\nTHREE\n");
    const lines = durations(afterBanner(screenOf(screen)));
    const at = lines.indexOf("  ✓ edit a.txt · N.Ns");
    expect(lines.slice(at, at + 7)).toEqual([
      "  ✓ edit a.txt · N.Ns",
      "    │ --- a.txt",
      "    │ +++ a.txt",
      "    │ @@ -2,2 +2,2 @@",
      "    │  two",
      "    │ -three",
      "    │ +THREE",
    ]);
  });

  it("folds a command's output to its head and its tail, so its end shows", async () => {
    const command = "seq 1 20; echo '1 passed, 0 failed'";
    const { workspace, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command } }] })),
      stream(turn({ text: ["Ran."] })),
    ]);
    const { code, screen } = await converse(
      options.env,
      workspace,
      [
        ["› ", "run it\r"],
        ["Ran.", ""],
        ["› ", "/exit\r"],
      ],
      ["--allow-bash", "--sandbox", "off"],
    );
    expect(code).toBe(0);
    const lines = durations(afterBanner(screenOf(screen)));
    const at = lines.findIndex((line) => line.startsWith("  ✓ bash seq 1 20"));
    expect(lines.slice(at + 1, at + 10)).toEqual([
      "    │ 1",
      "    │ 2",
      "    │ 3",
      "    │ 4",
      "    │ … 14 more lines",
      "    │ 19",
      "    │ 20",
      "    │ 1 passed, 0 failed",
      "    │ [exit code 0]",
    ]);
  });

  it("shows no diff when the output is piped", async () => {
    const { workspace, options } = await setup(readThenEdit());
    await writeFile(join(workspace, "a.txt"), "one\ntwo\nthree\n");
    const piped = await runBin(["edit it"], options);
    expect(piped.code).toBe(0);
    expect(piped.stderr).toContain("  ✓ edit a.txt\n");
    expect(piped.stderr).not.toContain("+++");
  });
});
