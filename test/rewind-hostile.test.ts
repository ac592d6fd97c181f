import { existsSync, lstatSync, readFileSync } from "node:fs";
import { chmod, copyFile, mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyRewind } from "../src/rewind/apply.js";
import { planRewind } from "../src/rewind/rewind.js";
import { fourKinds, recordsOf } from "./support/changes.js";
import { runBin } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A rewind against a workspace that moved under it: links swapped in for files and folders,
 * files turned into folders. Nothing is written, removed or read through a link out of the
 * workspace; each such file is refused or fails with its reason, and the others go on.
 */

const tempDir = useTempDirs();

async function rewound() {
  const home = await tempDir();
  const session = await fourKinds(home);
  const outside = join(home, "outside");
  await mkdir(outside);
  const options = { session: session.path, workspace: session.workspace, stateDir: session.state };
  return { ...session, outside, options };
}

const kinds = (plan: Awaited<ReturnType<typeof planRewind>>) =>
  plan.actions.map((a) => [a.kind, a.path, a.kind === "refuse" ? a.reason : ""]);

describe("a rewind in a workspace that moved under it", () => {
  it("refuses a file a link or a folder now stands in for, and changes neither", async () => {
    const { workspace, outside, options } = await rewound();
    await writeFile(join(outside, "target.txt"), "1\r\n2\r\n");
    await rm(join(workspace, "crlf.txt"));
    await symlink(join(outside, "target.txt"), join(workspace, "crlf.txt"));
    await rm(join(workspace, "run.sh"));
    await mkdir(join(workspace, "run.sh"));
    const plan = await planRewind({ ...options, to: 2 });
    expect(kinds(plan)).toEqual([["refuse", "crlf.txt", "it is no longer a regular file"]]);
    const all = await planRewind({ ...options, to: 1 });
    expect(kinds(all).filter(([kind]) => kind === "refuse")).toEqual([
      ["refuse", "crlf.txt", "it is no longer a regular file"],
      ["refuse", "run.sh", "it is no longer a regular file"],
    ]);
    await applyRewind(all);
    expect(readFileSync(join(outside, "target.txt"), "utf8")).toBe("1\r\n2\r\n");
    expect(lstatSync(join(workspace, "crlf.txt")).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(workspace, "run.sh")).isDirectory()).toBe(true);
  });

  it("does not write through a link swapped in for a file between the plan and the write", async () => {
    const { workspace, outside, options } = await rewound();
    const plan = await planRewind({ ...options, to: 2 });
    await writeFile(join(outside, "target.txt"), "1\r\n2\r\n");
    await rm(join(workspace, "crlf.txt"));
    await symlink(join(outside, "target.txt"), join(workspace, "crlf.txt"));
    expect(await applyRewind(plan)).toEqual([
      { kind: "failed", path: "crlf.txt", reason: "it changed while the rewind ran" },
    ]);
    expect(readFileSync(join(outside, "target.txt"), "utf8")).toBe("1\r\n2\r\n");
    expect(lstatSync(join(workspace, "crlf.txt")).isSymbolicLink()).toBe(true);
  });

  it("does not delete or remove through a folder swapped for a link between the plan and the rewind", async () => {
    const { workspace, outside, options } = await rewound();
    const plan = await planRewind({ ...options, to: 1 });
    // made/ (the agent's folder, holding the file it created) moved aside, a link to a copy out of the workspace put in.
    await rename(join(workspace, "made"), join(workspace, "moved"));
    await mkdir(join(outside, "made"));
    await writeFile(join(outside, "made", "new.txt"), "new\n");
    await symlink(join(outside, "made"), join(workspace, "made"));
    const outcomes = await applyRewind(plan);
    expect(outcomes.filter((o) => o.path.startsWith("made/"))).toEqual([
      {
        kind: "failed",
        path: "made/new.txt",
        reason: "it changed while the rewind ran",
      },
      { kind: "failed", path: "made/", reason: "it is no longer a folder of the workspace" },
    ]);
    expect(readFileSync(join(outside, "made", "new.txt"), "utf8")).toBe("new\n");
    expect(existsSync(join(workspace, "moved", "new.txt"))).toBe(true);
  });
});

describe("a rewind the system refuses", () => {
  // root may write anywhere: the refusal cannot be made here then.
  it.skipIf(process.getuid?.() === 0)(
    "says in words that a file could not be written, and goes on with the others",
    async () => {
      const { workspace, options } = await rewound();
      const plan = await planRewind({ ...options, to: 1 });
      await chmod(workspace, 0o555);
      try {
        const outcomes = await applyRewind(plan);
        expect(outcomes.map((o) => [o.kind, o.path, "reason" in o ? o.reason : ""])).toEqual([
          ["failed", "bom.txt", "it could not be written (permission denied)"],
          ["failed", "crlf.txt", "it could not be written (permission denied)"],
          ["failed", "latin1.txt", "it could not be written (permission denied)"],
          ["deleted", "made/new.txt", ""],
          ["failed", "run.sh", "it could not be written (permission denied)"],
          ["failed", "made/", "it could not be removed (permission denied)"],
        ]);
      } finally {
        await chmod(workspace, 0o755);
      }
    },
  );
});

describe("a rewind of a folder the system will not let it read", () => {
  it.skipIf(process.getuid?.() === 0)(
    "refuses the folder and the file in it in words, and plans the rest",
    async () => {
      const { workspace, options } = await rewound();
      await chmod(join(workspace, "made"), 0o000);
      try {
        const plan = await planRewind({ ...options, to: 1 });
        expect(kinds(plan)).toEqual([
          ["restore", "bom.txt", ""],
          ["restore", "crlf.txt", ""],
          ["restore", "latin1.txt", ""],
          ["refuse", "made/new.txt", "it cannot be read (permission denied)"],
          ["restore", "run.sh", ""],
          ["refuse", "made/", "it cannot be read (permission denied): it is kept"],
        ]);
      } finally {
        await chmod(join(workspace, "made"), 0o755);
      }
    },
  );
});

describe("mini-agent rewind given what it cannot use", () => {
  it("refuses a prompt number it cannot have and a session of another folder, in one line each, changing nothing", async () => {
    const home = await tempDir();
    const session = await fourKinds(home);
    const env = { PATH: process.env.PATH, HOME: home, MINI_AGENT_HOME: session.state };
    const rewind = (...args: string[]) =>
      runBin(["rewind", ...args], { cwd: session.workspace, env });
    // The session file of another folder, copied among this folder's sessions.
    const other = await fourKinds(await tempDir());
    await copyFile(other.path, join(dirname(session.path), "elsewhere.jsonl"));
    const before = readFileSync(join(session.workspace, "crlf.txt"));
    const cases: [string[], string][] = [
      [
        ["s1", "--to", "9".repeat(400)],
        "mini-agent: session s1: the session has 2 prompts: --to must be from 1 to 2",
      ],
      [["s1", "--to", "-1"], 'mini-agent: --to needs a prompt number, 1 for the first, not "-1"'],
      [["s1", "--to", "1.5"], 'mini-agent: --to needs a prompt number, 1 for the first, not "1.5"'],
      [["s1", "--to", "1e1"], 'mini-agent: --to needs a prompt number, 1 for the first, not "1e1"'],
      [["s1", "--to", ""], 'mini-agent: --to needs a prompt number, 1 for the first, not ""'],
      [
        ["elsewhere", "--to", "1"],
        `mini-agent: session elsewhere: it was made in ${other.workspace}, not in this folder`,
      ],
    ];
    const runs = [];
    for (const [args] of cases) runs.push(await rewind(...args, "--files-only"));
    expect(runs.map((run) => [run.code, run.stdout, run.stderr])).toEqual(
      cases.map(([, line]) => [2, "", `${line}\n`]),
    );
    expect(readFileSync(join(session.workspace, "crlf.txt"))).toEqual(before);
  });
});

describe("two rewinds of one session at once", () => {
  it("puts each file back once: the second is refused while the first holds the session, or finds nothing left", async () => {
    const home = await tempDir();
    const session = await fourKinds(home);
    const env = { PATH: process.env.PATH, HOME: home, MINI_AGENT_HOME: session.state };
    const rewind = () =>
      runBin(["rewind", "s1", "--to", "1", "--files-only"], { cwd: session.workspace, env });
    const runs = await Promise.all([rewind(), rewind()]);
    const done = [
      'rewinding the files of session s1 to just before prompt 1 ("first"):',
      "restored bom.txt",
      "restored crlf.txt",
      "restored latin1.txt",
      "deleted made/new.txt (the agent created it)",
      "restored run.sh",
      "removed made/ (the agent made the folder)",
      "",
    ].join("\n");
    const inUse = /^mini-agent: session s1 is in use by another mini-agent \(pid \d+\)\n$/;
    const nothing = [
      'rewinding the files of session s1 to just before prompt 1 ("first"):',
      "nothing to rewind: every file the agent changed from prompt 1 on is as it was then",
      "",
    ].join("\n");
    const [first, second] = runs[0]?.stdout === done ? runs : [...runs].reverse();
    expect(first).toEqual({ code: 0, stdout: done, stderr: "" });
    expect(
      (second?.code === 1 && second.stdout === "" && inUse.test(second.stderr)) ||
        (second?.code === 0 && second.stdout === nothing && second.stderr === ""),
    ).toBe(true);
    const restores = recordsOf(session.path).filter((r) => r.type === "file_restore");
    expect(restores.map((r) => (r.type === "file_restore" ? r.path : ""))).toEqual([
      "bom.txt",
      "crlf.txt",
      "latin1.txt",
      "made/new.txt",
      "run.sh",
    ]);
  });
});
