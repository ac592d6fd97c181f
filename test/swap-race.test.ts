import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { useWorkspace } from "./support/workspace.js";

const workspace = useWorkspace();

/**
 * Another local process that, as fast as it can, swaps workspace entries between something
 * harmless and something a tool must not touch: `entry` between a regular file and `other` (a
 * symlink to an outside file, or a FIFO), and `dir` between a folder and a symlink to an outside
 * folder. Every swap is a rename, so the entry always exists. Stops by itself after `ms`.
 */
const SWAPPER = `
const fs = require("node:fs");
const [root, kind, target, ms] = process.argv.slice(1);
process.chdir(root);
const deadline = Date.now() + Number(ms);
fs.writeFileSync(".file", "inside\\n");
if (kind === "link") { fs.symlinkSync(target + "/secret.txt", ".other"); fs.mkdirSync("dir"); fs.writeFileSync("dir/secret.txt", "inside\\n"); }
fs.linkSync(".file", "entry");
console.log("ready");
let swaps = 0;
while (Date.now() < deadline) {
  for (const name of [".other", ".file"]) {
    try { fs.linkSync(name, ".next"); fs.renameSync(".next", "entry"); } catch { try { fs.unlinkSync(".next"); } catch {} }
  }
  if (kind === "link") {
    try { fs.renameSync("dir", ".dir"); fs.symlinkSync(target, "dir"); fs.unlinkSync("dir"); fs.renameSync(".dir", "dir"); } catch {}
  }
  swaps++;
}
console.log(swaps);
`;

const swappers: ChildProcess[] = [];
afterEach(() => {
  for (const child of swappers.splice(0)) child.kill("SIGKILL");
});

async function startSwapper(root: string, kind: "link" | "fifo", target: string, ms: number) {
  const child = spawn(process.execPath, ["-e", SWAPPER, root, kind, target, String(ms)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  swappers.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`swapper exited early (${code})`)));
  });
  return child;
}

describe("a path swapped between check and use", () => {
  it("never reads outside content nor writes outside, however the entry is swapped", {
    timeout: 60_000,
  }, async () => {
    const ws = await workspace();
    const target = join(ws.outside, "target");
    await mkdir(target);
    await writeFile(join(target, "secret.txt"), "outside secret\n");
    const swapper = await startSwapper(ws.root, "link", target, 30_000);
    const leaks: string[] = [];
    const tries = 300;
    for (let i = 0; i < tries; i++) {
      for (const path of ["entry", "dir/secret.txt"]) {
        const result = await ws.run("read", { path });
        if (result.content.includes("outside")) leaks.push(`read ${path}: ${result.content}`);
      }
      await ws.run("write", { path: "entry", content: `written ${i}\n` });
      await ws.run("write", { path: `dir/new-${i}.txt`, content: `written ${i}\n` });
      await ws.run("edit", { path: "dir/secret.txt", oldText: "secret", newText: "changed" });
    }
    swapper.kill("SIGKILL");
    expect(leaks).toEqual([]);
    expect(await readdir(ws.outside)).toEqual(["secret.txt", "target"]);
    expect(await readdir(target)).toEqual(["secret.txt"]);
    expect(await readFile(join(target, "secret.txt"), "utf8")).toBe("outside secret\n");
  });

  it("never blocks on an entry swapped with a FIFO", { timeout: 30_000 }, async () => {
    const ws = await workspace();
    execFileSync("mkfifo", [join(ws.root, ".other")]);
    const swapper = await startSwapper(ws.root, "fifo", "", 20_000);
    const results = new Set<string>();
    for (let i = 0; i < 300; i++) {
      results.add((await ws.run("read", { path: "entry" })).content);
      results.add((await ws.run("edit", { path: "entry", oldText: "x", newText: "y" })).content);
    }
    swapper.kill("SIGKILL");
    const allowed = new Set([
      "inside",
      "entry is not a regular file",
      "entry changed while in use: try again",
      "oldText not found in entry",
      "read failed: no such file or directory",
      "edit failed: no such file or directory",
    ]);
    expect([...results].filter((content) => !allowed.has(content))).toEqual([]);
  });
});
