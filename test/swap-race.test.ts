import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdir, open, readdir, readFile, rename, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sameFileAt } from "../src/tools/open.js";
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
    try { fs.renameSync("dir", ".dir"); fs.symlinkSync(target, "dir"); } catch {}
    try { fs.unlinkSync("dir"); } catch { fs.rmSync("dir", { recursive: true, force: true }); }
    try { fs.renameSync(".dir", "dir"); } catch {}
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
    const refusals = new Set<string>();
    // At least 300 rounds; on a busy machine the swapper may be scheduled late, so the rounds go
    // on (up to 3,000 or 25 s) until calls have met both the symlink and the file inside.
    let writes = 0;
    const met = () => refusals.has("path escapes workspace") && writes > 0;
    const until = Date.now() + 25_000;
    for (let i = 0; i < 3000 && (i < 300 || (!met() && Date.now() < until)); i++) {
      for (const path of ["entry", "dir/secret.txt"]) {
        const result = await ws.run("read", { path });
        if (result.content.includes("outside")) leaks.push(`read ${path}: ${result.content}`);
        if (result.isError) refusals.add(result.content);
      }
      // The read just before counts as seeing `entry` when it met the file inside.
      const written = await ws.run("write", { path: "entry", content: `written ${i}\n` });
      if (!written.isError) writes++;
      await ws.run("write", { path: `dir/new-${i}.txt`, content: `written ${i}\n` });
      await ws.run("edit", { path: "dir/secret.txt", oldText: "secret", newText: "changed" });
    }
    swapper.kill("SIGKILL");
    // The swaps did happen while the tools ran: some calls met the symlink.
    expect(refusals).toContain("path escapes workspace");
    expect(writes).toBeGreaterThan(0);
    expect({
      leaks,
      outside: await readdir(ws.outside),
      target: await readdir(target),
      secret: await readFile(join(target, "secret.txt"), "utf8"),
    }).toEqual({
      leaks: [],
      outside: ["secret.txt", "target"],
      target: ["secret.txt"],
      secret: "outside secret\n",
    });
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
      // No read has met the file yet.
      "entry exists and has not been read in this session: read it first, then edit",
    ]);
    expect([...results].filter((content) => !allowed.has(content))).toEqual([]);
    expect(results).toContain("entry is not a regular file");
  });
});

describe("the identity check used where /proc is missing", () => {
  it("accepts the file still at its path and refuses a replaced file or a swapped folder", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "a", "b.txt": "b", "d/f.txt": "f" });
    const a = await open(join(ws.root, "a.txt"));
    const f = await open(join(ws.root, "d/f.txt"));
    try {
      const before = [
        await sameFileAt(a, join(ws.root, "a.txt")),
        await sameFileAt(f, join(ws.root, "d/f.txt")),
      ];
      await rename(join(ws.root, "b.txt"), join(ws.root, "a.txt"));
      await rename(join(ws.root, "d"), join(ws.root, "d2"));
      await symlink(join(ws.root, "d2"), join(ws.root, "d"));
      const after = [
        await sameFileAt(a, join(ws.root, "a.txt")),
        await sameFileAt(f, join(ws.root, "d/f.txt")),
      ];
      expect({ before, after }).toEqual({ before: [true, true], after: [false, false] });
    } finally {
      await a.close();
      await f.close();
    }
  });
});
