import { randomBytes } from "node:crypto";
import { chmod, type FileHandle, open, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { limits } from "./limits.js";

/** True when the first bytes hold a NUL: the heuristic git and ripgrep use. */
export async function isBinaryFile(path: string): Promise<boolean> {
  const handle = await open(path, "r");
  try {
    return isBinaryHead(handle);
  } finally {
    await handle.close();
  }
}

async function isBinaryHead(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(limits.binarySniffBytes);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead).includes(0);
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
 * Streams a file line by line without ever holding more than `maxLineBytes` of one line:
 * longer lines are cut and `dropped` says how many bytes went; `bytes` is the line's size in the
 * file, newline included. A trailing `\r` is not part of `text`. Honours `signal`.
 */
export async function* readLines(
  path: string,
  maxLineBytes: number,
  signal?: AbortSignal,
): AsyncGenerator<{ text: string; dropped: number; bytes: number }> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(64 * 1024);
    let parts: Buffer[] = [];
    let kept = 0;
    let dropped = 0;
    const line = (newline: number) => {
      const text = Buffer.concat(parts).toString("utf8");
      const bytes = kept + dropped + newline;
      const result = { text: text.endsWith("\r") ? text.slice(0, -1) : text, dropped, bytes };
      parts = [];
      kept = 0;
      dropped = 0;
      return result;
    };
    const keep = (piece: Buffer) => {
      const room = Math.max(0, maxLineBytes - kept);
      if (piece.length > room) dropped += piece.length - room;
      if (room > 0) {
        const part = Buffer.from(piece.subarray(0, room));
        parts.push(part);
        kept += part.length;
      }
    };
    for (;;) {
      if (signal?.aborted) throw new Error("aborted");
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      let data = buffer.subarray(0, bytesRead);
      for (let newline = data.indexOf(10); newline !== -1; newline = data.indexOf(10)) {
        keep(data.subarray(0, newline));
        yield line(1);
        data = data.subarray(newline + 1);
      }
      keep(data);
    }
    if (kept > 0 || dropped > 0) yield line(0);
  } finally {
    await handle.close();
  }
}
