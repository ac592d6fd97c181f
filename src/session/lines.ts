import { constants, createReadStream } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { systemErrorMeaning } from "../system-errors.js";

/**
 * A file named like a session that is not a regular file: a FIFO, a device, a socket. Opening a
 * FIFO for reading the ordinary way waits for a writer, in a thread no signal reaches.
 */
export class NotRegularFileError extends Error {
  override name = "NotRegularFileError";

  constructor(readonly path: string) {
    super(`session ${path} is not a regular file`);
  }
}

/**
 * A session file this process may not open (another user's, mode `0600`; mode `000`). It is
 * listed and refused by name, never passed over: `--continue` must not take an older session.
 */
export class UnreadableSessionError extends Error {
  override name = "UnreadableSessionError";

  constructor(
    readonly path: string,
    /** Why, in words: `permission denied`. */
    readonly reason: string,
  ) {
    super(`session file ${path} cannot be read (${reason}): fix its owner or mode`);
  }
}

/** The codes with which opening a file says this process may not read it. */
const deniedCodes = new Set(["EACCES", "EPERM"]);

/**
 * Opens a session file for reading without ever waiting: non-blocking, so a FIFO opens at once,
 * then checked on the open descriptor (no race with a rename), so only a regular file is read.
 * A file it may not read is an `UnreadableSessionError`.
 */
export async function openSessionFile(path: string): Promise<FileHandle> {
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code !== undefined && deniedCodes.has(error.code)) {
        throw new UnreadableSessionError(path, systemErrorMeaning(error.code));
      }
      throw error;
    },
  );
  try {
    if (!(await file.stat()).isFile()) throw new NotRegularFileError(path);
    return file;
  } catch (error) {
    await file.close();
    throw error;
  }
}

/**
 * The longest line a reader keeps: far beyond any record the agent writes (a 100 MB tool result is
 * one), and well below what V8 can hold as one string (about half a gigabyte).
 */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

/** One line of a session file. */
export interface FileLine {
  /** The line without its newline; undefined for a line longer than `MAX_LINE_BYTES`, not kept. */
  bytes: Buffer | undefined;
  /** False for a last line the file ends without a newline: a torn write. */
  ended: boolean;
}

/**
 * The lines of a session file as it streams by. The pieces of a line longer than a chunk are
 * joined once, at its newline: time linear in the line's size, memory the longest line, which
 * is bounded: a longer line is read past and given without its bytes.
 */
export async function* fileLines(path: string): AsyncGenerator<FileLine> {
  const file = await openSessionFile(path);
  let pending: Buffer[] = [];
  let size = 0;
  const line = (last: Buffer, ended: boolean): FileLine => {
    const bytes =
      size + last.length > MAX_LINE_BYTES
        ? undefined
        : pending.length > 0
          ? Buffer.concat([...pending, last])
          : last;
    pending = [];
    size = 0;
    return { bytes, ended };
  };
  for await (const chunk of createReadStream(path, { fd: file }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      yield line(chunk.subarray(start, newline), true);
      start = newline + 1;
    }
    if (start < chunk.length) {
      const piece = chunk.subarray(start);
      size += piece.length;
      // Past the bound the line is only counted: its pieces are let go as they come.
      if (size > MAX_LINE_BYTES) pending = [];
      else pending.push(piece);
    }
  }
  if (size > 0) yield line(Buffer.alloc(0), false);
}
