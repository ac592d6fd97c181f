import { existsSync, readFileSync, statSync } from "node:fs";
import { chmod, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { applyRewind } from "../src/rewind/apply.js";
import { planRewind } from "../src/rewind/rewind.js";
import type { FileRestoreRecord } from "../src/session/records.js";
import { Session } from "../src/session/session.js";
import { call, done, text } from "../src/testing/fake-client.js";
import { fourKinds, latin1, recordsOf, trackedRunner } from "./support/changes.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A rewind of files to just before prompt N: every file the agent changed since is restored
 * byte for byte with its mode when it still holds what the agent left, a file the agent created
 * is removed, and a file changed since by anyone else is refused with a short diff.
 */

const tempDir = useTempDirs();
const fresh = 0o666 & ~process.umask();

/** What the plan would do, file by file, without the bytes it holds. */
const planned = (plan: Awaited<ReturnType<typeof planRewind>>) =>
  plan.actions.map((action) => ({ path: action.path, kind: action.kind }));

const bytesOf = (workspace: string, file: string) => readFileSync(join(workspace, file));
const modeOf = (workspace: string, file: string) => statSync(join(workspace, file)).mode & 0o7777;

describe("rewinding files", () => {
  it("restores CRLF, BOM, non-UTF-8 and executable files byte for byte with their modes, and removes a created file", async () => {
    const { workspace, state, path } = await fourKinds(await tempDir());
    expect(bytesOf(workspace, "crlf.txt").toString()).toBe("1\r\n2\r\n");

    const plan = await planRewind({ session: path, workspace, stateDir: state, to: 1 });
    expect(planned(plan)).toEqual([
      { path: "bom.txt", kind: "restore" },
      { path: "crlf.txt", kind: "restore" },
      { path: "latin1.txt", kind: "restore" },
      { path: "made/new.txt", kind: "delete" },
      { path: "run.sh", kind: "restore" },
      { path: "made/", kind: "remove-folder" },
    ]);
    const outcomes = await applyRewind(plan);
    expect(outcomes.map((o) => `${o.kind} ${o.path}`)).toEqual([
      "restored bom.txt",
      "restored crlf.txt",
      "restored latin1.txt",
      "deleted made/new.txt",
      "restored run.sh",
      "removed made/",
    ]);
    expect(bytesOf(workspace, "crlf.txt")).toEqual(Buffer.from("one\r\ntwo\r\n"));
    expect(bytesOf(workspace, "bom.txt")).toEqual(Buffer.from("\uFEFFhello\n"));
    expect(bytesOf(workspace, "latin1.txt")).toEqual(latin1);
    expect(bytesOf(workspace, "run.sh")).toEqual(Buffer.from("#!/bin/sh\necho hi\n"));
    expect(modeOf(workspace, "run.sh")).toBe(0o755);
    expect(modeOf(workspace, "crlf.txt")).toBe(fresh);
    expect(existsSync(join(workspace, "made"))).toBe(false);
  });

  it("goes back to just before prompt N: changes of earlier prompts stay", async () => {
    const { workspace, state, path } = await fourKinds(await tempDir());
    const plan = await planRewind({ session: path, workspace, stateDir: state, to: 2 });
    expect(planned(plan)).toEqual([{ path: "crlf.txt", kind: "restore" }]);
    await applyRewind(plan);
    expect(bytesOf(workspace, "crlf.txt")).toEqual(Buffer.from("one\r\n2\r\n"));
    expect(bytesOf(workspace, "run.sh").toString()).toBe("#!/bin/sh\necho bye\n");
  });

  it("refuses a file changed outside since, with a short diff, and restores the others", async () => {
    const { workspace, state, path } = await fourKinds(await tempDir());
    await writeFile(join(workspace, "bom.txt"), "\uFEFFbye\nadded by the user\n");
    await writeFile(join(workspace, "made/new.txt"), "new\nmine too\n");
    const plan = await planRewind({ session: path, workspace, stateDir: state, to: 1 });
    const refusals = plan.actions.flatMap((a) =>
      a.kind === "refuse" ? [{ path: a.path, reason: a.reason, diff: a.diff }] : [],
    );
    expect(refusals).toEqual([
      {
        path: "bom.txt",
        reason: "it changed since the agent's last change",
        diff: [
          "--- bom.txt before prompt 1",
          "+++ bom.txt now",
          "-\uFEFFhello",
          "+\uFEFFbye",
          "+added by the user",
        ],
      },
      {
        path: "made/new.txt",
        reason: "it changed since the agent's last change",
        diff: [
          "--- made/new.txt before prompt 1 (absent)",
          "+++ made/new.txt now",
          "+new",
          "+mine too",
        ],
      },
      {
        path: "made/",
        reason: "the folder is not empty (it holds new.txt): it is kept",
        diff: [],
      },
    ]);
    const outcomes = await applyRewind(plan);
    expect(outcomes.map((o) => `${o.kind} ${o.path}`)).toEqual([
      "refused bom.txt",
      "restored crlf.txt",
      "restored latin1.txt",
      "refused made/new.txt",
      "restored run.sh",
      "refused made/",
    ]);
    expect(bytesOf(workspace, "bom.txt").toString()).toBe("\uFEFFbye\nadded by the user\n");
    expect(bytesOf(workspace, "made/new.txt").toString()).toBe("new\nmine too\n");
    expect(bytesOf(workspace, "latin1.txt")).toEqual(latin1);
  });

  it("refuses a file whose mode changed since, and one the user removed", async () => {
    const { workspace, state, path } = await fourKinds(await tempDir());
    await chmod(join(workspace, "run.sh"), 0o700);
    await unlink(join(workspace, "latin1.txt"));
    const plan = await planRewind({ session: path, workspace, stateDir: state, to: 1 });
    const refusals = plan.actions.flatMap((a) =>
      a.kind === "refuse" ? [`${a.path}: ${a.reason}`] : [],
    );
    expect(refusals).toEqual([
      "latin1.txt: it was removed since the agent's last change",
      "run.sh: its mode changed since the agent's last change (0755 then, 0700 now)",
    ]);
  });

  it("changes nothing when only planned (a dry run)", async () => {
    const { workspace, state, path } = await fourKinds(await tempDir());
    const files = ["crlf.txt", "bom.txt", "latin1.txt", "run.sh", "made/new.txt"];
    const before = files.map((file) => [bytesOf(workspace, file), modeOf(workspace, file)]);
    await planRewind({ session: path, workspace, stateDir: state, to: 1 });
    expect(files.map((file) => [bytesOf(workspace, file), modeOf(workspace, file)])).toEqual(
      before,
    );
  });

  it("refuses a file whose bytes before were not kept, and one whose blob is missing", async () => {
    const home = await tempDir();
    const session = await trackedRunner(
      home,
      [
        [
          call("r1", "read", { path: "big.txt" }),
          call("r2", "read", { path: "small.txt" }),
          call("e1", "edit", { path: "big.txt", oldText: "z", newText: "y" }),
          call("e2", "edit", { path: "small.txt", oldText: "s", newText: "t" }),
          done,
        ],
        [text("ok"), done],
      ],
      { fileCap: 100 },
    );
    await writeFile(join(session.workspace, "big.txt"), `${"x".repeat(199)}z`);
    await writeFile(join(session.workspace, "small.txt"), "s");
    await session.runner.runTurn("go");
    await session.journal.close();
    await unlink(join(session.blobs, contentHash("s")));
    const plan = await planRewind({
      session: session.path,
      workspace: session.workspace,
      stateDir: session.state,
      to: 1,
    });
    expect(
      plan.actions.map((a) => (a.kind === "refuse" ? `${a.path}: ${a.reason}` : a.kind)),
    ).toEqual([
      "big.txt: its bytes before prompt 1 were not kept (the file is 200 bytes, over the 100 bytes a session keeps of one file)",
      `small.txt: its bytes before prompt 1 are missing from the session's blob store (${contentHash("s")})`,
    ]);
  });

  it("rewinds a session continued later, counting its prompts across runs", async () => {
    const home = await tempDir();
    const first = await trackedRunner(home, [
      [
        call("r1", "read", { path: "a.txt" }),
        call("e1", "edit", { path: "a.txt", oldText: "0", newText: "1" }),
        done,
      ],
      [text("one"), done],
    ]);
    await writeFile(join(first.workspace, "a.txt"), "0");
    await first.runner.runTurn("first");
    await first.journal.close();
    const later = await trackedRunner(
      home,
      [
        [
          call("r2", "read", { path: "a.txt" }),
          call("e2", "edit", { path: "a.txt", oldText: "1", newText: "2" }),
          done,
        ],
        [text("two"), done],
        [call("e3", "edit", { path: "a.txt", oldText: "2", newText: "3" }), done],
        [text("three"), done],
      ],
      { resume: true },
    );
    await later.runner.runTurn("second");
    await later.runner.runTurn("third");
    await later.journal.close();
    expect(await readFile(join(later.workspace, "a.txt"), "utf8")).toBe("3");
    const plan = await planRewind({
      session: later.path,
      workspace: later.workspace,
      stateDir: later.state,
      to: 2,
    });
    expect(plan.prompts).toBe(3);
    await applyRewind(plan);
    expect(await readFile(join(later.workspace, "a.txt"), "utf8")).toBe("1");
  });
});

/** A session of two prompts: the first edits a.txt from "0" to "1", the second to "2". */
async function twoEdits(home: string) {
  const session = await trackedRunner(home, [
    [
      call("r1", "read", { path: "a.txt" }),
      call("e1", "edit", { path: "a.txt", oldText: "0", newText: "1" }),
      done,
    ],
    [text("one"), done],
    [call("e2", "edit", { path: "a.txt", oldText: "1", newText: "2" }), done],
    [text("two"), done],
  ]);
  await writeFile(join(session.workspace, "a.txt"), "0");
  await session.runner.runTurn("first");
  await session.runner.runTurn("second");
  await session.journal.close();
  return session;
}

describe("rewinding twice", () => {
  it("records what a rewind put back, so a rewind to an earlier prompt goes on from there", async () => {
    const home = await tempDir();
    const session = await twoEdits(home);
    const rewind = async (to: number) => {
      const opened = await Session.open(session.path);
      try {
        const plan = await planRewind({ session: session.path, workspace: session.workspace, to });
        return await applyRewind(plan, (record) => opened.session.record(record));
      } finally {
        await opened.session.close();
      }
    };
    expect(await rewind(2)).toEqual([{ kind: "restored", path: "a.txt" }]);
    expect(await readFile(join(session.workspace, "a.txt"), "utf8")).toBe("1");
    expect(await rewind(1)).toEqual([{ kind: "restored", path: "a.txt" }]);
    expect(await readFile(join(session.workspace, "a.txt"), "utf8")).toBe("0");
    expect(recordsOf(session.path).filter((r) => r.type === "file_restore")).toEqual([
      {
        type: "file_restore",
        to: 2,
        path: "a.txt",
        before: contentHash("2"),
        after: contentHash("1"),
        mode: fresh,
      },
      {
        type: "file_restore",
        to: 1,
        path: "a.txt",
        before: contentHash("1"),
        after: contentHash("0"),
        mode: fresh,
      },
    ]);
  });
});

describe("rewinding files on a branch", () => {
  it("counts the prompts of the current branch, and goes back to just before prompt N on it", async () => {
    const home = await tempDir();
    const first = await twoEdits(home);
    // The conversation alone goes back to just before prompt 2: a.txt keeps "2".
    const opened = await Session.open(first.path);
    await opened.session.record({ type: "rewind", to: 2 });
    await opened.session.close();
    const options = { session: first.path, workspace: first.workspace, stateDir: first.state };
    await expect(planRewind({ ...options, to: 3 })).rejects.toThrow(
      "the session has 1 prompt: --to must be 1",
    );
    // Prompt 2 again, the one the conversation left last: the files of that rewind, left as they were.
    const again = await planRewind({ ...options, to: 2 });
    expect([again.again, again.prompt, planned(again)]).toEqual([
      true,
      "second",
      [{ path: "a.txt", kind: "restore" }],
    ]);

    const later = await trackedRunner(
      home,
      [
        [
          call("r2", "read", { path: "a.txt" }),
          call("e3", "edit", { path: "a.txt", oldText: "2", newText: "3" }),
          done,
        ],
        [text("three"), done],
      ],
      { resume: true },
    );
    await later.runner.runTurn("second, again");
    await later.journal.close();
    // Prompt 2 of the branch is "second, again": just before it, a.txt held "2".
    const plan = await planRewind({ ...options, to: 2 });
    expect(plan.prompt).toBe("second, again");
    expect(await applyRewind(plan)).toEqual([{ kind: "restored", path: "a.txt" }]);
    expect(await readFile(join(later.workspace, "a.txt"), "utf8")).toBe("2");
  });
});

describe("a rewind cut off", () => {
  it("is finished by running it again, whether the kill came before or after a file's record", async () => {
    const { workspace, state, path } = await fourKinds(await tempDir());
    const options = { session: path, workspace, stateDir: state, to: 1 };
    const opened = await Session.open(path);
    const record = (r: FileRestoreRecord) => opened.session.record(r);
    const plan = await planRewind(options);
    // Killed after two files and their records, then after the third file's rename, before its record.
    await applyRewind({ ...plan, actions: plan.actions.slice(0, 2) }, record);
    await applyRewind({ ...plan, actions: plan.actions.slice(2, 3) });
    const again = await planRewind(options);
    expect(planned(again)).toEqual([
      { path: "made/new.txt", kind: "delete" },
      { path: "run.sh", kind: "restore" },
      { path: "made/", kind: "remove-folder" },
    ]);
    expect(await applyRewind(again, record)).toEqual([
      { kind: "deleted", path: "made/new.txt" },
      { kind: "restored", path: "run.sh" },
      { kind: "removed", path: "made/" },
    ]);
    await opened.session.close();
    expect(bytesOf(workspace, "crlf.txt")).toEqual(Buffer.from("one\r\ntwo\r\n"));
    expect(bytesOf(workspace, "latin1.txt")).toEqual(latin1);
    expect(planned(await planRewind(options))).toEqual([]);
  });

  it("removes the temporary file a killed rewind of this session left beside a file it restores, and no other", async () => {
    const { workspace, state, path } = await fourKinds(await tempDir());
    const left = [
      ".mini-agent-rewind-s1-0a1b2c.tmp",
      ".mini-agent-rewind-s2-0a1b2c.tmp",
      ".mini-agent-0a1b2c.tmp",
    ];
    for (const name of left) await writeFile(join(workspace, name), "half");
    const plan = await planRewind({ session: path, workspace, stateDir: state, to: 2 });
    expect(await applyRewind(plan)).toEqual([{ kind: "restored", path: "crlf.txt" }]);
    expect(left.filter((name) => existsSync(join(workspace, name)))).toEqual([
      ".mini-agent-rewind-s2-0a1b2c.tmp",
      ".mini-agent-0a1b2c.tmp",
    ]);
  });
});
