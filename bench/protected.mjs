// The protected-file check around a sandboxed bash call (docs/sandbox.md, "In the sandbox") on a
// folder of 500 clones: the call `true` through the bash tool in bubblewrap, whose look before and
// check after walk the whole workspace, against the same call in an empty workspace (where the
// look finds nothing: the sandbox's start alone). Beside them, the walk alone (`findProtected`)
// against a bare Node walk of the same tree (readdir of every folder, nothing else).

import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const CLONES = 500;

export async function protectedBench({ row, ms, median, scratch, root, runs }) {
  const dist = (path) => import(pathToFileURL(join(root, "dist", path)).href);
  const { bashTool } = await dist("tools/bash.js");
  const { resolveSandbox } = await dist("sandbox/bwrap.js");
  const { findProtected } = await dist("protected/scan.js");
  if ((await resolveSandbox({ mode: "auto" })).kind !== "bwrap") {
    row("protected-file check, 500 clones", "no sandbox here", "", "", "≤ 2×");
    return;
  }
  const clones = join(scratch, "protected-clones");
  const empty = join(scratch, "protected-empty");
  mkdirSync(empty, { recursive: true });
  const template = join(scratch, "protected-template");
  const env = { PATH: process.env.PATH, HOME: scratch, GIT_CONFIG_NOSYSTEM: "1" };
  mkdirSync(join(template, "src"), { recursive: true });
  for (let i = 0; i < 40; i++) writeFileSync(join(template, "src", `f${i}.txt`), `${i}\n`);
  execFileSync("git", ["init", "-q"], { cwd: template, env });
  execFileSync("git", ["add", "-A"], { cwd: template, env });
  const who = ["-c", "user.name=b", "-c", "user.email=b@b"];
  execFileSync("git", [...who, "commit", "-qm", "x"], { cwd: template, env });
  for (let i = 0; i < CLONES; i++) cpSync(template, join(clones, `c${i}`), { recursive: true });

  const call = async (workspace) => {
    const bash = bashTool(workspace, { env, sandbox: { mode: "required" } });
    const start = performance.now();
    await bash.execute({ command: "true" });
    return performance.now() - start;
  };
  const bare = async (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }))
      if (entry.isDirectory()) await bare(join(folder, entry.name));
  };
  const timed = async (job) => {
    const start = performance.now();
    await job();
    return performance.now() - start;
  };
  const count = Math.max(runs, 7);
  await call(clones);
  await call(empty);
  const withClones = [];
  const alone = [];
  const walk = [];
  const floor = [];
  for (let i = 0; i < count; i++) {
    withClones.push(await call(clones));
    alone.push(await call(empty));
    walk.push(await timed(() => findProtected(clones)));
    floor.push(await timed(() => bare(clones)));
  }
  const a = median(withClones);
  const b = median(alone);
  row(
    `sandboxed bash call, look before and check after, ${CLONES} clones (${readdirSync(clones).length} folders at the top) vs an empty workspace`,
    ms(a),
    ms(b),
    `${(a / b).toFixed(2)}×`,
    "≤ 2×",
  );
  const w = median(walk);
  const f = median(floor);
  row(
    `the protected-file walk alone, ${CLONES} clones, vs a bare readdir walk`,
    ms(w),
    ms(f),
    `${(w / f).toFixed(2)}×`,
  );
}
