import type { FileHandle } from "node:fs/promises";
import { rename, rm } from "node:fs/promises";
import { systemErrorMeaning } from "../system-errors.js";
import { headOf } from "../text.js";
import { limits } from "./limits.js";
import { createTempBeside, sameRealFolder } from "./open.js";
import type { Resolved } from "./path.js";
import { isBinary } from "./search/scan.js";
import { Digest, type SeenContent } from "./seen.js";
import { wholeCharacters } from "./utf8.js";

/** Whether the file's first bytes say it is binary (`isBinary`). */
export async function isBinaryFile(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(limits.binarySniffBytes);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return isBinary(buffer.subarray(0, bytesRead));
}

/** Bytes written per `write`: a big content is encoded a piece at a time, never whole. */
const WRITE_CHUNK = 1 << 20;

export interface AtomicWriteOptions {
  /** The mode of the file replaced, kept. */
  mode?: number | undefined;
  signal?: AbortSignal | undefined;
  /** The last check before the rename (the file still holds what the tool read); throws to stop. */
  beforeRename?: () => Promise<void>;
  /** How the temporary file's name begins (`createTempBeside`). */
  tempPrefix?: string;
  /**
   * The owner and group the file is given before its rename (before its mode: a change of owner
   * clears setuid). When they cannot be given (the process is not root), the file is written as
   * the process's, without setuid and setgid, and `refused` is told why.
   */
  owner?: { uid: number; gid: number; refused: (why: string) => void };
}

/**
 * Replaces the file at `target` (a real path) with `data` atomically: a temporary file in the same folder
 * (`createTempBeside`: verified before a byte is written), then a rename, so a reader or a crash
 * sees the old bytes or the new ones, never half. Strings are encoded as UTF-8 a megabyte at a
 * time, so memory stays near the size of `data` itself. An abort, or a `beforeRename` that
 * throws, leaves the file as it was. Returns the `SeenContent` of the bytes written.
 */
export async function writeAtomic(
  target: Resolved,
  data: string | Iterable<Uint8Array>,
  options: AtomicWriteOptions = {},
): Promise<SeenContent> {
  const { mode, signal } = options;
  const { handle, temp } = await createTempBeside(target, mode ?? 0o666, options.tempPrefix);
  const digest = new Digest();
  try {
    try {
      if (typeof data === "string") await writeText(handle, data, digest, signal);
      else for (const piece of data) await writeBytes(handle, piece, digest, signal);
      const kept = options.owner ? await giveOwner(handle, options.owner) : true;
      if (mode !== undefined) await handle.chmod(kept ? mode : mode & ~0o6000);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // The temporary name is random: if the folder was swapped since, the rename finds nothing.
    if (signal?.aborted) throw new Error("aborted");
    await sameRealFolder(target);
    await options.beforeRename?.();
    if (signal?.aborted) throw new Error("aborted");
    await rename(temp, target.path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return digest.finish();
}

/**
 * Gives the temporary file the owner and group wanted, when it has others: false (and `refused`
 * told) when the system refuses.
 */
async function giveOwner(
  handle: FileHandle,
  owner: NonNullable<AtomicWriteOptions["owner"]>,
): Promise<boolean> {
  const info = await handle.stat();
  if (info.uid === owner.uid && info.gid === owner.gid) return true;
  try {
    await handle.chown(owner.uid, owner.gid);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EPERM" && code !== "EINVAL") throw error;
    owner.refused(
      `its owner and group (${owner.uid}:${owner.gid}) could not be given back (${systemErrorMeaning(code)})`,
    );
    return false;
  }
}

async function writeText(
  handle: FileHandle,
  text: string,
  digest: Digest,
  signal?: AbortSignal,
): Promise<void> {
  // A UTF-16 unit takes at most 3 bytes in UTF-8 (a surrogate pair: 4 for 2 units).
  const scratch = Buffer.allocUnsafe(3 * WRITE_CHUNK);
  for (let at = 0; at < text.length; ) {
    const piece = headOf(text.slice(at, at + WRITE_CHUNK + 1), WRITE_CHUNK);
    const length = scratch.write(piece);
    await writeBytes(handle, scratch.subarray(0, length), digest, signal);
    at += piece.length;
  }
}

async function writeBytes(
  handle: FileHandle,
  bytes: Uint8Array,
  digest: Digest,
  signal?: AbortSignal,
): Promise<void> {
  if (signal?.aborted) throw new Error("aborted");
  digest.update(bytes);
  for (let at = 0; at < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, at, bytes.length - at);
    at += bytesWritten;
  }
}

/**
 * Streams an open file line by line from line `first` (1-based) without ever holding more than
 * `maxLineBytes` of one line: longer lines are cut, between UTF-8 characters, and `dropped`
 * says how many bytes went. Lines before `first` are only counted. `start` is the line's byte
 * offset and `bytes` its size, newline included. A trailing `\r` is not part of `text`.
 * Every byte read from the start goes into `digest`, if given, once. Honours `signal`.
 */
export async function* readLines(
  handle: FileHandle,
  maxLineBytes: number,
  signal?: AbortSignal,
  first = 1,
  digest?: Digest,
): AsyncGenerator<{ text: string; dropped: number; bytes: number; start: number }> {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let lineNo = 1;
  let position = 0;
  let start = 0;
  let parts: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  const keep = (piece: Buffer) => {
    const room = Math.max(0, maxLineBytes - kept);
    if (piece.length > room) dropped += piece.length - room;
    if (room > 0 && piece.length > 0) {
      const part = Buffer.from(piece.subarray(0, room));
      parts.push(part);
      kept += part.length;
    }
  };
  const line = (end: number) => {
    let bytes = Buffer.concat(parts);
    if (dropped > 0) {
      const whole = wholeCharacters(bytes);
      dropped += bytes.length - whole;
      bytes = bytes.subarray(0, whole);
    }
    const text = bytes.toString("utf8");
    const result = {
      text: text.endsWith("\r") ? text.slice(0, -1) : text,
      dropped,
      bytes: end - start,
      start,
    };
    parts = [];
    kept = 0;
    dropped = 0;
    start = end;
    return result;
  };
  for (;;) {
    if (signal?.aborted) throw new Error("aborted");
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    const data = buffer.subarray(0, bytesRead);
    digest?.update(data);
    let at = 0;
    for (let newline = data.indexOf(10); newline !== -1; newline = data.indexOf(10, at)) {
      if (lineNo >= first) {
        keep(data.subarray(at, newline));
        yield line(position + newline + 1);
      } else start = position + newline + 1;
      lineNo++;
      at = newline + 1;
    }
    if (lineNo >= first) keep(data.subarray(at));
    position += bytesRead;
  }
  if (lineNo >= first && (kept > 0 || dropped > 0)) yield line(position);
}

/** Lines in an open file: its newlines, plus one for a last line without a newline. */
export async function countLines(handle: FileHandle): Promise<number> {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let count = 0;
  let last = 10;
  for (let position = 0; ; ) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    const data = buffer.subarray(0, bytesRead);
    for (let at = data.indexOf(10); at !== -1; at = data.indexOf(10, at + 1)) count++;
    last = data[bytesRead - 1] ?? 10;
    position += bytesRead;
  }
  return last === 10 ? count : count + 1;
}
