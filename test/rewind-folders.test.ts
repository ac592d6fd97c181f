import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyRewind } from "../src/rewind/apply.js";
import { planRewind } from "../src/rewind/rewind.js";
import { call, done, text } from "../src/testing/fake-client.js";
import { recordsOf, trackedRunner } from "./support/changes.js";
import { useTempDirs } from "./support/temp.js";

/**
 * Folders the agent's writes created are recorded with the change, and a rewind removes them
 * once the files it deletes leave them empty; a folder that holds anything else is kept, and
 * the plan says so.
 */

const tempDir = useTempDirs();

async function session(home: string) {
  const s = await trackedRunner(home, [
    [call("w0", "write", { path: "keep/x.txt", content: "x\n" }), done],
    [text("first done"), done],
    [
      call("w1", "write", { path: "a/b/c.txt", content: "c\n" }),
      call("w2", "write", { path: "a/d.txt", content: "d\n" }),
      call("w3", "write", { path: "keep/y.txt", content: "y\n" }),
      call("w4", "write", { path: "e/f/g.txt", content: "g\n" }),
      done,
    ],
    [text("second done"), done],
  ]);
  await s.runner.runTurn("first");
  await s.runner.runTurn("second");
  await s.journal.close();
  return s;
}

describe("rewinding folders the agent created", () => {
  it("records the folders each write created", async () => {
    const { path } = await session(await tempDir());
    const made = recordsOf(path).flatMap((r) =>
      r.type === "file_change" ? [[r.toolCallId, r.folders ?? []]] : [],
    );
    expect(made).toEqual([
      ["w0", ["keep"]],
      ["w1", ["a", "a/b"]],
      ["w2", []],
      ["w3", []],
      ["w4", ["e", "e/f"]],
    ]);
  });

  it("removes a created folder left empty, deepest first, and keeps one that holds a file of someone else", async () => {
    const { workspace, state, path } = await session(await tempDir());
    await writeFile(join(workspace, "e/mine.txt"), "the user's\n");
    await mkdir(join(workspace, "a/b/sub"));
    await writeFile(join(workspace, "a/b/sub/.keep"), "");
    const plan = await planRewind({ session: path, workspace, stateDir: state, to: 2 });
    expect(plan.actions.map((a) => [a.kind, a.path, a.kind === "refuse" ? a.reason : ""])).toEqual([
      ["delete", "a/b/c.txt", ""],
      ["delete", "a/d.txt", ""],
      ["delete", "e/f/g.txt", ""],
      ["delete", "keep/y.txt", ""],
      ["refuse", "a/b/", "the folder is not empty (it holds sub): it is kept"],
      ["refuse", "a/", "the folder is not empty (it holds b): it is kept"],
      ["remove-folder", "e/f/", ""],
      ["refuse", "e/", "the folder is not empty (it holds mine.txt): it is kept"],
    ]);
    const outcomes = await applyRewind(plan);
    expect(outcomes.map((o) => `${o.kind} ${o.path}`)).toEqual([
      "deleted a/b/c.txt",
      "deleted a/d.txt",
      "deleted e/f/g.txt",
      "deleted keep/y.txt",
      "refused a/b/",
      "refused a/",
      "removed e/f/",
      "refused e/",
    ]);
    expect(
      ["a/b/sub/.keep", "e", "e/f", "e/mine.txt", "keep", "keep/x.txt"].map((p) => [
        p,
        existsSync(join(workspace, p)),
      ]),
    ).toEqual([
      ["a/b/sub/.keep", true],
      ["e", true],
      ["e/f", false],
      ["e/mine.txt", true],
      ["keep", true],
      ["keep/x.txt", true],
    ]);
  });

  it("removes every folder the rewound prompts created when nothing else is in them", async () => {
    const { workspace, state, path } = await session(await tempDir());
    const plan = await planRewind({ session: path, workspace, stateDir: state, to: 1 });
    const outcomes = await applyRewind(plan);
    expect(outcomes.map((o) => `${o.kind} ${o.path}`)).toEqual([
      "deleted a/b/c.txt",
      "deleted a/d.txt",
      "deleted e/f/g.txt",
      "deleted keep/x.txt",
      "deleted keep/y.txt",
      "removed a/b/",
      "removed a/",
      "removed e/f/",
      "removed e/",
      "removed keep/",
    ]);
    expect(["a", "e", "keep"].filter((p) => existsSync(join(workspace, p)))).toEqual([]);
  });
});
