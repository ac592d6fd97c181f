import { execFile } from "node:child_process";
import { lstatSync, type Stats, statSync } from "node:fs";
import { mkdir, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { contentHash } from "../src/crypto.js";
import { branchPrompts } from "../src/rewind/history.js";
import { LeftOutFolders } from "../src/rewind/left-out.js";
import { changesBetween, WorkspaceSnapshot } from "../src/rewind/snapshot.js";
import { BlobStore } from "../src/session/blobs.js";
import { Session } from "../src/session/session.js";
import { useTempDirs } from "./support/temp.js";

/**
 * The workspace snapshot bash calls are undone from: every file kept the first time it is seen,
 * a copy (never a link), and a change found where stat information cannot tell it.
 */

const tempDir = useTempDirs();
const run = promisify(execFile);

async function snapshotOf(options: ConstructorParameters<typeof WorkspaceSnapshot>[2] = {}) {
  const workspace = await tempDir();
  const state = await tempDir();
  const store = new BlobStore(join(state, "s.snapshot"));
  return { workspace, store, snapshot: new WorkspaceSnapshot(workspace, store, options) };
}

/** The owner and group a file this process makes has, which the snapshot records. */
const mine = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };

const walked = (snapshot: WorkspaceSnapshot) => {
  const walk = snapshot.walk();
  if (walk.kind !== "walked") throw new Error(walk.reason);
  return walk.seen;
};

describe("the workspace snapshot", () => {
  it("keeps every file at first sight, as a 0600 copy that a rewrite in place cannot reach", async () => {
    const { workspace, store, snapshot } = await snapshotOf();
    await writeFile(join(workspace, "notes.txt"), "never read\n");
    await mkdir(join(workspace, "sub"));
    await writeFile(join(workspace, "sub", "b.bin"), Buffer.from([0, 255, 13, 10]));
    const before = walked(snapshot);
    const hash = contentHash("never read\n");
    expect(before.get("notes.txt")?.state).toEqual({ hash, mode: 0o644, ...mine });
    // A rewrite in place (O_TRUNC) of the workspace's file leaves the kept copy whole.
    await writeFile(join(workspace, "notes.txt"), "");
    expect(store.get(hash)?.toString()).toBe("never read\n");
    expect(statSync(join(store.dir, hash)).mode & 0o777).toBe(0o600);
    expect(statSync(join(store.dir, hash)).nlink).toBe(1);
    expect(store.get(contentHash(Buffer.from([0, 255, 13, 10])))).toBeDefined();
  });

  it("says what a call changed: files, folders, modes and links, made and removed", async () => {
    const { workspace, snapshot } = await snapshotOf();
    await writeFile(join(workspace, "a.txt"), "a");
    await mkdir(join(workspace, "d"));
    await writeFile(join(workspace, "d", "in.txt"), "in");
    const before = walked(snapshot);
    await writeFile(join(workspace, "a.txt"), "A");
    await rm(join(workspace, "d"), { recursive: true });
    await symlink("a.txt", join(workspace, "l"));
    const after = walked(snapshot);
    expect(changesBetween(before, after)).toEqual([
      {
        path: "a.txt",
        before: { hash: contentHash("a"), mode: 0o644, ...mine },
        after: { hash: contentHash("A"), mode: 0o644, ...mine },
      },
      { path: "d", before: { folder: true, mode: 0o755 }, after: null },
      { path: "d/in.txt", before: { hash: contentHash("in"), mode: 0o644, ...mine }, after: null },
      { path: "l", before: null, after: { link: "a.txt" } },
    ]);
  });

  it("finds a same-size write whose stat information is unchanged (one timestamp tick) by its content", async () => {
    // A coarse clock: the file's stat information as the first walk saw it, whatever is written.
    const frozen = new Map<string, Stats>();
    const lstat = (path: string) => {
      const info = frozen.get(path) ?? lstatSync(path);
      if (path.endsWith("same.txt")) frozen.set(path, info);
      return info;
    };
    const { workspace, snapshot } = await snapshotOf({ lstat });
    await writeFile(join(workspace, "same.txt"), "AAAA");
    const before = walked(snapshot);
    await writeFile(join(workspace, "same.txt"), "BBBB");
    const after = walked(snapshot);
    expect(changesBetween(before, after)).toEqual([
      {
        path: "same.txt",
        before: { hash: contentHash("AAAA"), mode: 0o644, ...mine },
        after: { hash: contentHash("BBBB"), mode: 0o644, ...mine },
      },
    ]);
  });

  it("gives up a file that keeps changing while it is copied, and says so", async () => {
    let tick = 0;
    const lstat = (path: string) => {
      const info = lstatSync(path);
      // Every look finds a new change time: the file is being written all the while.
      if (path.endsWith("busy.log")) info.ctimeMs += ++tick;
      return info;
    };
    const { workspace, snapshot } = await snapshotOf({ lstat });
    await writeFile(join(workspace, "busy.log"), "x");
    const seen = walked(snapshot).get("busy.log");
    expect(seen?.unkept).toBe("it kept changing while it was copied");
  });

  it("goes on from what a walk stopped by its time bound had copied", async () => {
    const now = Date.now;
    const lstat = (path: string) => {
      // The clock passes the walk's bound at its first look: the walk stops at its next check.
      vi.spyOn(Date, "now").mockImplementation(() => now() + 1100);
      return lstatSync(path);
    };
    const { workspace, store, snapshot } = await snapshotOf({ lstat, boundMs: 1000 });
    for (let i = 0; i < 1100; i++) await writeFile(join(workspace, `f${i}.txt`), `file ${i}\n`);
    expect(snapshot.walk()).toEqual({
      kind: "skipped",
      reason: "the snapshot of the workspace took over 1 s",
    });
    const copies = vi.spyOn(store, "putFile");
    expect(walked(snapshot).size).toBe(1100);
    expect(copies).toHaveBeenCalledTimes(1100 - 1024);
    vi.restoreAllMocks();
  });

  it("keeps git's objects and packs by hard link, its refs and index by content", async () => {
    const { workspace, store, snapshot } = await snapshotOf();
    const git = (...args: string[]) =>
      run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
        cwd: workspace,
      });
    await git("init", "-q");
    await writeFile(join(workspace, "a.txt"), "a\n");
    await git("add", "a.txt");
    await git("commit", "-q", "-m", "one");
    await git("gc", "-q");
    await writeFile(join(workspace, "a.txt"), "b\n");
    await git("commit", "-q", "-am", "two");
    const seen = walked(snapshot);
    const objects = [...seen.keys()].filter((path) =>
      /^\.git\/objects\/(pack\/pack-\w+\.(pack|idx)|[0-9a-f]{2}\/\w{38})$/.test(path),
    );
    expect(objects.filter((path) => path.endsWith(".pack"))).toHaveLength(1);
    expect(objects.length).toBeGreaterThan(4);
    for (const path of objects) {
      const kept = seen.get(path)?.state;
      const hash = kept && "hash" in kept ? kept.hash : "";
      const file = statSync(join(workspace, path));
      // The same file, not a copy.
      expect(statSync(join(store.dir, "linked", hash)).ino).toBe(file.ino);
    }
    // Not copied, so kept whatever its size.
    const small = new BlobStore(join(await tempDir(), "small.snapshot"));
    const tight = walked(new WorkspaceSnapshot(workspace, small, { fileCap: 3 }));
    for (const path of objects) expect(tight.get(path)?.unkept).toBeUndefined();
    expect(tight.get(".git/HEAD")?.unkept).toMatch(/over the 3 bytes/);
    for (const path of [".git/HEAD", ".git/index", ".git/refs/heads/master", ".git/logs/HEAD"]) {
      const kept = seen.get(path)?.state;
      expect(kept && "hash" in kept && statSync(join(store.dir, kept.hash)).nlink).toBe(1);
    }
  });

  it("leaves out the excluded folders, and says a file over the size limit is not kept", async () => {
    const workspace = await tempDir();
    const state = join(workspace, "state");
    const store = new BlobStore(join(await tempDir(), "s.snapshot"));
    const snapshot = new WorkspaceSnapshot(workspace, store, { fileCap: 3, exclude: [state] });
    await mkdir(state);
    await writeFile(join(state, "session.jsonl"), "{}\n");
    await writeFile(join(workspace, "big.txt"), "four");
    const seen = walked(snapshot);
    expect([...seen.keys()]).toEqual(["big.txt"]);
    expect(seen.get("big.txt")?.unkept).toBe(
      "the file is 4 bytes, over the 3 bytes the snapshot keeps of one file",
    );
    expect(await readdir(store.dir).catch(() => [])).toEqual([]);
  });
});

describe("the prompts /rewind lists", () => {
  it("name the files bash changed in their turn, not 'no file changed'", async () => {
    const dir = await tempDir();
    const session = await Session.create({
      dir,
      workspace: dir,
      model: "claude-sonnet-5-5",
      sandbox: "off",
      id: "s1",
      env: {},
    });
    await session.append({ role: "user", content: "run the tests" });
    await session.append({
      role: "assistant",
      content: "",
      toolCalls: [{ id: "b1", name: "bash", input: { command: "touch made-by-bash.txt" } }],
    });
    const made = { hash: contentHash(""), mode: 0o644, ...mine };
    await session.record({
      type: "bash_change",
      toolCallId: "b1",
      paths: ["made-by-bash.txt"],
      files: [{ path: "made-by-bash.txt", before: null, after: made }],
    });
    await session.append({ role: "tool", toolCallId: "b1", content: "", isError: false });
    await session.close();
    expect(await branchPrompts(session.path)).toEqual([
      { number: 1, text: "run the tests", files: ["made-by-bash.txt"] },
    ]);
  });
});

describe("the rule that leaves a folder out", () => {
  it("reads git's patterns from .gitignore and .git/info/exclude, the last match deciding", async () => {
    const workspace = await tempDir();
    await writeFile(
      join(workspace, ".gitignore"),
      "# deps\nnode_modules/\n/target\n*.cache\n**/dist\nout/**\n!keep.cache\n",
    );
    await mkdir(join(workspace, ".git", "info"), { recursive: true });
    await writeFile(join(workspace, ".git", "info", "exclude"), ".venv\n");
    const rule = new LeftOutFolders(workspace);
    rule.refresh();
    const ignored = (paths: string[]) => paths.filter((path) => rule.ignored(path));
    expect(
      ignored([
        "node_modules",
        "a/node_modules",
        "target",
        "a/target",
        "x.cache",
        "keep.cache",
        "dist",
        "a/b/dist",
        "out/x",
        "out",
        ".venv",
        "src",
      ]),
    ).toEqual([
      "node_modules",
      "a/node_modules",
      "target",
      "x.cache",
      "dist",
      "a/b/dist",
      "out/x",
      ".venv",
    ]);
  });

  it("matches in time linear in the name: a pattern of many stars does not hang the walk", async () => {
    const workspace = await tempDir();
    await writeFile(join(workspace, ".gitignore"), "*a*a*a*a*a*a*a*b\n[ab]?c*/d\nx/**/y\n");
    const rule = new LeftOutFolders(workspace);
    rule.refresh();
    const long = "a".repeat(400);
    expect(rule.ignored(long)).toBe(false);
    expect(rule.ignored(`${long}b`)).toBe(true);
    expect(rule.ignored(`q/${long}b`)).toBe(true);
    expect(
      ["bxcz/d", "q/axc/d", "cxc/d", "x/y", "x/1/2/y", "xx/y"].filter((p) => rule.ignored(p)),
    ).toEqual(["bxcz/d", "x/y", "x/1/2/y"]);
  });
});
