import {
  chmod,
  link,
  lstat,
  mkdir,
  readlink,
  realpath,
  rename,
  rmdir,
  symlink,
  unlink,
} from "node:fs/promises";
import { dirname, join } from "node:path";
import { randomHex } from "../crypto.js";
import type { BlobStore } from "../session/blobs.js";
import type { Resolved } from "../tools/path.js";
import { sameState } from "./changes.js";
import type { FileState } from "./read-state.js";
import { type ReadState, readState } from "./read-state.js";

/** What is at a path now, as a rewind compares it: a file's bytes when within `cap`. */
export async function readNode(target: Resolved, cap: number): Promise<ReadState | undefined> {
  const info = await lstat(target.path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return null;
    throw error;
  });
  if (info === null) return { hash: null, mode: null, size: 0 };
  if (info.isFile()) return readState(target, cap);
  const mode = info.mode & 0o7777;
  if (info.isDirectory()) return { hash: null, mode, node: "folder", size: 0 };
  if (info.isSymbolicLink()) {
    const link = await readlink(target.path);
    return { hash: null, mode: null, node: "link", target: link, size: 0 };
  }
  return { hash: null, mode, node: "other", size: 0 };
}

/** The bytes kept under a hash: by `write` and `edit` (the blob store) or a bash snapshot. */
export interface KeptBytes {
  get(hash: string): Buffer | undefined;
  has(hash: string): boolean;
  /** The path of a file kept by a hard link (a git object) whose bytes still have the hash. */
  linked(hash: string): string | undefined;
}

export function keptBytes(stores: readonly BlobStore[]): KeptBytes {
  return {
    get: (hash) => {
      for (const store of stores) {
        const bytes = store.get(hash);
        if (bytes !== undefined) return bytes;
      }
      return undefined;
    },
    has: (hash) => stores.some((store) => store.has(hash)),
    linked: (hash) => {
      for (const store of stores) {
        const path = store.linked(hash);
        if (path !== undefined) return path;
      }
      return undefined;
    },
  };
}

/**
 * Puts a file kept by a hard link back at the path, as the same file: a link beside it named
 * with `tempPrefix`, `beforeRename` (the path still holds what the plan saw), then a rename.
 */
export async function linkBack(
  target: Resolved,
  from: string,
  mode: number,
  options: { tempPrefix: string; beforeRename: () => Promise<void> },
): Promise<void> {
  const temp = join(dirname(target.path), `${options.tempPrefix}${randomHex(6)}.tmp`);
  await realParent(target);
  await link(from, temp);
  try {
    const info = await lstat(temp);
    if ((info.mode & 0o7777) !== mode) await chmod(temp, mode);
    await options.beforeRename();
    await realParent(target);
    await rename(temp, target.path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}

/**
 * Whether the path is still what the plan saw (`expect`), right before it is changed: anything
 * else, a change made while the rewind ran, is not overwritten.
 */
export async function stillAsPlanned(target: Resolved, expect: FileState): Promise<void> {
  const now = await readNode(target, -1);
  if (!now || !sameState(expect, now)) throw new Error("it changed while the rewind ran");
}

/** The folder the path is in is the real one the plan saw: never a link swapped in since. */
export async function realParent(target: Resolved): Promise<void> {
  const parent = await realpath(dirname(target.path)).catch(() => undefined);
  if (parent !== dirname(target.path))
    throw new Error("a folder on its path is now a link elsewhere");
}

/** Clears the path for what is put back there: removes a link, a file, or an emptied folder. */
export async function clear(target: Resolved, now: FileState): Promise<void> {
  if (now.node === "folder") await rmdir(target.path);
  else if (now.hash !== null || now.node !== undefined) await unlink(target.path);
}

/** Makes a folder bash removed (its mode is set after what it holds is put back). */
export async function makeFolder(target: Resolved, now: FileState): Promise<void> {
  await stillAsPlanned(target, now);
  await realParent(target);
  if (now.node === "folder") return;
  await clear(target, now);
  await mkdir(target.path, { mode: 0o700 });
}

/** Sets a folder's mode as it was: the last step, so a read-only folder is filled first. */
export async function folderMode(target: Resolved, mode: number): Promise<void> {
  await realParent(target);
  const info = await lstat(target.path);
  if (!info.isDirectory()) throw new Error("it is no longer a folder");
  await chmod(target.path, mode);
}

/** Makes a link bash removed or changed again, with its target. */
export async function makeLink(target: Resolved, link: string, now: FileState): Promise<void> {
  await stillAsPlanned(target, now);
  await realParent(target);
  await clear(target, now);
  await symlink(link, target.path);
}
