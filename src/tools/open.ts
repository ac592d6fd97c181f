import { constants, type Stats } from "node:fs";
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readlink,
  realpath,
  stat,
  unlink,
} from "node:fs/promises";
import { dirname, join } from "node:path";
import { randomHex } from "../crypto.js";
import { ToolError } from "./define.js";
import { type BoundaryOptions, checkInside, type Resolved, resolveInWorkspace } from "./path.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/** A regular file opened inside the workspace, with what `fstat` said of it. */
export interface OpenedFile extends Resolved {
  handle: FileHandle;
  info: Stats;
}

/**
 * Opens a regular file in the workspace for reading, and verifies what was actually opened.
 * `workspacePath` checks a path; another process may swap an entry (or a folder on the way) for
 * a symlink, or a FIFO, before the `open`. So the last component is opened with `O_NOFOLLOW`
 * and `O_NONBLOCK` (a FIFO never blocks), `fstat` must say regular file, and the descriptor must
 * be the file at the resolved real path (`verifyOpened`). A folder, a FIFO or a device is refused
 * before opening too, with the same words. The caller closes `handle`.
 */
export async function openInWorkspace(
  root: string,
  userPath: string,
  options: BoundaryOptions = {},
): Promise<OpenedFile> {
  return openResolved(await resolveInWorkspace(root, userPath, options));
}

/** `openInWorkspace` for a path already resolved: opened and verified the same way. */
export async function openResolved(target: Resolved): Promise<OpenedFile> {
  refuseUnlessFile(target, await stat(target.path));
  let handle: FileHandle;
  try {
    handle = await open(target.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw changedMeanwhile(target);
    throw error;
  }
  try {
    const info = await handle.stat();
    refuseUnlessFile(target, info);
    await verifyOpened(handle, target.path, target);
    return { ...target, handle, info };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function refuseUnlessFile(target: Resolved, info: Stats): void {
  if (target.folder && !info.isDirectory()) throw new ToolError(`${target.shown} is not a folder`);
  if (info.isDirectory()) throw new ToolError(`${target.shown} is a directory: use ls to list it`);
  if (!info.isFile()) throw new ToolError(`${target.shown} is not a regular file`);
}

/** Another process replaced the entry (or a folder on the way) between the check and the use. */
const changedMeanwhile = (target: Resolved) =>
  new ToolError(`${target.shown} changed while in use: try again`);

/**
 * Throws unless `handle` is the file at the real path `expected`, not something swapped in on
 * the way. On Linux the kernel says where the descriptor points (`/proc/self/fd/N`): outside the
 * workspace (or in the state folder) is an escape; anywhere else (the entry was replaced, and
 * the descriptor shows `(deleted)`) the path changed under us. Elsewhere `sameFileAt` decides.
 */
export async function verifyOpened(
  handle: FileHandle,
  expected: string,
  target: Resolved,
): Promise<void> {
  const where = await openedPath(handle);
  if (where === expected) return;
  if (where === undefined && (await sameFileAt(handle, expected))) return;
  if (where !== undefined) {
    const real = where.endsWith(DELETED) ? where.slice(0, -DELETED.length) : where;
    await checkInside(target.realRoot, real, target.boundary);
  }
  throw changedMeanwhile(target);
}

const DELETED = " (deleted)";

const openedPath = (handle: FileHandle) =>
  readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);

/**
 * Without `/proc`: the descriptor's device and inode are those of a fresh `lstat` of `expected`,
 * and the parent of `expected` still resolves to itself (no folder swapped for a symlink).
 */
export async function sameFileAt(handle: FileHandle, expected: string): Promise<boolean> {
  const parent = dirname(expected);
  const [opened, now, realParent] = await Promise.all([
    handle.stat(),
    lstat(expected).catch(() => undefined),
    realpath(parent).catch(() => undefined),
  ]);
  return realParent === parent && opened.dev === now?.dev && opened.ino === now.ino;
}

/**
 * Creates an empty temporary file beside the real path `path` for an atomic replace: a short
 * random name after `prefix` (it fits whatever the length of `path`'s name; a caller that sweeps
 * what a crash left of its own writes names them by a prefix of its own), created exclusively and without
 * following a symlink, then verified through its descriptor before any byte is written. A
 * temporary file that landed elsewhere (a folder on the way was swapped) is removed again.
 */
export async function createTempBeside(
  target: Resolved,
  mode: number,
  prefix = ".mini-agent-",
): Promise<{ handle: FileHandle; temp: string }> {
  const temp = join(dirname(target.path), `${prefix}${randomHex(6)}.tmp`);
  const handle = await open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    await verifyOpened(handle, temp, target);
    return { handle, temp };
  } catch (error) {
    const candidates = [await openedPath(handle), temp];
    const created = await handle.stat();
    await handle.close();
    for (const candidate of candidates) {
      const now = candidate && (await lstat(candidate).catch(() => undefined));
      if (now && now.dev === created.dev && now.ino === created.ino) await unlink(candidate);
    }
    throw error;
  }
}

/** `mkdir -p` of the folder of `target`, verified afterwards to be where it was meant to be. */
export async function makeFolders(target: Resolved): Promise<void> {
  await mkdir(dirname(target.path), { recursive: true });
  await sameRealFolder(target);
}

/** Throws unless the folder of `target` still resolves to itself: nothing on the way swapped. */
export async function sameRealFolder(target: Resolved): Promise<void> {
  const folder = dirname(target.path);
  const real = await realpath(folder);
  if (real === folder) return;
  await checkInside(target.realRoot, real, target.boundary);
  throw changedMeanwhile(target);
}
