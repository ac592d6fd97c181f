import { execFileSync } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import { Session } from "../src/session/session.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, useCliSetup } from "./support/cli.js";

/**
 * A real full disk: a 64 KiB tmpfs mounted for the test (tests run as root). Where mounting is
 * not permitted the tests skip, except under CI, where they must run.
 */

const SIZE = 64 * 1024;
const mounted: string[] = [];
const setup = useCliSetup();

afterEach(async () => {
  for (const dir of mounted.splice(0)) {
    execFileSync("umount", [dir]);
    await rm(dir, { recursive: true, force: true });
  }
});

async function tinyDisk(context: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mini-agent-disk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${SIZE},mode=0700`, "tmpfs", dir], {
      stdio: "pipe",
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    if (process.env.CI) throw new Error(`CI must be able to mount a small tmpfs: ${error}`);
    context.skip();
  }
  mounted.push(dir);
  return dir;
}

/** Fills `disk` until only `free` bytes (rounded to pages by tmpfs) are left. */
function fill(disk: string, free: number): void {
  const fd = openSync(join(disk, "filler"), "w");
  try {
    const page = Buffer.alloc(4096, 1);
    for (let used = 0; used + page.length <= SIZE - free; used += page.length) {
      if (writeSync(fd, page) < page.length) break;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    closeSync(fd);
  }
}

const noSpace = (path: string) =>
  `cannot lock session file ${path}: ENOSPC (free space, or set MINI_AGENT_HOME to another folder)`;

describe("a full disk", () => {
  it("is what the tiny disk gives: a write past 64 KiB fails with ENOSPC", async (context) => {
    const disk = await tinyDisk(context);
    await expect(writeFile(join(disk, "big"), Buffer.alloc(SIZE + 4096))).rejects.toHaveProperty(
      "code",
      "ENOSPC",
    );
  });

  it("at start fails in one line and leaves no session file, lock or temp file", async (context) => {
    const disk = await tinyDisk(context);
    fill(disk, 0);
    const dir = join(disk, "sessions");
    const create = Session.create({ dir, workspace: "/ws", model: "m", id: "s1", env: {} });
    await expect(create).rejects.toHaveProperty("message", noSpace(join(dir, "s1.jsonl")));
    expect(await readdir(dir)).toEqual([]);
  });

  it.for([
    ["at start", 0, 0],
    ["mid-session", 40 * 1024, 1],
  ] as const)(
    "%s stops the CLI with one line naming the state folder and what to do",
    async ([, free, files], context) => {
      const disk = await tinyDisk(context);
      const read = (id: string) => ({ id, name: "read", input: { path: "big.txt" } });
      const { workspace, options } = await setup([
        stream(turn({ calls: [read("toolu_1")] })),
        stream(turn({ calls: [read("toolu_2")] })),
        stream(turn({ calls: [read("toolu_3")] })),
        stream(turn({ text: ["fin"] })),
      ]);
      await writeFile(join(workspace, "big.txt"), `${"y".repeat(30_000)}\n`);
      fill(disk, free);
      const state = join(disk, "state");
      const run = await runBin(["read big.txt"], {
        ...options,
        env: { ...options.env, MINI_AGENT_HOME: state },
      });
      expect({ code: run.code, lastLine: run.stderr.trim().split("\n").at(-1) }).toEqual({
        code: 1,
        lastLine: `mini-agent: cannot write the session in ${state}: no space left on device (free space, or set MINI_AGENT_HOME to another folder)`,
      });
      const left = await readdir(join(state, "sessions"), { recursive: true, withFileTypes: true });
      const names = left.filter((entry) => entry.isFile()).map((entry) => entry.name);
      expect(names.map((name) => name.replace(/^[\d-]+[0-9a-f]{6}/, "ID"))).toEqual(
        files === 1 ? ["ID.jsonl"] : [],
      );
    },
  );
});
