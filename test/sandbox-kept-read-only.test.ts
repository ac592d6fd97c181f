import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { shallowestFirst } from "../src/sandbox/kept-read-only.js";
import { bashTool } from "../src/tools/bash.js";
import { realSandbox } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";

/**
 * What a caller keeps read-only for one sandboxed command (what the rewind's snapshot could not
 * keep): paths, with the folders holding them, or the whole workspace.
 */

const tempDir = useTempDirs();
const sandboxed = await realSandbox();

describe("mounts inside the workspace", () => {
  it("come shallowest first, so a folder bound onto itself never hides a mount inside it", () => {
    // biome-ignore format: each mount on its line
    const args = [
      "--ro-bind", "/w/.git/config", "/w/.git/config",
      "--bind", "/w/.git/objects", "/w/.git/objects",
      "--tmpfs", "/w/.git/hooks", "--remount-ro", "/w/.git/hooks",
      "--bind", "/w/.git", "/w/.git",
    ];
    // biome-ignore format: each mount on its line
    expect(shallowestFirst(args)).toEqual([
      "--bind", "/w/.git", "/w/.git",
      "--ro-bind", "/w/.git/config", "/w/.git/config",
      "--bind", "/w/.git/objects", "/w/.git/objects",
      "--tmpfs", "/w/.git/hooks", "--remount-ro", "/w/.git/hooks",
    ]);
  });
});

describe.skipIf(!sandboxed)("what is kept read-only for one sandboxed command", () => {
  it("keeps .git/config read-only when a file inside .git is kept read-only too", async () => {
    const root = await tempDir();
    await mkdir(join(root, ".git", "objects", "pack"), { recursive: true });
    await writeFile(join(root, ".git", "config"), "[core]\n");
    await writeFile(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
    await writeFile(join(root, ".git", "objects", "pack", "pack-1.pack"), "pack");
    const bash = bashTool(root, { sandbox: { mode: "required" } });
    const kept = {
      path: join(root, ".git", "objects", "pack", "pack-1.pack"),
      why: "it could not be linked",
      said: true,
      folder: false,
    };
    const { result } = await bash.executeWith(
      { command: "echo x >> .git/config; rm -f .git/objects/pack/pack-1.pack; echo y > .git/HEAD" },
      undefined,
      { readOnly: [kept] },
    );
    expect(result.content).toContain(".git/config: Read-only file system");
    expect(result.content).toContain("Device or resource busy");
    expect(await readFile(join(root, ".git", "config"), "utf8")).toBe("[core]\n");
    expect(await readFile(join(root, ".git", "HEAD"), "utf8")).toBe("y\n");
  });

  it("makes the whole workspace read-only, a git folder bound onto itself too, and says why", async () => {
    const root = await tempDir();
    await mkdir(join(root, ".git"));
    await writeFile(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
    const bash = bashTool(root, { sandbox: { mode: "required" } });
    const why = "the snapshot of the workspace took over 10 s";
    const { result, sandboxed } = await bash.executeWith(
      { command: "touch new.txt; echo x > .git/HEAD; touch /tmp/fine && echo tmp" },
      undefined,
      { readOnly: "workspace", why },
    );
    expect(sandboxed).toBe(true);
    expect(result.content).toBe(
      [
        "touch: cannot touch 'new.txt': Read-only file system",
        "bash: line 1: .git/HEAD: Read-only file system",
        "tmp",
        "[exit code 0]",
        `[rewind: the workspace was read-only for this command: ${why}]`,
      ].join("\n"),
    );
  });
});
