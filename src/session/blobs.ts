/**
 * A session's blob store: `<id>.blobs/` beside `<id>.jsonl`, one file per content, named by the
 * SHA-256 of its bytes. Records refer to blobs by that hash, so a session file stays small and
 * the same bytes are kept once however often they recur (a screenshot sent twice, a file's old
 * bytes before each of a turn's edits).
 *
 * Crash rule: a blob is written beside its final name, flushed and renamed before `put` returns,
 * and callers write the record that names it only after that. So no record names a blob a crash
 * left half written. A crash between `put` and the record leaves an unreferenced blob: harmless,
 * counted in the cap. Half-written files (`.tmp-…`) are never read and are removed by the next
 * `put`'s scan. A blob deleted or altered by hand reads as missing (`get` checks the hash); `has` tells the two
 * apart.
 */

import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { contentHash, randomHex, Sha256 } from "../crypto.js";
import { systemErrorMeaning } from "../system-errors.js";

/** Bytes a session keeps out of line, all blobs together, unless the caller sets another cap. */
export const DEFAULT_BLOB_CAP = 256 * 1024 * 1024;

const HASH = /^[0-9a-f]{64}$/;
const TEMP_PREFIX = ".tmp-";
/** The store's folder of files kept by hard link (`linkFile`). */
const LINKED = "linked";

export type PutResult = { ok: true; hash: string; size: number } | { ok: false; reason: string };

/** The blob folder of a session file: `<id>.blobs` for `<id>.jsonl`. */
export function blobDirFor(sessionPath: string): string {
  const stem = sessionPath.endsWith(".jsonl")
    ? sessionPath.slice(0, -".jsonl".length)
    : sessionPath;
  return `${stem}.blobs`;
}

/**
 * The store of a session's workspace snapshots (what bash calls could change, kept before they
 * ran): `<id>.snapshot/` beside `<id>.jsonl`, blobs as in the blob store, under its own cap so
 * that a big workspace never starves the pre-images of `write` and `edit`.
 */
export function snapshotStoreFor(sessionPath: string, cap = 1024 * 1024 * 1024): BlobStore {
  return new BlobStore(`${blobDirFor(sessionPath).slice(0, -".blobs".length)}.snapshot`, cap);
}

/**
 * Bytes of the blobs on disk per folder, read from it at the first `put` of this process and kept
 * up to date by every store of that folder: a session's images and a rewind's pre-images go to one
 * folder through two stores, under one cap. A folder removed (and made again) is counted anew:
 * the count holds for the folder with that inode.
 */
const usedByFolder = new Map<string, { ino: number; dev: number; bytes: number }>();

export class BlobStore {
  constructor(
    readonly dir: string,
    readonly cap: number = DEFAULT_BLOB_CAP,
  ) {}

  static forSession(sessionPath: string, cap?: number): BlobStore {
    return new BlobStore(blobDirFor(sessionPath), cap);
  }

  /**
   * Keeps the bytes (once: a blob already there with those bytes is not written again; one altered on disk is
   * written anew) and returns their hash.
   * Bytes that would take the store over its cap are refused with a one-line reason; nothing is
   * written then. So are bytes the store cannot write (a file or folder in the way, no
   * permission, any failed system call): the reason names the code's meaning and the path.
   */
  put(bytes: Uint8Array): PutResult {
    try {
      return this.write(bytes);
    } catch (error) {
      const { code, path, dest } = error as NodeJS.ErrnoException & { dest?: string };
      if (code === undefined) throw error;
      // A file the store was making in its folder is named by the folder: the file is not there.
      const where = dest ?? (path !== undefined && dirname(path) === this.dir ? this.dir : path);
      return {
        ok: false,
        reason: `the session's blob store cannot be written (${systemErrorMeaning(code)}${where ? `: ${where}` : ""})`,
      };
    }
  }

  /**
   * Keeps a copy of the file at `source` (a regular file of `size` bytes, as its `lstat` said),
   * made with `copyFile` and `COPYFILE_FICLONE`: a reflink where the file system has them, else a
   * plain copy; never a hard link, so a later rewrite of the file in place cannot reach the copy.
   * The copy is hashed from the store's side, so the blob holds the bytes its name says whatever
   * happened to the source meanwhile. Refused, with a reason, as `put` refuses.
   */
  putFile(source: string, size: number): PutResult {
    let temp: string | undefined;
    try {
      const used = this.usedBytes();
      if (used + size > this.cap) return this.overCap(used, size);
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      temp = join(this.dir, `${TEMP_PREFIX}${randomHex(6)}`);
      copyFileSync(source, temp, constants.COPYFILE_FICLONE | constants.COPYFILE_EXCL);
      chmodSync(temp, 0o600);
      const copied = statSync(temp).size;
      if (used + copied > this.cap) return this.overCap(used, copied);
      const hash = hashOfFile(temp);
      const path = join(this.dir, hash);
      // The copy takes the name whatever is there: a blob with these bytes, or one altered since.
      const there = fileSize(path);
      renameSync(temp, path);
      temp = undefined;
      this.count(used + copied - there);
      return { ok: true, hash, size: copied };
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      if (code === undefined) throw error;
      return {
        ok: false,
        reason: `it could not be copied into the session's snapshot store (${systemErrorMeaning(code)})`,
      };
    } finally {
      if (temp !== undefined)
        try {
          unlinkSync(temp);
        } catch {}
    }
  }

  /**
   * Keeps the file at `source` by a hard link in `linked/` (a file that never changes: a git
   * object or pack), never by a copy: it costs no space while the workspace holds the file too,
   * and is not counted in the cap. The link is hashed from the store's side, as a copy is. Refused,
   * with a reason, where a link cannot be made (another file system, no permission).
   */
  linkFile(source: string): PutResult {
    const folder = join(this.dir, LINKED);
    let temp: string | undefined;
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      temp = join(folder, `${TEMP_PREFIX}${randomHex(6)}`);
      linkSync(source, temp);
      const { size } = lstatSync(temp);
      const hash = hashOfFile(temp);
      if (!this.hasLinked(hash)) {
        renameSync(temp, join(folder, hash));
        temp = undefined;
      }
      return { ok: true, hash, size };
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      if (code === undefined) throw error;
      return {
        ok: false,
        reason: `it could not be linked into the session's snapshot store (${systemErrorMeaning(code)})`,
      };
    } finally {
      if (temp !== undefined)
        try {
          unlinkSync(temp);
        } catch {}
    }
  }

  /**
   * The path of the file kept by a link under the hash, when its bytes still have that hash (read
   * in pieces, never whole): a rewind links it back. Undefined when there is none, or it was
   * rewritten in place since (through the workspace's name for the same file).
   */
  linked(hash: string): string | undefined {
    if (!HASH.test(hash) || !this.hasLinked(hash)) return undefined;
    const path = join(this.dir, LINKED, hash);
    try {
      return hashOfFile(path) === hash ? path : undefined;
    } catch {
      return undefined;
    }
  }

  private hasLinked(hash: string): boolean {
    try {
      return lstatSync(join(this.dir, LINKED, hash)).isFile();
    } catch {
      return false;
    }
  }

  private overCap(used: number, more: number): PutResult {
    return {
      ok: false,
      reason: `the session's blob store would exceed its cap of ${mebibytes(this.cap)} (${mebibytes(used)} kept, ${mebibytes(more)} more)`,
    };
  }

  private write(bytes: Uint8Array): PutResult {
    const hash = contentHash(bytes);
    const path = join(this.dir, hash);
    if (this.get(hash) !== undefined) return { ok: true, hash, size: bytes.length };
    const used = this.usedBytes();
    if (used + bytes.length > this.cap) return this.overCap(used, bytes.length);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const temp = join(this.dir, `${TEMP_PREFIX}${randomHex(6)}`);
    const fd = openSync(temp, "wx", 0o600);
    try {
      let written = 0;
      while (written < bytes.length) written += writeSync(fd, bytes, written);
      fsyncSync(fd);
    } catch (error) {
      closeSync(fd);
      unlinkSync(temp);
      throw error;
    }
    closeSync(fd);
    try {
      renameSync(temp, path);
    } catch (error) {
      try {
        unlinkSync(temp);
      } catch {}
      throw error;
    }
    this.count(used + bytes.length);
    return { ok: true, hash, size: bytes.length };
  }

  /**
   * The bytes of a blob, or `undefined` when the hash is not one, the blob is missing or cannot
   * be read (a link to itself, no permission, not a regular file), or its bytes no longer have
   * that hash (altered on disk). At most `cap` bytes are read.
   */
  get(hash: string): Buffer | undefined {
    if (!HASH.test(hash)) return undefined;
    let fd: number | undefined;
    try {
      // Never waits on a FIFO put in a blob's place; reads what the open file holds, no more.
      fd = openSync(join(this.dir, hash), constants.O_RDONLY | constants.O_NONBLOCK);
      const stats = fstatSync(fd);
      if (!stats.isFile() || stats.size > this.cap) return undefined;
      const bytes = Buffer.alloc(stats.size);
      let read = 0;
      while (read < bytes.length) {
        const got = readSync(fd, bytes, read, bytes.length - read, read);
        if (got === 0) return undefined;
        read += got;
      }
      return contentHash(bytes) === hash ? bytes : undefined;
    } catch (error) {
      // Gone, a link to nowhere or to itself, not ours to read: all read as missing.
      if ((error as NodeJS.ErrnoException).code !== undefined) return undefined;
      throw error;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** The size of the file kept under the hash, whatever its bytes, without reading them. */
  size(hash: string): number | undefined {
    if (!HASH.test(hash)) return undefined;
    try {
      const stats = statSync(join(this.dir, hash));
      return stats.isFile() ? stats.size : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether a file is kept under the hash, copied or linked, whatever its bytes (`get` checks them). */
  has(hash: string): boolean {
    return this.size(hash) !== undefined || (HASH.test(hash) && this.hasLinked(hash));
  }

  /** Sums the blobs on disk and removes what a crash left half written. */
  private usedBytes(): number {
    let folder: Stats;
    try {
      folder = statSync(this.dir);
    } catch (error) {
      if (isMissing(error)) return 0;
      throw error;
    }
    const known = usedByFolder.get(this.dir);
    if (known?.ino === folder.ino && known.dev === folder.dev) return known.bytes;
    let used = 0;
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (error) {
      if (!isMissing(error)) throw error;
      names = [];
    }
    for (const name of names) {
      const path = join(this.dir, name);
      if (name.startsWith(TEMP_PREFIX)) {
        try {
          unlinkSync(path);
        } catch {}
        continue;
      }
      // Only blobs count: a file of another name, or a link to a big file, is not one.
      if (!HASH.test(name)) continue;
      try {
        const stats = lstatSync(path);
        if (stats.isFile()) used += stats.size;
      } catch {}
    }
    usedByFolder.set(this.dir, { ino: folder.ino, dev: folder.dev, bytes: used });
    return used;
  }

  /** The folder now holds `bytes` of blobs. */
  private count(bytes: number): void {
    const { ino, dev } = statSync(this.dir);
    usedByFolder.set(this.dir, { ino, dev, bytes });
  }
}

/** The SHA-256 of a file's bytes, read in pieces. */
export function hashOfFile(path: string): string {
  const hash = new Sha256();
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const piece = Buffer.allocUnsafe(1024 * 1024);
    for (let got = readSync(fd, piece); got > 0; got = readSync(fd, piece)) {
      hash.update(piece.subarray(0, got));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest();
}

/** The size of the regular file at the path, 0 when there is none. */
function fileSize(path: string): number {
  try {
    const info = lstatSync(path);
    return info.isFile() ? info.size : 0;
  } catch {
    return 0;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MiB`;
}
