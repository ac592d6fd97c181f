import { spawn } from "node:child_process";
import { mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Pace } from "../src/tools/search/pace.js";
import { loadRE2 } from "../src/tools/search/re2.js";
import { lineSearch, searchFile } from "../src/tools/search/scan.js";
import { Skips } from "../src/tools/search/skips.js";
import { listFolder, walk } from "../src/tools/search/walk.js";
import { useWorkspace } from "./support/workspace.js";

/**
 * `grep` opens the files its walk found by path. A folder on that path swapped for a symlink
 * after the walk listed it leads the open outside the workspace: what was opened is checked
 * before a byte of it is searched.
 */

const workspace = useWorkspace();
// The grep tool loads re2js before it compiles a pattern; these tests call the compiler.
beforeAll(loadRE2);

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("grep never searches a file that its path led outside the workspace", () => {
  it("checks where the opened file is, not the path it was opened by", async () => {
    const ws = await workspace();
    await writeFile(join(ws.outside, "f.txt"), "SECRET needle\n");
    await symlink(ws.outside, join(ws.root, "sub"));
    const found: string[] = [];
    const search = lineSearch("needle", false, (_, line) => found.push(line) > 0);
    const path = Buffer.from(join(ws.root, "sub", "f.txt"));
    const inside = (real: Buffer) => real.toString().startsWith(`${ws.root}/`);
    expect(await searchFile(path, search, new Pace(undefined), { inside })).toBe("outside");
    expect(found).toEqual([]);
    // The same file, reached inside, is searched.
    await rm(join(ws.root, "sub"));
    await mkdir(join(ws.root, "sub"));
    await writeFile(join(ws.root, "sub", "f.txt"), "inside needle\n");
    expect(await searchFile(path, search, new Pace(undefined), { inside })).toBe("done");
    expect(found).toEqual(["inside needle"]);
  });

  it("lists no name of a folder that its path led outside the workspace", async () => {
    const ws = await workspace();
    await writeFile(join(ws.outside, "outside-name.txt"), "x\n");
    await symlink(ws.outside, join(ws.root, "sub"));
    const skips = new Skips();
    const names: string[] = [];
    for await (const entry of walk(ws.root, Buffer.from(join(ws.root, "sub")), { skips }))
      names.push(entry.rel);
    expect(names).toEqual([]);
    expect(skips.note()).toBe(
      "[skipped 1 entry: 1 entry found outside the workspace when opened (a folder on its path was swapped)]",
    );
  });

  it("ls of a folder that became a link outside refuses instead of listing it", async () => {
    const ws = await workspace();
    await writeFile(join(ws.outside, "outside-name.txt"), "x\n");
    await mkdir(join(ws.root, "sub"));
    await writeFile(join(ws.root, "sub", "inside.txt"), "x\n");
    const real = Buffer.from(join(ws.root, "sub"));
    expect(await listFolder(Buffer.from(ws.root), real)).not.toBe("outside");
    await rm(join(ws.root, "sub"), { recursive: true });
    await symlink(ws.outside, join(ws.root, "sub"));
    // The path ls resolved a moment before, now a link outside.
    expect(await listFolder(Buffer.from(ws.root), real)).toBe("outside");
  });

  for (const mode of ["js", "rg"] as const) {
    it(`shows no outside line or name while a folder is swapped for a link outside (${mode})`, async () => {
      const ws = await workspace();
      await mkdir(join(ws.root, "real"));
      for (let i = 0; i < 200; i++) {
        await writeFile(join(ws.root, "real", `f${i}.txt`), "filler needle\n");
        await writeFile(join(ws.outside, `outside-${i}.txt`), `SECRET needle ${i}\n`);
      }
      // Another process swaps ws/sub between the real folder and a link outside, for 4 s.
      const swapper = spawn(
        "bash",
        [
          "-c",
          `cd "$1"; end=$((SECONDS+4)); while [ $SECONDS -lt $end ]; do mv -T real sub; mv -T sub real; ln -sfn "$2" sub; rm -f sub; done`,
          "swap",
          ws.root,
          ws.outside,
        ],
        { stdio: "ignore" },
      );
      const done = new Promise((resolve) => swapper.on("exit", resolve));
      vi.stubEnv("MINI_AGENT_SEARCH", mode === "rg" ? "" : "js");
      const leaks: string[] = [];
      let calls = 0;
      let finished = false;
      void done.then(() => {
        finished = true;
      });
      while (!finished) {
        calls++;
        for (const path of ["sub", "."]) {
          const result = await ws
            .run("grep", { pattern: "needle|filler", path })
            .catch(() => undefined);
          const text = String(result?.content ?? "");
          if (text.includes("SECRET"))
            leaks.push(text.split("\n").find((l) => l.includes("SECRET")) ?? "");
        }
      }
      await rename(join(ws.root, "sub"), join(ws.root, "real")).catch(() => {});
      expect(calls).toBeGreaterThan(10);
      expect(leaks).toEqual([]);
    }, 30_000);
  }
});
