import { constants, type Stats } from "node:fs";
import { access, lstat, open, readlink, realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { within } from "../paths.js";

/** The folder a workspace's project files (instructions, MCP servers, configuration) come from. */
export interface ProjectRoot {
  /** The root of the git repository holding the workspace, else the workspace itself (real paths). */
  path: string;
  /** Whether `path` is the root of a git repository that passed git's ownership rule. */
  repository: boolean;
}

export interface RootBounds {
  /** The user's home: a folder that holds it (`/`, `/home`) is never looked at. */
  home?: string;
}

/**
 * The project root of `workspace`: the nearest folder, the workspace or one above it, whose
 * `.git` is a git repository as git itself accepts one (`safe.directory`'s rule): the `.git`
 * folder, or the folder a `gitdir:` file names, has a valid `HEAD` and `objects/` and `refs/`
 * folders (in its `commondir` for a linked worktree), and the folder, its `.git` and the git
 * folder are all owned by the uid running mini-agent (root's own, when root runs it). An empty
 * `.git`, or one another user made, is no repository. The walk up never looks at a folder that
 * holds the user's home, and never reaches a world-writable sticky folder (`/tmp`, `/var/tmp`,
 * `/dev/shm`) or anything above one: anyone may plant a `.git` there. Without such a repository the
 * workspace is its own root.
 */
export async function projectRoot(
  workspace: string,
  bounds: RootBounds = {},
): Promise<ProjectRoot> {
  const start = await realOrResolved(workspace);
  const home = await realOrResolved(bounds.home ?? homedir());
  for (let folder = start; ; ) {
    const found = await repositoryAt(folder);
    if (found === "repository") return { path: folder, repository: true };
    if (found === "refused") break;
    const parent = dirname(folder);
    if (parent === folder || (within(parent, home) && parent !== home)) break;
    if (await isSharedSticky(parent)) break;
    folder = parent;
  }
  return { path: start, repository: false };
}

const uid = () => process.geteuid?.() ?? process.getuid?.() ?? 0;

/**
 * What `folder`'s `.git` is: a repository that passes the ownership rule; none (no `.git`, or a
 * folder that is no git directory: the walk goes on up); or `refused`, where git stops too: a
 * `.git` file that names no git directory, or a repository another user owns.
 */
async function repositoryAt(folder: string): Promise<"repository" | "none" | "refused"> {
  const dotGit = join(folder, ".git");
  const entry = await lstat(dotGit).catch(() => undefined);
  if (entry === undefined) return "none";
  const file = entry.isFile();
  const gitDir = file ? await gitFileTarget(dotGit) : await realOrNothing(dotGit);
  if (gitDir === undefined || !(await isGitDirectory(gitDir))) return file ? "refused" : "none";
  const [tree, git] = await Promise.all([
    lstat(folder).catch(() => undefined),
    stat(gitDir).catch(() => undefined),
  ]);
  const owned = [entry, tree, git].every((info) => info !== undefined && ownedByUs(info));
  return owned && git?.isDirectory() ? "repository" : "refused";
}

const ownedByUs = (stats: Stats) => stats.uid === uid();

/** The folder a `.git` file's `gitdir: PATH` line names, resolved from its folder. */
async function gitFileTarget(file: string): Promise<string | undefined> {
  const text = await smallText(file);
  const match = text === undefined ? null : /^gitdir: (.+?)\r?\n?$/.exec(text);
  if (!match?.[1]) return undefined;
  return realOrNothing(resolve(dirname(file), match[1]));
}

/** git's `is_git_directory`: a valid `HEAD`, and `objects/` and `refs/` in the common folder. */
async function isGitDirectory(gitDir: string): Promise<boolean> {
  if (!(await validHead(join(gitDir, "HEAD")))) return false;
  const commonFile = join(gitDir, "commondir");
  const common =
    (await lstat(commonFile).catch(() => undefined)) === undefined
      ? gitDir
      : await smallText(commonFile).then((text) =>
          text === undefined ? undefined : resolve(gitDir, text.trim()),
        );
  if (common === undefined) return false;
  const folders = await Promise.all(
    ["objects", "refs"].map((name) =>
      stat(join(common, name))
        .then((info) => info.isDirectory())
        .catch(() => false),
    ),
  );
  if (!folders.every(Boolean)) return false;
  return access(join(common, "objects"), constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** git's `validate_headref`: a link into `refs/`, `ref: refs/…`, or an object id. */
async function validHead(head: string): Promise<boolean> {
  const info = await lstat(head).catch(() => undefined);
  if (info?.isSymbolicLink()) return (await readlink(head).catch(() => "")).startsWith("refs/");
  if (!info?.isFile()) return false;
  const text = await smallText(head);
  return text !== undefined && /^(ref:\s*refs\/|[0-9a-f]{40}(?:[0-9a-f]{24})?\s*$)/.test(text);
}

/** The first bytes of a regular file as text, opened without following a link or blocking. */
async function smallText(path: string): Promise<string | undefined> {
  const handle = await open(
    path,
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  ).catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** A folder anyone may write into, where only the sticky bit protects the entries (`/tmp`). */
async function isSharedSticky(folder: string): Promise<boolean> {
  const info = await stat(folder).catch(() => undefined);
  return info !== undefined && (info.mode & 0o1002) === 0o1002;
}

async function realOrResolved(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}

async function realOrNothing(path: string): Promise<string | undefined> {
  return realpath(path).catch(() => undefined);
}

/** The folders from the project root down to the workspace; none inside the state folder. */
export function foldersDown(workspace: string, root: string, state: string): string[] {
  if (within(state, workspace)) return [];
  const chain = [workspace];
  for (let folder = workspace; folder !== root; ) {
    const parent = dirname(folder);
    if (parent === folder || within(state, parent)) return [workspace];
    chain.unshift(parent);
    folder = parent;
  }
  return chain;
}
