// The workspace snapshot taken before and after each bash call, on trees of 10k and 100k files:
// a walk with nothing changed and with 10 files changed, against a bare Node `lstat` walk of the
// same tree (the floor), warm cache; the cold first walk (every file copied) beside it.

import { lstatSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** Files per folder of the benched trees. */
const PER_FOLDER = 100;

export async function snapshotBench({ row, ms, median, scratch, root, runs }) {
  const dist = (path) => import(pathToFileURL(join(root, "dist", path)).href);
  const { WorkspaceSnapshot } = await dist("rewind/snapshot.js");
  const { BlobStore } = await dist("session/blobs.js");
  for (const files of [10_000, 100_000]) {
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
}

/** The floor: every entry of the tree `lstat`ed, folders read, nothing else. */
function lstatWalk(top) {
  const folders = [top];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop())
    for (const name of readdirSync(folder)) {
      const path = `${folder}/${name}`;
      if (lstatSync(path, { bigint: true }).isDirectory()) folders.push(path);
    }
}
