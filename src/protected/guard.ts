import type { Stats } from "node:fs";
import {
  chmod,
  lstat,
  mkdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { nodeCrypto } from "../node-crypto.js";
import type { MoreProtected } from "./files.js";
import { findSafeGit } from "./git.js";
import { settleObjects } from "./objects.js";
import { type HadBlob, lookAtRefs, settleRefs } from "./refs.js";
import {
  bytesOf,
  type Found,
  findProtected,
  identity,
  type RawPath,
  rawOf,
  shownOf,
} from "./scan.js";

/** A protected entry as it was before a command: its identity and what brings it back. */
type Kept =
  | { kind: "file"; identity: string; mode: number; bytes: Buffer }
  | { kind: "link"; identity: string; target: Buffer }
  /** Too big to keep, or neither a file nor a link: it can be put out of the way, not back. */
  | { kind: "unkept"; identity: string };

/** The most bytes of one protected file kept; a bigger one changed is moved aside, not restored. */
const MOST_FILE_BYTES = 1024 * 1024;

/** The most bytes kept of all protected files at once; past it a file is kept by identity only. */
const MOST_KEPT_BYTES = 64 * 1024 * 1024;

/** Files read at once when their bytes are kept. */
const READS = 32;

/** What a protected entry the command made, or changed past keeping, is renamed to (a suffix). */
export const ASIDE = ".mini-agent-removed";

/**
 * What was kept of each protected file at the last look, by raw path, so an unchanged file is
 * not read again before the next command: its identity (device, inode, size, mode, change and
 * modification times, which the command cannot set back) tells.
 */
const keptBefore = new Map<RawPath, Kept>();
/** The bytes `keptBefore` holds. */
let keptBytes = 0;

/**
 * Protected files before a sandboxed command, to be settled after it. The sandbox keeps the
 * top-level ones read-only; what a command can still reach (a nested repository's `.git`, a
 * `git init sub` in the same command, an editor's settings in a subfolder) is found here.
 */
export interface ProtectedGuard {
  /**
   * Looks again after the command: a protected entry it created is moved aside (renamed with
   * `ASIDE`, its bytes kept, no program reading it by that name); one it changed or removed is put
   * back as it was (one too big to keep is moved aside); then git's refs, reflogs and index are
   * settled (`settleRefs`: none may lead the user's checkout to a protected file). Returns one
   * line per entry, for the call's result, empty when nothing protected changed.
   */
  settle(): Promise<string[]>;
}

/**
 * Looks at every protected file under `realRoot` (a real path), the session's own (`more`) with
 * them, and keeps what it holds.
 */
export async function guardProtected(
  realRoot: string,
  more?: MoreProtected,
): Promise<ProtectedGuard> {
  const before = await findProtected(realRoot, undefined, more);
  const kept = new Map<RawPath, Kept>();
  await inBatches([...before.files], async ([path, { info }]) => {
    kept.set(path, await keep(path, info));
  });
  const refs = await lookAtRefs(before);
  for (const path of keptBefore.keys()) if (!kept.has(path)) keptBefore.delete(path);
  keptBytes = 0;
  for (const entry of keptBefore.values())
    if (entry.kind === "file") keptBytes += entry.bytes.length;
  const root = rawOf(realRoot);
  const shown = (path: RawPath) => shownOf(path.slice(root.length + 1)) || ".";
  const settleOnce = async (): Promise<{ lines: string[]; after: Found }> => {
    const after = await findProtected(realRoot, before.gitFolders, more);
    const lines = after.opened.map((folder) => `made ${shown(folder)} readable to look into it`);
    for (const [path, { why }] of after.files) {
      if (kept.has(path)) continue;
      lines.push(await moveAside(path, `${shown(path)}, which the command created (${why})`));
    }
    for (const [path, was] of kept) {
      // Not found by the walk: gone, or no longer a protected entry (a folder in its place).
      const now =
        after.files.get(path)?.info ?? (await lstat(bytesOf(path)).catch(() => undefined));
      if (now !== undefined && identity(now) === was.identity) continue;
      if (now !== undefined && (await same(path, now, was))) continue;
      const why = before.files.get(path)?.why ?? "";
      if (was.kind === "unkept") {
        lines.push(
          await moveAside(
            path,
            `${shown(path)}, which the command changed and which was too big to keep (${why})`,
          ),
        );
        continue;
      }
      const failed = await putBack(path, was).then(
        () => undefined,
        (error: Error) => error.message,
      );
      lines.push(
        failed === undefined
          ? `restored ${shown(path)}, which the command ${now ? "changed" : "removed"} (${why})`
          : `could not put back ${shown(path)} (${why}): ${failed}`,
      );
    }
    // After the files, so git reads the configuration as it was; objects before refs, so what
    // the refs lead to is read from objects that are what their names say.
    const git = await findSafeGit(process.env.PATH ?? "", realRoot);
    lines.push(...(await settleObjects(before, after, git, shown)));
    lines.push(...(await settleRefs(refs, after, git, shown, hadBlob(kept))));
    for (const folder of after.unread)
      lines.push(`could not look into ${shown(folder)}: a protected file there is not checked`);
    return { lines, after };
  };
  return {
    async settle() {
      const first = await settleOnce();
      if (!first.lines.some(unsettled)) return first.lines;
      // The command ran as the agent's own user: it may have taken a folder's write permission
      // away so that what it made there cannot be put right. Those folders are made writable
      // again and everything is looked at once more.
      const paths = [
        ...first.after.files.keys(),
        ...kept.keys(),
        ...first.after.refFiles.keys(),
        ...first.after.objectFiles.keys(),
        ...first.after.gitFolders,
      ];
      const opened = await makeWritable(root, paths);
      if (opened.length === 0) return first.lines;
      const again = await settleOnce();
      return [
        ...first.lines.filter((line) => !unsettled(line)),
        ...opened.map((folder) => `made ${shown(folder)} writable to put it right`),
        ...again.lines,
      ];
    },
  };
}

/** A line of the check that says something protected is not as it should be. */
export const unsettled = (line: string): boolean => line.startsWith("could not");

/**
 * Makes writable (`u+wx`) each folder from `root` down to each path's own that the agent's user
 * owns and cannot write into; returns those folders, in order.
 */
async function makeWritable(root: RawPath, paths: Iterable<RawPath>): Promise<RawPath[]> {
  const folders = new Set<RawPath>();
  for (const path of paths)
    for (let at = path.lastIndexOf("/"); at >= root.length; at = path.lastIndexOf("/", at - 1))
      folders.add(path.slice(0, at));
  const opened: RawPath[] = [];
  for (const folder of [...folders].sort()) {
    const info = await lstat(bytesOf(folder)).catch(() => undefined);
    if (!info?.isDirectory() || info.uid !== process.getuid?.()) continue;
    if ((info.mode & 0o300) === 0o300) continue;
    const done = await chmod(bytesOf(folder), (info.mode & 0o7777) | 0o300).then(
      () => true,
      () => false,
    );
    if (done) opened.push(folder);
  }
  return opened;
}

/**
 * Whether a protected file of the work tree of `gitFolder` (`NAME/.git`'s work tree is `NAME`)
 * held, before the command, the bytes of git's `blob` (a blob's name is the hash of
 * `blob SIZE\0` and the bytes, sha-1 or sha-256 by its length).
 */
function hadBlob(kept: ReadonlyMap<RawPath, Kept>): HadBlob {
  return (gitFolder, path, blob) => {
    if (!/\/\.git$/i.test(gitFolder)) return false;
    const was = kept.get(`${gitFolder.slice(0, -"/.git".length)}/${rawOf(path)}`);
    if (was?.kind !== "file") return false;
    const hash = nodeCrypto().createHash(blob.length === 40 ? "sha1" : "sha256");
    hash.update(`blob ${was.bytes.length}\0`);
    return hash.update(was.bytes).digest("hex") === blob.toLowerCase();
  };
}

/** Renames `path` aside (`NAME.mini-agent-removed`, or `-2`, `-3`… when that is taken). */
async function moveAside(path: RawPath, what: string): Promise<string> {
  for (let n = 1; n < 100; n++) {
    const aside = `${path}${ASIDE}${n === 1 ? "" : `-${n}`}`;
    if ((await lstat(bytesOf(aside)).catch(() => undefined)) !== undefined) continue;
    const failed = await rename(bytesOf(path), bytesOf(aside)).then(
      () => undefined,
      (error: Error) => error.message,
    );
    if (failed === undefined)
      return `moved aside ${what}: now ${shownOf(aside.slice(aside.lastIndexOf("/") + 1))}`;
    const removed = await rm(bytesOf(path), { force: true, recursive: true }).then(
      () => true,
      () => false,
    );
    return removed ? `removed ${what}` : `could not move aside ${what}: ${failed}`;
  }
  return `could not move aside ${what}: too many earlier ones`;
}

/** Runs `job` on each item, `READS` at a time. */
async function inBatches<T>(items: T[], job: (item: T) => Promise<void>): Promise<void> {
  for (let at = 0; at < items.length; at += READS)
    await Promise.all(items.slice(at, at + READS).map(job));
}

async function keep(path: RawPath, info: Stats): Promise<Kept> {
  const id = identity(info);
  const known = keptBefore.get(path);
  if (known?.identity === id) return known;
  const entry = await read(path, info, id);
  keptBefore.set(path, entry);
  return entry;
}

async function read(path: RawPath, info: Stats, id: string): Promise<Kept> {
  if (info.isSymbolicLink()) {
    const target = await readlink(bytesOf(path), { encoding: "buffer" }).catch(() => undefined);
    return target === undefined
      ? { kind: "unkept", identity: id }
      : { kind: "link", identity: id, target };
  }
  if (!info.isFile() || info.size > MOST_FILE_BYTES || keptBytes + info.size > MOST_KEPT_BYTES)
    return { kind: "unkept", identity: id };
  keptBytes += info.size;
  const bytes = await readFile(bytesOf(path)).catch(() => undefined);
  return bytes === undefined
    ? { kind: "unkept", identity: id }
    : { kind: "file", identity: id, mode: info.mode & 0o7777, bytes };
}

/** Whether the entry at `path` still holds what was kept (only its times changed). */
async function same(path: RawPath, now: Stats, was: Kept): Promise<boolean> {
  if (was.kind === "link") {
    const target = await readlink(bytesOf(path), { encoding: "buffer" }).catch(() => undefined);
    return now.isSymbolicLink() && target?.equals(was.target) === true;
  }
  if (was.kind !== "file" || !now.isFile() || (now.mode & 0o7777) !== was.mode) return false;
  if (now.size !== was.bytes.length) return false;
  const bytes = await readFile(bytesOf(path)).catch(() => undefined);
  return bytes?.equals(was.bytes) === true;
}

/** Puts a kept file or link back in place: a new entry beside it, renamed over what is there. */
async function putBack(path: RawPath, was: Kept & { kind: "file" | "link" }): Promise<void> {
  const folder = path.slice(0, path.lastIndexOf("/"));
  await rm(bytesOf(path), { force: true, recursive: true });
  await mkdir(bytesOf(folder), { recursive: true });
  // A folder on the path that is now a link leads elsewhere: nothing is written through it.
  const real = await realpath(bytesOf(folder), { encoding: "buffer" }).catch(() => undefined);
  if (real === undefined || !real.equals(bytesOf(folder)))
    throw new Error("a folder on its path is a link now");
  const aside = `${folder}/.mini-agent-restore-${process.pid}-${Date.now()}`;
  if (was.kind === "link") await symlink(was.target, bytesOf(aside));
  else {
    await writeFile(bytesOf(aside), was.bytes, { mode: 0o600, flag: "wx" });
    await chmod(bytesOf(aside), was.mode);
  }
  await rename(bytesOf(aside), bytesOf(path));
}
