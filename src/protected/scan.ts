import { chmodSync, type Dirent, lstatSync, readdirSync, type Stats } from "node:fs";
import {
  type Homes,
  homesIn,
  isRefFile,
  type MoreProtected,
  moreWhy,
  whyByLowerNames,
} from "./files.js";

/**
 * A path as the walk holds it: its bytes as a `latin1` string, one character a byte, so a name
 * that is not UTF-8 is kept exactly (`bytesOf` gives the bytes back for a system call).
 */
export type RawPath = string;

/** What tells a file changed: device, inode, size, mode, change and modification times. */
export function identity(info: Stats): string {
  return [info.dev, info.ino, info.size, info.mode, info.mtimeMs, info.ctimeMs].join(":");
}

export const bytesOf = (path: RawPath): Buffer => Buffer.from(path, "latin1");
export const rawOf = (path: string): RawPath => Buffer.from(path, "utf8").toString("latin1");
/** A raw path as text to show: bytes that are not UTF-8 become U+FFFD. */
export const shownOf = (path: RawPath): string => bytesOf(path).toString("utf8");

/** What a walk of the workspace found. */
export interface Found {
  /** Each protected entry that is not a folder, by raw path under the root: why, and its `lstat`. */
  files: Map<RawPath, { why: string; info: Stats }>;
  /** The git folders the walk went through (named `.git`, or holding a `HEAD` file). */
  gitFolders: Set<RawPath>;
  /** Folders that could not be read, even after making them readable: what lies there is unknown. */
  unread: RawPath[];
  /** Folders of the agent's own user it made readable to look into them. */
  opened: RawPath[];
  /**
   * git's files that name commits (`refs/`, `logs/`, `packed-refs`, `HEAD`, `ORIG_HEAD`, …) and
   * its `index`, by raw path: the git folder they belong to (the deepest), their path inside it,
   * and their `lstat`. What a command points them at is checked by `settleRefs`.
   */
  refFiles: Map<RawPath, { gitFolder: RawPath; inner: string; info: Stats }>;
  /** The files of git's object stores (`objects/`), the same way: checked by `settleObjects`. */
  objectFiles: Map<RawPath, { gitFolder: RawPath; inner: string; info: Stats }>;
}

/** How long the walk reads without giving the event loop a turn. */
const SLICE_MS = 8;

/**
 * Every protected entry under `realRoot` (a real path), at any depth, by the one rule
 * (`whyByNames`): a walk that reads each folder once and follows no link. A folder is a git
 * folder when it is named `.git` or holds a `HEAD` that is a file or a link; given `knownGit`
 * (what an earlier walk found), a folder is a git folder only when it is named `.git` or was one
 * then, so a `HEAD` made since is itself the protected entry, never a reason to take what was
 * already there for a git folder's files. A folder of the agent's own user that it cannot read is
 * made readable (`u+rx`) and read, and said in `opened`. The walk reads with the synchronous
 * calls, which cost a third of the asynchronous ones here, and gives the event loop a turn every
 * few milliseconds. `more`: the session's own protected files (`MoreProtected`), found as the
 * walk meets them.
 */
export async function findProtected(
  realRoot: string,
  knownGit?: ReadonlySet<RawPath>,
  more?: MoreProtected,
): Promise<Found> {
  const homes = homesIn(realRoot);
  // The session's own protected files, by raw path as the walk meets them.
  const mine = new Map([...(more ?? [])].map(([path, why]) => [rawOf(path), why]));
  const found: Found = {
    files: new Map(),
    gitFolders: new Set(),
    unread: [],
    opened: [],
    refFiles: new Map(),
    objectFiles: new Map(),
  };
  // `names`: the folder's names under the root, lower-cased; `git`: the deepest git folder.
  const queue: {
    path: RawPath;
    names: string[];
    gitAt: readonly number[];
    git: RawPath | undefined;
  }[] = [{ path: rawOf(realRoot), names: [], gitAt: [], git: undefined }];
  let slice = performance.now();
  for (let folder = queue.pop(); folder !== undefined; folder = queue.pop()) {
    if (performance.now() - slice > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
    const entries = listing(folder.path, found);
    if (entries === undefined) continue;
    const named = folder.names.at(-1) === ".git";
    const holdsHead = entries.some(
      (entry) => nameOf(entry).toLowerCase() === "head" && !entry.isDirectory(),
    );
    // Inside a git folder's `refs/` or `logs/`, a `HEAD` is a ref (`refs/remotes/origin/HEAD`)
    // or a reflog (`logs/HEAD`), never a git folder of its own: what lies there is refs.
    const lower = folder.path.toLowerCase();
    const inRefs =
      folder.git !== undefined &&
      [`${folder.git}/refs`, `${folder.git}/logs`].some(
        (refs) => lower === refs.toLowerCase() || lower.startsWith(`${refs.toLowerCase()}/`),
      );
    const isGit = !inRefs && (named || (knownGit ? knownGit.has(folder.path) : holdsHead));
    if (isGit) found.gitFolders.add(folder.path);
    const gitAt = isGit ? [...folder.gitAt, folder.names.length - 1] : folder.gitAt;
    const gitFolder = (at: number) => gitAt.includes(at);
    const git = isGit ? folder.path : folder.git;
    for (const entry of entries) {
      const name = nameOf(entry);
      const names = [...folder.names, name.toLowerCase()];
      const path = `${folder.path}/${name}`;
      if (entry.isDirectory()) {
        queue.push({ path, names, gitAt, git });
        continue;
      }
      const why =
        whyByLowerNames(names, gitFolder, "sandboxed", homes) ??
        moreWhy(mine, path) ??
        (entry.isSymbolicLink() ? linkWhy(names, gitFolder, homes) : undefined);
      if (why === undefined) {
        if (git === undefined) continue;
        const inner = path.slice(git.length + 1);
        const objects = /^objects(?:\/|$)/i.test(inner);
        if (!objects && !isRefFile(inner)) continue;
        const info = lstatQuiet(path);
        if (info === undefined) continue;
        if (objects) found.objectFiles.set(path, { gitFolder: git, inner, info });
        else if (info.isFile() || info.isSymbolicLink())
          found.refFiles.set(path, { gitFolder: git, inner, info });
        continue;
      }
      // Gone since the folder was read: no entry.
      const info = lstatQuiet(path);
      if (info !== undefined) found.files.set(path, { why, info });
    }
  }
  return found;
}

function lstatQuiet(path: RawPath): Stats | undefined {
  try {
    return lstatSync(bytesOf(path));
  } catch {
    return undefined;
  }
}

type Entry = Dirent<Buffer>;

/**
 * Why a link is protected where a protected file lies below its name (`.github/hooks` →
 * `hooks.json`, `.jj/repo` → `config.toml`): a program reads that file through it, wherever it
 * leads. Asked with the names such files have under a folder: any (`x`) and `config.toml`.
 */
function linkWhy(
  names: readonly string[],
  gitFolder: (at: number) => boolean,
  homes: Homes,
): string | undefined {
  for (const below of ["x", "config.toml"]) {
    const why = whyByLowerNames([...names, below], gitFolder, "sandboxed", homes);
    if (why !== undefined) return `a link where ${why.replace(/^./, (c) => c.toLowerCase())}`;
  }
  return undefined;
}

const readBytes = (path: RawPath): Entry[] =>
  readdirSync(bytesOf(path), { withFileTypes: true, encoding: "buffer" });

const nameOf = (entry: Entry): string => entry.name.toString("latin1");

/**
 * The entries of `folder`; one of the agent's own user that it cannot list is made readable
 * first. `undefined` (and the folder in `unread`) when it still cannot be listed.
 */
function listing(folder: RawPath, found: Found): Entry[] | undefined {
  try {
    return readBytes(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EACCES") {
      const info = lstatQuiet(folder);
      if (info?.isDirectory() && info.uid === process.getuid?.()) {
        try {
          chmodSync(bytesOf(folder), (info.mode & 0o7777) | 0o500);
          const again = readBytes(folder);
          found.opened.push(folder);
          return again;
        } catch {
          // Still not readable: said below.
        }
      }
    }
    // Gone since its parent was read: nothing there to find.
    if (code !== "ENOENT") found.unread.push(folder);
    return undefined;
  }
}
