import { constants, createReadStream } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

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
 * Opens a session file for reading without ever waiting: non-blocking, so a FIFO opens at once,
 * then checked on the open descriptor (no race with a rename), so only a regular file is read.
 */
export async function openSessionFile(path: string): Promise<FileHandle> {
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!(await file.stat()).isFile()) throw new NotRegularFileError(path);
    return file;
  } catch (error) {
    await file.close();
    throw error;
  }
}

/**
 * The lines of a session file as it streams by, without their newline; the last one too when the
 * file does not end with a newline (a torn write). The pieces of a line longer than a chunk are
 * joined once, at its newline: time linear in the line's size, memory the longest line.
 */
export async function* fileLines(path: string): AsyncGenerator<Buffer> {
  const file = await openSessionFile(path);
  let pending: Buffer[] = [];
  for await (const chunk of createReadStream(path, { fd: file }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      yield pending.length > 0 ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      start = newline + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length > 0) yield Buffer.concat(pending);
}
