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
import { dirname, join, relative } from "node:path";
import { findProtected } from "./scan.js";

/** A protected entry as it was before a command: its identity and what brings it back. */
type Kept =
  | { kind: "file"; identity: string; mode: number; bytes: Buffer }
  | { kind: "link"; identity: string; target: string }
  /** Too big to keep, or neither a file nor a link: it can be put out of the way, not back. */
  | { kind: "unkept"; identity: string };

/** The most bytes of one protected file kept; a bigger one changed is removed, not restored. */
const MOST_FILE_BYTES = 1024 * 1024;

/**
 * What was kept of each protected file at the last look, by real path, so an unchanged file is
 * not read again before the next command: its identity (device, inode, size, mode, change and
 * modification times, which the command cannot set back) tells.
 */
const keptBefore = new Map<string, Kept>();

/**
 * Protected files before a sandboxed command, to be settled after it. The sandbox keeps the
 * top-level ones read-only; what a command can still reach (a nested repository's `.git`, a
 * `git init sub` in the same command, an editor's settings in a subfolder) is found here.
 */
export interface ProtectedGuard {
  /**
   * Looks again after the command: a protected file it created is removed, one it changed or
   * removed is put back as it was (a file too big to keep is removed). Returns one line per file,
   * for the call's result, empty when nothing protected changed.
   */
  settle(): Promise<string[]>;
}

/** Files read at once when their bytes are kept. */
const READS = 32;

/** Looks at every protected file under `realRoot` (a real path) and keeps what it holds. */
export async function guardProtected(realRoot: string): Promise<ProtectedGuard> {
  const before = await findProtected(realRoot);
  const kept = new Map<string, Kept>();
  await inBatches([...before.files], async ([path, { info }]) => {
    kept.set(path, await keep(path, info));
  });
  for (const path of keptBefore.keys()) if (!kept.has(path)) keptBefore.delete(path);
  return {
    async settle() {
      const after = await findProtected(realRoot);
      const lines: string[] = [];
      const shown = (path: string) => relative(realRoot, path);
      for (const [path, { why }] of after.files) {
        if (kept.has(path)) continue;
        const failed = await rm(path, { force: true, recursive: true }).then(
          () => undefined,
          (error: Error) => error.message,
        );
        lines.push(
          failed === undefined
            ? `removed ${shown(path)}, which the command created (${why})`
            : `could not remove ${shown(path)}, which the command created (${why}): ${failed}`,
        );
      }
      for (const [path, was] of kept) {
        const found = after.files.get(path);
        // Not found by the walk: gone, or no longer a protected entry (a folder in its place).
        const now = found?.info ?? (await lstat(path).catch(() => undefined));
        if (now !== undefined && identity(now) === was.identity) continue;
        if (now !== undefined && (await same(path, now, was))) continue;
        const why = before.files.get(path)?.why ?? "";
        if (was.kind === "unkept") {
          await rm(path, { force: true, recursive: true });
          lines.push(
            `removed ${shown(path)}, which the command changed and which was too big to keep (${why})`,
          );
          continue;
        }
        const failed = await putBack(path, was).then(
          () => undefined,
          (error: Error) => error.message,
        );
        if (failed !== undefined) {
          lines.push(`could not put back ${shown(path)} (${why}): ${failed}`);
          continue;
        }
        lines.push(
          `restored ${shown(path)}, which the command ${now ? "changed" : "removed"} (${why})`,
        );
      }
      for (const folder of after.unread)
        lines.push(
          `could not look into ${shown(folder) || "."}: a protected file there is not checked`,
        );
      return lines;
    },
  };
}

/** Runs `job` on each item, `READS` at a time. */
async function inBatches<T>(items: T[], job: (item: T) => Promise<void>): Promise<void> {
  for (let at = 0; at < items.length; at += READS)
    await Promise.all(items.slice(at, at + READS).map(job));
}

function identity(info: Stats): string {
  return [info.dev, info.ino, info.size, info.mode, info.mtimeMs, info.ctimeMs].join(":");
}

async function keep(path: string, info: Stats): Promise<Kept> {
  const id = identity(info);
  const known = keptBefore.get(path);
  if (known?.identity === id) return known;
  const entry = await read(path, info, id);
  keptBefore.set(path, entry);
  return entry;
}

async function read(path: string, info: Stats, id: string): Promise<Kept> {
  if (info.isSymbolicLink()) {
    const target = await readlink(path).catch(() => undefined);
    return target === undefined
      ? { kind: "unkept", identity: id }
      : { kind: "link", identity: id, target };
  }
  if (!info.isFile() || info.size > MOST_FILE_BYTES) return { kind: "unkept", identity: id };
  const bytes = await readFile(path).catch(() => undefined);
  return bytes === undefined
    ? { kind: "unkept", identity: id }
    : { kind: "file", identity: id, mode: info.mode & 0o7777, bytes };
}

/** Whether the entry at `path` still holds what was kept (only its times changed). */
async function same(path: string, now: Stats, was: Kept): Promise<boolean> {
  if (was.kind === "link")
    return now.isSymbolicLink() && (await readlink(path).catch(() => undefined)) === was.target;
  if (was.kind !== "file" || !now.isFile() || (now.mode & 0o7777) !== was.mode) return false;
  if (now.size !== was.bytes.length) return false;
  const bytes = await readFile(path).catch(() => undefined);
  return bytes?.equals(was.bytes) === true;
}

/** Puts a kept file or link back in place: a new entry beside it, renamed over what is there. */
async function putBack(path: string, was: Kept & { kind: "file" | "link" }): Promise<void> {
  await rm(path, { force: true, recursive: true });
  await mkdir(dirname(path), { recursive: true });
  // A folder on the path that is now a link leads elsewhere: nothing is written through it.
  if ((await realpath(dirname(path)).catch(() => undefined)) !== dirname(path))
    throw new Error("a folder on its path is a link now");
  const aside = join(dirname(path), `.mini-agent-restore-${process.pid}-${Date.now()}`);
  if (was.kind === "link") await symlink(was.target, aside);
  else {
    await writeFile(aside, was.bytes, { mode: 0o600, flag: "wx" });
    await chmod(aside, was.mode);
  }
  await rename(aside, path);
}
