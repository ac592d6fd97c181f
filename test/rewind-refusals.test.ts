import { readdirSync } from "node:fs";
import { appendFile, chmod, chown, mkdir, readdir, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, done, text } from "../src/testing/fake-client.js";
import { trackedRunner } from "./support/changes.js";
import { runBin } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/**
 * What a rewind says of a file it does not put back: a diff whose long lines are cut (and says
 * so), a blob altered by hand told as altered, not missing, and a folder that cannot be written
 * refused in the plan, so the dry run foretells it.
 */

const tempDir = useTempDirs();
const asRoot = process.getuid?.() === 0;

/** Prompt 1 rewrites a.txt ("old" before it) and d/b.txt ("b" before it). */
async function oneEdit(home: string) {
  const session = await trackedRunner(home, [
    [
      call("r1", "read", { path: "a.txt" }),
      call("r2", "read", { path: "d/b.txt" }),
      call("w1", "write", { path: "a.txt", content: "new\n" }),
      call("w2", "write", { path: "d/b.txt", content: "B\n" }),
      done,
    ],
    [text("one"), done],
  ]);
  await writeFile(join(session.workspace, "a.txt"), "old\n");
  await mkdir(join(session.workspace, "d"));
  await writeFile(join(session.workspace, "d", "b.txt"), "b\n");
  await session.runner.runTurn("first");
  await session.journal.close();
  const env = { PATH: process.env.PATH, HOME: home, MINI_AGENT_HOME: session.state };
  const rewind = (args: string[], asNobody = false) =>
    runBin(["rewind", ...args], { cwd: session.workspace, env, asNobody });
  return { ...session, rewind };
}

const head = (doing: string) =>
  `${doing} the files of session s1 to just before prompt 1 ("first"):`;

describe("a file a rewind does not put back", () => {
  it("has a diff whose long lines are cut, and says how long they were", async () => {
    const { rewind, workspace } = await oneEdit(await tempDir());
    await appendFile(join(workspace, "a.txt"), `${"z".repeat(300_000)}\n`);
    expect(await rewind(["--to", "1", "--files-only", "--dry-run"])).toEqual({
      code: 1,
      stderr: "",
      stdout: [
        head("would rewind"),
        "would not restore a.txt: it changed since the agent's last change",
        "    --- a.txt before prompt 1",
        "    +++ a.txt now",
        "    -old",
        "    +new",
        `    +${"z".repeat(200)}… (cut: 300000 characters in all)`,
        "would restore d/b.txt",
        "dry run: nothing was changed",
        "",
      ].join("\n"),
    });
  });

  it("is told as altered when its kept bytes were changed by hand, as missing when removed", async () => {
    const { rewind, blobs } = await oneEdit(await tempDir());
    const [first, second] = (await readdir(blobs)).sort();
    await writeFile(join(blobs, first ?? ""), "tampered\n");
    await unlink(join(blobs, second ?? ""));
    const run = await rewind(["--to", "1", "--files-only"]);
    const reasons = run.stdout
      .split("\n")
      .filter((line) => line.startsWith("not restored"))
      .map((line) => line.replace(/\(\w{64}\)$/, "(HASH)").replace(/^not restored [^:]*: /, ""))
      .sort();
    expect(reasons).toEqual([
      "its bytes before prompt 1 are missing from the session's blob store (HASH)",
      "its bytes before prompt 1 in the session's blob store were altered (HASH)",
    ]);
    expect(run.code).toBe(1);
  });

  it.skipIf(!asRoot)(
    "is refused in the plan when its folder cannot be written, so the dry run foretells it",
    async () => {
      const home = await tempDir();
      const { rewind, workspace } = await oneEdit(home);
      for (const entry of ["", ...readdirSync(home, { recursive: true, encoding: "utf8" })])
        await chown(join(home, entry), 65534, 65534);
      await chmod(join(workspace, "d"), 0o555);
      const lines = (dry: boolean) => [
        `${dry ? "would restore" : "restored"} a.txt`,
        `${dry ? "would not restore" : "not restored"} d/b.txt: its folder cannot be written (permission denied)`,
      ];
      expect(await rewind(["--to", "1", "--files-only", "--dry-run"], true)).toEqual({
        code: 1,
        stderr: "",
        stdout: [head("would rewind"), ...lines(true), "dry run: nothing was changed", ""].join(
          "\n",
        ),
      });
      expect(await rewind(["--to", "1", "--files-only"], true)).toEqual({
        code: 1,
        stderr: "",
        stdout: [head("rewinding"), ...lines(false), ""].join("\n"),
      });
    },
  );
});
