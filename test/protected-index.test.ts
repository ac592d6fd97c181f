import { execFileSync, spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dropIndexCaches, parseIndex } from "../src/protected/objects.js";
import { rawOf } from "../src/protected/scan.js";
import { gitEnv } from "./support/repository.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const hasGit = spawnSync("git", ["--version"]).status === 0;
const env = gitEnv;

/** A repository with a few files committed and its index holding a cache-tree, in `version`. */
async function repository(version: number): Promise<string> {
  const root = await tempDir();
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: root, env, encoding: "utf8" });
  git("init", "-q");
  for (const name of ["a.txt", "dir/b.txt", "dir/deeper/c.txt", "a-much-longer-name.txt"]) {
    execFileSync("mkdir", ["-p", join(root, name, "..")]);
    await writeFile(join(root, name), `${name}\n`);
  }
  git("add", "-A");
  git("commit", "-qm", "x");
  git("update-index", "--index-version", String(version));
  git("read-tree", "HEAD");
  return root;
}

describe.skipIf(!hasGit)("an index's optional extensions", () => {
  for (const version of [2, 3, 4])
    it(`are dropped from a version ${version} index, which git still reads whole`, async () => {
      const root = await repository(version);
      const index = join(root, ".git/index");
      const bytes = await readFile(index);
      const parsed = parseIndex(bytes);
      expect(parsed?.extensions.map((extension) => extension.signature)).toContain("TREE");
      const listed = execFileSync("git", ["ls-files", "-s"], { cwd: root, env, encoding: "utf8" });
      expect(await dropIndexCaches(rawOf(index), ".git/index", bytes)).toEqual([]);
      const after = parseIndex(await readFile(index));
      expect(after?.extensions.map((extension) => extension.signature)).toEqual([]);
      expect(execFileSync("git", ["ls-files", "-s"], { cwd: root, env, encoding: "utf8" })).toBe(
        listed,
      );
      const fsck = spawnSync("git", ["fsck", "--no-progress"], {
        cwd: root,
        env,
        encoding: "utf8",
      });
      expect(fsck.status).toBe(0);
    });

  it("puts back the earlier index when the new one cannot be read as one", async () => {
    const root = await repository(2);
    const index = join(root, ".git/index");
    const earlier = await readFile(index);
    const garbled = Buffer.from(earlier);
    garbled.writeUInt32BE(9, 4);
    await writeFile(index, garbled);
    expect(parseIndex(garbled)).toBeUndefined();
    expect(await dropIndexCaches(rawOf(index), ".git/index", earlier)).toEqual([
      "put back .git/index as it was before the command: it could not be read as git's index",
    ]);
    expect((await readFile(index)).equals(earlier)).toBe(true);
  });
});
