import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";

/**
 * A JSON file mini-agent keeps for itself (a cache in the state folder), read only when it can be
 * believed: a regular file (a link is not followed, a FIFO not waited on), the user's own, that
 * no one else may write, at most `maxBytes`. Anything else, or JSON that does not parse, reads as
 * undefined: a cache that says nothing. `mtimeMs` is when it was last written or stamped.
 */
export function readOwnJson(
  file: string,
  maxBytes: number,
): { value: unknown; mtimeMs: number } | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    const uid = process.getuid?.();
    if (!info.isFile() || info.size > maxBytes || (info.mode & 0o022) !== 0) return undefined;
    if (uid !== undefined && info.uid !== uid) return undefined;
    return { value: JSON.parse(readFileSync(fd, "utf8")) as unknown, mtimeMs: info.mtimeMs };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
