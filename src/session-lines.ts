import { createReadStream } from "node:fs";

/**
 * The lines of a file as it streams by, without their newline; the last one too when the file
 * does not end with a newline (a torn write). The pieces of a line longer than a chunk are joined
 * once, at its newline: time linear in the line's size, memory the longest line.
 */
export async function* fileLines(path: string): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
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
