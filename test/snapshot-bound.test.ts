import { existsSync, linkSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileChanges } from "../src/rewind/changes.js";
import { boundSnapshots, droppedWhy } from "../src/rewind/store-bound.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, useCliSetup } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/**
 * The snapshot stores of all sessions are bounded together: the stores of the sessions written
 * longest ago go first (said in --sessions, named by a rewind), a store whose session is gone goes
 * with it, and the pre-images are never exported.
 */

const tempDir = useTempDirs();
const setup = useCliSetup();

const hash = (n: number) => n.toString(16).padStart(64, "0");

/** A session file written at `when` (seconds) with a store of `blobs` blobs of 100 bytes. */
function session(
  root: string,
  folder: string,
  id: string,
  when: number | undefined,
  blobs: number,
) {
  const dir = join(root, folder);
  mkdirSync(join(dir, `${id}.snapshot`), { recursive: true });
  for (let i = 0; i < blobs; i++)
    writeFileSync(join(dir, `${id}.snapshot`, hash(i + 1)), "x".repeat(100));
  const file = join(dir, `${id}.jsonl`);
  if (when !== undefined) {
    writeFileSync(file, "{}\n");
    utimesSync(file, when, when);
  }
  return file;
}

describe("the bound on all sessions' snapshot stores", () => {
  it("drops a store whose session is gone, then the oldest sessions' stores, never the current one", async () => {
    const root = await tempDir();
    const gone = session(root, "a", "gone", undefined, 1);
    const oldest = session(root, "a", "oldest", 1_000, 1);
    const older = session(root, "b", "older", 2_000, 1);
    const current = session(root, "b", "current", 500, 2);
    // A link the workspace still shares costs nothing: not counted.
    mkdirSync(join(root, "b", "older.snapshot", "linked"));
    writeFileSync(join(root, "object"), "y".repeat(1000));
    linkSync(join(root, "object"), join(root, "b", "older.snapshot", "linked", hash(9)));
    expect(boundSnapshots(root, current, 300)).toEqual([oldest]);
    const store = (file: string) => existsSync(file.replace(/\.jsonl$/, ".snapshot"));
    expect([gone, oldest, older, current].map(store)).toEqual([false, false, true, true]);
    expect(droppedWhy(oldest)).toMatch(
      /^\d{4}-\d\d-\d\d: the snapshots of all sessions passed their bound of [\d.e-]+ GiB, and this session was written longest ago$/,
    );
    expect(existsSync(join(root, "a", "gone.snapshot-dropped"))).toBe(false);
    expect(droppedWhy(older)).toBeUndefined();
  });
});

describe("the bound, as a session's bash calls begin", () => {
  it("is kept by FileChanges when a session's first turn starts", async () => {
    const state = await tempDir();
    const root = join(state, "sessions");
    const old = session(root, "w", "old", 1_000, 2);
    const changes = new FileChanges({ root: await tempDir(), stateDir: state, userSnapshotCap: 1 });
    changes.startTurn(join(root, "w", "new.jsonl"), async () => {});
    expect(droppedWhy(old)).toMatch(/passed their bound/);
  });
});

describe("a session whose store was dropped", () => {
  it("is marked in --sessions, and a rewind names why its files are not put back", async () => {
    const { workspace, home, options } = await setup([
      stream(turn({ calls: [{ id: "b1", name: "bash", input: { command: "echo new > a.txt" } }] })),
      stream(turn({ text: ["done"] })),
    ]);
    await writeFile(join(workspace, "a.txt"), "old\n");
    const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    const [file = ""] = (await sessionFiles(home)).filter((path) => path.endsWith(".jsonl"));
    const id = basename(file, ".jsonl");
    // Another session, newer, while the bound is tiny: this one's store goes.
    expect(boundSnapshots(join(home, "state", "sessions"), "/elsewhere.jsonl", 1)).toEqual([file]);
    const listed = await runBin(["--sessions"], options);
    expect(listed.stdout).toMatch(
      new RegExp(`^${id}  .+  go  \\(its bash pre-images were dropped\\)\\n$`),
    );
    const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
    expect(rewind.code).toBe(1);
    expect(rewind.stdout).toContain(
      `not restored a.txt: its bytes before prompt 1 were dropped with the session's snapshot store (${droppedWhy(file)})`,
    );
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("new\n");
  });

  it("exports no pre-image: a file's bytes before a bash call are not in the export", async () => {
    const command = "echo TOKEN=new > .env";
    const { workspace, options } = await setup([
      stream(turn({ calls: [{ id: "b1", name: "bash", input: { command } }] })),
      stream(turn({ text: ["done"] })),
    ]);
    await writeFile(join(workspace, ".env"), "TOKEN=kept-only-in-the-snapshot\n");
    expect((await runBin(["--allow-bash", "--sandbox", "off", "go"], options)).code).toBe(0);
    for (const format of ["md", "html"]) {
      const exported = await runBin(["export", "--format", format, "-o", "-"], options);
      expect(exported.code).toBe(0);
      expect(exported.stdout).toContain(".env");
      expect(exported.stdout).not.toContain("kept-only-in-the-snapshot");
    }
  });
});
