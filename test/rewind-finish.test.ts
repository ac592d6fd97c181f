import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, done, text } from "../src/testing/fake-client.js";
import { trackedRunner } from "./support/changes.js";
import { runBin } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A rewind whose conversation went back but whose files did not all (one refused, one failed, or
 * `--conversation-only` first) is finished by the same `mini-agent rewind --to N` again: prompt N
 * is then the one the conversation left last, and the files of the prompts it left are put back.
 */

const tempDir = useTempDirs();

/** Prompt 1 changes nothing; prompt 2 rewrites a.txt ("v0" before it). */
async function twoPrompts(home: string) {
  const session = await trackedRunner(home, [
    [text("zero"), done],
    [
      call("r1", "read", { path: "a.txt" }),
      call("w1", "write", { path: "a.txt", content: "v2\n" }),
      done,
    ],
    [text("two"), done],
  ]);
  await writeFile(join(session.workspace, "a.txt"), "v0\n");
  await session.runner.runTurn("first");
  await session.runner.runTurn("second");
  await session.journal.close();
  const env = { PATH: process.env.PATH, HOME: home, MINI_AGENT_HOME: session.state };
  const rewind = (...args: string[]) =>
    runBin(["rewind", ...args], { cwd: session.workspace, env });
  return { ...session, rewind };
}

const head = (doing: string, what: string) =>
  `${doing} ${what} of session s1 to just before prompt 2 ("second"):`;
const already = "the conversation already went back to just before prompt 2";

describe("a rewind run again", () => {
  it("puts back the files after --conversation-only took the conversation back", async () => {
    const { rewind, workspace } = await twoPrompts(await tempDir());
    expect(await rewind("--to", "2", "--conversation-only")).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        head("rewinding", "the conversation"),
        "the conversation goes on from just before prompt 2 (mini-agent --continue); prompt 2 stays in the session file as a branch",
        "",
      ].join("\n"),
    });
    expect(await rewind("--to", "2", "--files-only", "--dry-run")).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        head("would rewind", "the files"),
        "would restore a.txt",
        "dry run: nothing was changed",
        "",
      ].join("\n"),
    });
    expect(await rewind("--to", "2", "--files-only")).toEqual({
      code: 0,
      stderr: "",
      stdout: [head("rewinding", "the files"), "restored a.txt", ""].join("\n"),
    });
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("v0\n");
    // Past the prompt the conversation left last, there is none.
    expect(await rewind("--to", "3")).toEqual({
      code: 2,
      stderr: "mini-agent: session s1: the session has 1 prompt: --to must be 1\n",
      stdout: "",
    });
  });

  it("finishes a rewind that left a file not restored, once the file is as the agent left it", async () => {
    const { rewind, workspace } = await twoPrompts(await tempDir());
    await writeFile(join(workspace, "a.txt"), "mine\n");
    const first = await rewind("--to", "2");
    expect(first.code).toBe(1);
    expect(first.stdout.split("\n").slice(0, 2)).toEqual([
      head("rewinding", "the files and the conversation"),
      "not restored a.txt: it changed since the agent's last change",
    ]);
    await writeFile(join(workspace, "a.txt"), "v2\n");
    expect(await rewind("--to", "2")).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        head("rewinding", "the files and the conversation"),
        "restored a.txt",
        already,
        "",
      ].join("\n"),
    });
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("v0\n");
    expect(await rewind("--to", "2", "--conversation-only")).toEqual({
      code: 0,
      stderr: "",
      stdout: [head("rewinding", "the conversation"), already, ""].join("\n"),
    });
  });
});
