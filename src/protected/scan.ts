import type { Stats } from "node:fs";
import { chmod, lstat, readdir } from "node:fs/promises";
import { whyByNames } from "./files.js";

/**
 * A path as the walk holds it: its bytes as a `latin1` string, one character a byte, so a name
 * that is not UTF-8 is kept exactly (`bytesOf` gives the bytes back for a system call).
 */
export type RawPath = string;

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
}

/** Folders read at once while walking. */
const CONCURRENCY = 16;

/**
 * Every protected entry under `realRoot` (a real path), at any depth, by the one rule
 * (`whyByNames`): a walk that reads each folder once and follows no link. A folder is a git
 * folder when it is named `.git` or holds a `HEAD` that is a file or a link; given `knownGit`
 * (what an earlier walk found), a folder is a git folder only when it is named `.git` or was one
 * then, so a `HEAD` made since is itself the protected entry, never a reason to take what was
 * already there for a git folder's files. A folder of the agent's own user that it cannot read is
 * made readable (`u+rx`) and read, and said in `opened`.
 */
export async function findProtected(
  realRoot: string,
  knownGit?: ReadonlySet<RawPath>,
): Promise<Found> {
  const found: Found = { files: new Map(), gitFolders: new Set(), unread: [], opened: [] };
  const queue: { path: RawPath; names: string[]; gitAt: readonly number[] }[] = [
    { path: rawOf(realRoot), names: [], gitAt: [] },
  ];
  const visit = async (folder: (typeof queue)[number]) => {
    const entries = await listing(folder.path, found);
    if (entries === undefined) return;
    const named = folder.names.at(-1)?.toLowerCase() === ".git";
    const holdsHead = entries.some(
      (entry) => nameOf(entry).toLowerCase() === "head" && !entry.isDirectory(),
    );
    const isGit = named || (knownGit ? knownGit.has(folder.path) : holdsHead);
    if (isGit) found.gitFolders.add(folder.path);
    const gitAt = isGit ? [...folder.gitAt, folder.names.length - 1] : folder.gitAt;
    const gitFolder = (at: number) => gitAt.includes(at);
    const adding: Promise<void>[] = [];
    for (const entry of entries) {
      const name = nameOf(entry);
      const names = [...folder.names, name];
      const path = `${folder.path}/${name}`;
      if (entry.isDirectory()) {
        queue.push({ path, names, gitAt });
        continue;
      }
      const why = whyByNames(names, gitFolder);
      if (why !== undefined) adding.push(add(path, why));
    }
    await Promise.all(adding);
  };
  /** Notes a protected entry with its `lstat`: gone since the folder was read, it is no entry. */
  const add = async (path: RawPath, why: string) => {
    const info = await lstat(bytesOf(path)).catch(() => undefined);
    if (info !== undefined) found.files.set(path, { why, info });
  };
  const running = new Set<Promise<void>>();
  while (queue.length > 0 || running.size > 0) {
    while (queue.length > 0 && running.size < CONCURRENCY) {
      const next = queue.pop();
      if (next === undefined) break;
      const job: Promise<void> = visit(next).finally(() => running.delete(job));
      running.add(job);
    }
    if (running.size > 0) await Promise.race(running);
  }
  return found;
}

type Entry = Awaited<ReturnType<typeof readBytes>>[number];

const readBytes = (path: RawPath) =>
  readdir(bytesOf(path), { withFileTypes: true, encoding: "buffer" });

const nameOf = (entry: Entry): string => entry.name.toString("latin1");

/**
 * The entries of `folder`; one of the agent's own user that it cannot list is made readable
 * first. `undefined` (and the folder in `unread`) when it still cannot be listed.
 */
async function listing(folder: RawPath, found: Found): Promise<Entry[] | undefined> {
  const first = await readBytes(folder).catch((error: NodeJS.ErrnoException) => error);
  if (!(first instanceof Error)) return first;
  if (first.code === "EACCES") {
    const info = await lstat(bytesOf(folder)).catch(() => undefined);
    if (info?.isDirectory() && info.uid === process.getuid?.()) {
      await chmod(bytesOf(folder), (info.mode & 0o7777) | 0o500).catch(() => undefined);
      const again = await readBytes(folder).catch(() => undefined);
      if (again !== undefined) {
        found.opened.push(folder);
        return again;
      }
    }
  }
  // Gone since its parent was read: nothing there to find.
  if (first.code !== "ENOENT") found.unread.push(folder);
  return undefined;
}
