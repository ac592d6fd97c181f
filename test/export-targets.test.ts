import { execFileSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { lstat, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Session } from "../src/session/session.js";
import { runBin } from "./support/cli.js";
import { useExportSetup } from "./support/export.js";

/**
 * Where `mini-agent export` may write: only a regular file is ever replaced (a device node or a
 * FIFO is refused even with --force), and a stdout that fails is one line, exit 1.
 */

const setup = useExportSetup();

async function small(session: Session): Promise<void> {
  await session.append({ role: "user", content: "hello" });
  await session.append({ role: "assistant", content: "hi", toolCalls: [] });
}

/** What identifies a node: its kind and device numbers, so a replacement shows. */
async function node(path: string): Promise<string> {
  const info = await lstat(path);
  const kind = info.isCharacterDevice() ? "char" : info.isFIFO() ? "fifo" : "other";
  return `${kind} ${info.rdev}`;
}

describe("export -o onto what is not a regular file", () => {
  it("refuses a device node or a FIFO even with --force: one line, exit 2, the node untouched", async () => {
    const s = await setup();
    await s.session("s1", small);
    // Private nodes in the test's own folder: a null device (1,3) and a FIFO.
    const device = join(s.workspace, "null");
    const fifo = join(s.workspace, "fifo");
    execFileSync("mknod", ["-m", "666", device, "c", "1", "3"]);
    execFileSync("mkfifo", [fifo]);
    const before = [await node(device), await node(fifo)];
    for (const target of [device, fifo]) {
      for (const force of [["--force"], []]) {
        expect(await s.run(["s1", "-o", target, ...force])).toEqual({
          code: 2,
          stdout: "",
          stderr: `mini-agent: cannot write ${target}: it is not a regular file (a device, FIFO or socket is never replaced)\n`,
        });
      }
    }
    expect([await node(device), await node(fifo)]).toEqual(before);
    expect((await readdir(s.workspace)).sort()).toEqual(["fifo", "null"]);
  }, 30_000);

  it("with --force replaces a symlink itself, never what it points to", async () => {
    const s = await setup();
    await s.session("s1", small);
    const device = join(s.workspace, "null");
    execFileSync("mknod", ["-m", "666", device, "c", "1", "3"]);
    const notes = join(s.workspace, "notes.txt");
    await writeFile(notes, "my notes");
    for (const [name, to] of [
      ["to-device.html", device],
      ["to-file.html", notes],
    ] as const) {
      const link = join(s.workspace, name);
      await symlink(to, link);
      expect((await s.run(["s1", "-o", link, "--force"])).code).toBe(0);
      expect((await lstat(link)).isFile()).toBe(true);
      expect((await readFile(link, "utf8")).startsWith("<!doctype html>")).toBe(true);
    }
    expect(await node(device)).toBe("char 259");
    expect(await readFile(notes, "utf8")).toBe("my notes");
    expect((await stat(device)).isCharacterDevice()).toBe(true);
  }, 30_000);

  it("a stdout that fails (a full device) is one line and exit 1", async () => {
    const s = await setup();
    await s.session("s1", small);
    const full = join(s.workspace, "full");
    execFileSync("mknod", ["-m", "666", full, "c", "1", "7"]);
    const fd = openSync(full, "w");
    try {
      const run = await runBin(["export", "s1", "-o", "-"], {
        cwd: s.workspace,
        env: s.env,
        stdout: fd,
      });
      expect(run).toEqual({
        code: 1,
        stdout: "",
        stderr: "mini-agent: cannot write to stdout: no space left on device (ENOSPC)\n",
      });
    } finally {
      closeSync(fd);
    }
  }, 30_000);
});
