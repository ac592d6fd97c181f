import { randomBytes } from "node:crypto";
import { chmod, open, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { limits } from "./limits.js";
import { isBinary } from "./scan.js";

/** Whether the file's first bytes say it is binary (`isBinary`). */
export async function isBinaryFile(path: string): Promise<boolean> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(limits.binarySniffBytes);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return isBinary(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `data` atomically: a temporary file in the same folder, then a rename,
 * so a reader or a crash sees the old bytes or the new ones, never half. An existing file's
 * mode is kept.
 */
export async function writeAtomic(path: string, data: string | Buffer): Promise<void> {
  const mode = await stat(path).then(
    (info) => info.mode & 0o7777,
    () => undefined,
  );
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    const handle = await open(temp, "wx", mode ?? 0o666);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (mode !== undefined) await chmod(temp, mode);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * Streams a file line by line from line `first` (1-based) without ever holding more than
 * `maxLineBytes` of one line: longer lines are cut and `dropped` says how many bytes went.
 * Lines before `first` are only counted. `start` is the line's byte offset and `bytes` its size,
 * newline included. A trailing `\r` is not part of `text`. Honours `signal`.
 */
export async function* readLines(
  path: string,
  maxLineBytes: number,
  signal?: AbortSignal,
  first = 1,
): AsyncGenerator<{ text: string; dropped: number; bytes: number; start: number }> {
  const handle = await open(path, "r");
  try {
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
      const text = Buffer.concat(parts).toString("utf8");
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
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const data = buffer.subarray(0, bytesRead);
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
  } finally {
    await handle.close();
  }
}

/** Lines in a file: its newlines, plus one for a last line without a newline. */
export async function countLines(path: string): Promise<number> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    let count = 0;
    let last = 10;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const data = buffer.subarray(0, bytesRead);
      for (let at = data.indexOf(10); at !== -1; at = data.indexOf(10, at + 1)) count++;
      last = data[bytesRead - 1] ?? 10;
    }
    return last === 10 ? count : count + 1;
  } finally {
    await handle.close();
  }
}
