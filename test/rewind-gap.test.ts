import { readFileSync } from "node:fs";
import { appendFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, done, text } from "../src/testing/fake-client.js";
import { trackedRunner } from "./support/changes.js";
import { runBin } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A file someone else changed between two of the agent's changes (the user's notes added between
 * prompts): the records show it, as the second change found the file other than the first left
 * it. Putting the file back to before the first change would lose that change without a word, so
 * a rewind over both refuses it with a short diff, as it refuses a file changed since.
 */

const tempDir = useTempDirs();

async function gapSession(home: string, first: () => Promise<void>) {
  const session = await trackedRunner(home, [
    [
      call("r1", "read", { path: "TODO.md" }),
      call("w1", "write", { path: "TODO.md", content: "# TODO\n" }),
      done,
    ],
    [text("one"), done],
    [call("r2", "read", { path: "TODO.md" }), done],
    [
      call("e2", "edit", { path: "TODO.md", oldText: "# TODO\n", newText: "# TODO\n- agent\n" }),
      done,
    ],
    [text("two"), done],
  ]);
  await first();
  await session.runner.runTurn("first");
  // The user's notes, between the two prompts.
  await appendFile(join(session.workspace, "TODO.md"), "- my notes\n");
  await session.runner.runTurn("second");
  await session.journal.close();
  const env = { PATH: process.env.PATH, HOME: home, MINI_AGENT_HOME: session.state };
  const rewind = (...args: string[]) =>
    runBin(["rewind", ...args], { cwd: session.workspace, env });
  return { ...session, rewind };
}

const reason = "it changed between the agent's changes (before call e2): that change would be lost";

describe("a file changed between two of the agent's changes", () => {
  it("is refused with a diff when the agent had created it, in the dry run and the rewind, and kept", async () => {
    const home = await tempDir();
    const { rewind, workspace } = await gapSession(home, async () => {});
    const lines = (dry: boolean) => [
      `${dry ? "would not restore" : "not restored"} TODO.md: ${reason}`,
      "    --- TODO.md before prompt 1 (absent)",
      "    +++ TODO.md now",
      "    +# TODO",
      "    +- agent",
      "    +- my notes",
    ];
    expect(await rewind("--to", "1", "--files-only", "--dry-run")).toEqual({
      code: 1,
      stderr: "",
      stdout: [
        'would rewind the files of session s1 to just before prompt 1 ("first"):',
        ...lines(true),
        "dry run: nothing was changed",
        "",
      ].join("\n"),
    });
    expect(await rewind("--to", "1", "--files-only")).toEqual({
      code: 1,
      stderr: "",
      stdout: [
        'rewinding the files of session s1 to just before prompt 1 ("first"):',
        ...lines(false),
        "",
      ].join("\n"),
    });
    expect(readFileSync(join(workspace, "TODO.md"), "utf8")).toBe("# TODO\n- agent\n- my notes\n");
    // Back to just before the second prompt keeps the notes: the file is put back as it was then.
    expect(await rewind("--to", "2", "--files-only")).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        'rewinding the files of session s1 to just before prompt 2 ("second"):',
        "restored TODO.md",
        "",
      ].join("\n"),
    });
    expect(readFileSync(join(workspace, "TODO.md"), "utf8")).toBe("# TODO\n- my notes\n");
  });

  it("is refused with a diff when it was there before", async () => {
    const home = await tempDir();
    const { rewind, workspace } = await gapSession(home, () =>
      writeFile(join(home, "ws", "TODO.md"), "old\n"),
    );
    expect(await rewind("--to", "1", "--files-only")).toEqual({
      code: 1,
      stderr: "",
      stdout: [
        'rewinding the files of session s1 to just before prompt 1 ("first"):',
        `not restored TODO.md: ${reason}`,
        "    --- TODO.md before prompt 1",
        "    +++ TODO.md now",
        "    -old",
        "    +# TODO",
        "    +- agent",
        "    +- my notes",
        "",
      ].join("\n"),
    });
    expect(readFileSync(join(workspace, "TODO.md"), "utf8")).toBe("# TODO\n- agent\n- my notes\n");
  });
});
