// The workspace snapshot taken before and after each bash call, on trees of 10k and 100k files:
// a walk with nothing changed and with 10 files changed, against a bare Node `lstat` walk of the
// same tree (the floor), warm cache; the cold first walk (every file copied) beside it. Then the
// rewind of a bash call that rewrote 1,000 files, through the tracked bash tool and the session
// runner with a scripted model, against a floor that writes the 1,000 files' old bytes back.

import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** Files per folder of the benched trees. */
const PER_FOLDER = 100;

export async function snapshotBench({ row, ms, median, scratch, root, runs }) {
  const dist = (path) => import(pathToFileURL(join(root, "dist", path)).href);
  const { WorkspaceSnapshot } = await dist("rewind/snapshot.js");
  const { BlobStore } = await dist("session/blobs.js");
  const sizes = process.env.BENCH_SNAPSHOT_FILES?.split(",").map(Number) ?? [10_000, 100_000];
  for (const files of sizes) {
    const workspace = join(scratch, `snapshot-${files}`);
    for (let d = 0; d < files / PER_FOLDER; d++) {
      mkdirSync(join(workspace, `d${d}`), { recursive: true });
      for (let f = 0; f < PER_FOLDER; f++)
        writeFileSync(join(workspace, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`.repeat(40));
    }
    // Out of the racy window (2 s), as a workspace is between two commands.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const store = new BlobStore(join(scratch, `snapshot-${files}.snapshot`), 2 ** 40);
    const snapshot = new WorkspaceSnapshot(workspace, store, { mostEntries: 2 * files });
    const time = (work) => {
      const start = performance.now();
      work();
      return performance.now() - start;
    };
    // The cold walks: each stops at its bound, and the next goes on from what it kept.
    let coldWalks = 0;
    let walked = false;
    const cold = time(() => {
      while (!walked) {
        coldWalks++;
        walked = snapshot.walk().kind === "walked";
      }
    });
    const bare = [];
    const warm = [];
    const ten = [];
    for (let i = 0; i < runs; i++) {
      bare.push(time(() => lstatWalk(workspace)));
      warm.push(time(() => snapshot.walk()));
    }
    for (let i = 0; i < runs; i++) {
      for (let f = 0; f < 10; f++)
        writeFileSync(join(workspace, `d${f}`, `f${i % PER_FOLDER}.txt`), `changed ${i}\n`);
      ten.push(time(() => snapshot.walk()));
    }
    const floor = median(bare);
    const n = files.toLocaleString("en-US");
    row(
      `bash snapshot, ${n} files, nothing changed (cold: ${ms(cold)} in ${coldWalks} walk${coldWalks === 1 ? "" : "s"})`,
      ms(median(warm)),
      ms(floor),
      `${(median(warm) / floor).toFixed(2)}×`,
      files === 10_000 ? "≤ 1.5× and ≤ 25 ms" : "≤ 1.5×",
    );
    row(
      `bash snapshot, ${n} files, 10 changed`,
      ms(median(ten)),
      ms(floor),
      `${(median(ten) / floor).toFixed(2)}×`,
    );
  }
  await rewindOfRewrite({ row, ms, median, scratch, root, runs });
}

/** The floor: every entry of the tree `lstat`ed (Node's cheapest form), folders read, nothing else. */
function lstatWalk(top) {
  const folders = [top];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop())
    for (const name of readdirSync(folder)) {
      const path = `${folder}/${name}`;
      if (lstatSync(path).isDirectory()) folders.push(path);
    }
}

/** Files the bash call of the rewind row rewrites. */
const REWRITTEN = 1000;

/**
 * The rewind of one bash call that rewrote 1,000 files of 1 KB (in 10 folders): the call runs
 * through the tracked bash tool (`--sandbox off`) in a session runner; then `planRewind` and
 * `applyRewind` put the files back. The floor writes each file's old bytes back, nothing checked.
 */
async function rewindOfRewrite({ row, ms, median, scratch, root, runs }) {
  const dist = (path) => import(pathToFileURL(join(root, "dist", path)).href);
  const { FileChanges } = await dist("rewind/changes.js");
  const { applyRewind, planRewind } = await dist("rewind/rewind.js");
  const { Journal } = await dist("runner/journal.js");
  const { SessionRunner } = await dist("runner/runner.js");
  const { Session } = await dist("session/session.js");
  const { SessionStore } = await dist("session/store.js");
  const { call, done, FakeClient, text } = await dist("testing/fake-client.js");
  const { createWorkspaceTools } = await dist("tools/index.js");
  const workspace = join(scratch, "rewrite-workspace");
  const state = join(scratch, "rewrite-state");
  const sessions = join(state, "sessions");
  const paths = [];
  for (let d = 0; d < 10; d++) {
    mkdirSync(join(workspace, `d${d}`), { recursive: true });
    for (let f = 0; f < REWRITTEN / 10; f++) {
      const path = join(workspace, `d${d}`, `f${f}.txt`);
      writeFileSync(path, `old ${d}/${f}\n`.repeat(100));
      paths.push(path);
    }
  }
  const old = paths.map((path) => readFileSync(path));
  const command = 'for f in d*/f*.txt; do echo rewritten > "$f"; done';
  const store = new SessionStore(state, () =>
    Session.create({ dir: sessions, workspace, model: "m", id: "rewrite" }),
  );
  const journal = new Journal(store);
  const changes = new FileChanges({ root: workspace, stateDir: state });
  const bash = { sandbox: { mode: "off" } };
  const runner = new SessionRunner({
    client: new FakeClient([
      [call("b1", "bash", { command }), done],
      [text("done"), done],
    ]),
    tools: changes.wrap(createWorkspaceTools(workspace, { stateDir: state, bash })),
    beforeToolCall: () => ({ approved: true }),
    journal,
    changes,
    system: async () => "s",
    info: { model: "m", workspace, sandbox: "off" },
  });
  await runner.runTurn("rewrite them");
  await journal.close();
  const rewritten = paths.map((path) => readFileSync(path));
  const session = join(sessions, "rewrite.jsonl");
  const ours = [];
  const floor = [];
  for (let i = 0; i < runs; i++) {
    for (const [at, path] of paths.entries()) writeFileSync(path, rewritten[at]);
    let start = performance.now();
    const outcomes = await applyRewind(await planRewind({ session, workspace, to: 1 }));
    ours.push(performance.now() - start);
    const restored = outcomes.filter((outcome) => outcome.kind === "restored").length;
    if (restored !== REWRITTEN) throw new Error(`rewrite bench: ${restored} files restored`);
    for (const [at, path] of paths.entries()) writeFileSync(path, rewritten[at]);
    start = performance.now();
    for (const [at, path] of paths.entries()) writeFileSync(path, old[at]);
    floor.push(performance.now() - start);
  }
  row(
    "rewind of a bash call that rewrote 1,000 files: plan and restore",
    ms(median(ours)),
    ms(median(floor)),
    `${(median(ours) / median(floor)).toFixed(2)}×`,
    "< 1 s",
  );
}
