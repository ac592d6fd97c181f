import { lstat } from "node:fs/promises";
import { contentHash } from "../crypto.js";
import { openResolved } from "../tools/open.js";
import type { Resolved } from "../tools/path.js";
import { digestFile } from "../tools/seen.js";

/**
 * A path as a change found or left it: a regular file's hash and mode; null hash and mode when
 * there was nothing. What only bash makes is told by `node`: a folder (its mode), a symbolic
 * link (its `target`), anything else (a device, a FIFO, a socket: its mode; never restored).
 */
export interface FileState {
  hash: string | null;
  mode: number | null;
  /** A regular file's owner and group, when recorded (a bash snapshot records them). */
  owner?: Owner;
  node?: "folder" | "link" | "other";
  target?: string;
}

/** The owner and group of a file, by number. */
export interface Owner {
  uid: number;
  gid: number;
}

export interface ReadState extends FileState {
  size: number;
  /** The bytes, when they were read (a file within the cap). */
  bytes?: Buffer;
}

/**
 * The file at the resolved path: absent (null hash), or a regular file's hash, mode and, when it
 * is at most `keepUpTo` bytes, its bytes; `undefined` for anything else (a FIFO, a device: the
 * tools refuse them; opened without waiting, as the tools open them).
 */
export async function readState(
  target: Resolved,
  keepUpTo: number,
): Promise<ReadState | undefined> {
  const info = await lstat(target.path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return null;
    throw error;
  });
  if (info === null) return { hash: null, mode: null, size: 0 };
  if (!info.isFile()) return undefined;
  const opened = await openResolved(target).catch(() => undefined);
  if (!opened) return undefined;
  try {
    const mode = opened.info.mode & 0o7777;
    const size = opened.info.size;
    if (size <= keepUpTo) {
      const bytes = await opened.handle.readFile();
      return { hash: contentHash(bytes), mode, size: bytes.length, bytes };
    }
    const digest = await digestFile(opened.handle);
    return { hash: digest.hash, mode, size };
  } finally {
    await opened.handle.close();
  }
}
