import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  realpathSync,
  type Stats,
} from "node:fs";
import { dirname } from "node:path";
import { contentHash } from "../crypto.js";
import { firstInvalidUtf8 } from "../tools/utf8.js";
import type { SkillCache, SkillReading } from "./cache.js";
import { parseSkill } from "./parse.js";

/** The largest `SKILL.md` read. */
export const skillFileBytes = 256 * 1024;

/** A `SKILL.md` as found: its path (not resolved), its `lstat`, and its real path if it is no link. */
export interface SkillFileFound {
  file: string;
  info: Stats;
  location: string;
}

/**
 * Reads the `SKILL.md` at `file` (whose `lstat` is `info`) of the skill folder named `folder`,
 * whose real path is `realFolder`: its fields and hash, or why it is not loaded. A regular file
 * exactly as the cache saw it is taken from the cache; any other is opened (without following a
 * last link, without blocking on a FIFO), checked, parsed and hashed, and what it gave is cached.
 * A link is followed only to a file in the same folder, and never cached.
 */
export function readSkill(
  { file, info, location }: SkillFileFound,
  realFolder: string,
  folder: string,
  cache: SkillCache,
): SkillReading {
  let real = location;
  if (info.isSymbolicLink()) {
    real = quietly(() => realpathSync(file)) ?? "";
    if (real === "") return { refused: "SKILL.md is a dangling link" };
    if (dirname(real) !== realFolder)
      return { refused: "SKILL.md is a link leading out of its folder" };
  } else {
    const cached = cache.get(real, info);
    if (cached) return cached;
  }
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    return { refused: `SKILL.md cannot be read (${code})` };
  }
  try {
    const madeAt = cache.now();
    const opened = fstatSync(fd);
    const reading = readOpened(fd, opened, folder);
    if (!info.isSymbolicLink()) cache.put(real, opened, madeAt, reading);
    return reading;
  } finally {
    closeSync(fd);
  }
}

function readOpened(fd: number, opened: Stats, folder: string): SkillReading {
  const read = openedText(fd, opened, "SKILL.md", skillFileBytes);
  if ("refused" in read) return read;
  const parsed = parseSkill(read.text, folder);
  if ("refused" in parsed) return parsed;
  const { body: _body, ...skill } = parsed;
  return { hash: contentHash(read.bytes), skill };
}

/**
 * The text of a small file the user keeps for the agent (a `SKILL.md`, a command's file), open as
 * `fd` with `opened` its `fstat`; or why it is refused, naming it `shown`: not a regular file,
 * over `bound` bytes (also when it grew past it after `fstat`), a NUL byte, not UTF-8.
 */
export function openedText(
  fd: number,
  opened: Stats,
  shown: string,
  bound: number,
): { bytes: Buffer; text: string } | { refused: string } {
  const refused = (reason: string) => ({ refused: `${shown} ${reason}` });
  if (!opened.isFile()) return refused("is not a regular file");
  if (opened.size > bound) return refused(`is ${opened.size} bytes (at most ${bound})`);
  const bytes = readFileSync(fd);
  // It grew past the bound after fstat: refused all the same (as a configuration file is).
  if (bytes.length > bound) return refused(`is ${bytes.length} bytes (at most ${bound})`);
  if (bytes.includes(0)) return refused("holds a NUL byte");
  if (firstInvalidUtf8(bytes) !== -1) return refused("is not UTF-8 text");
  return { bytes, text: bytes.toString("utf8") };
}

/**
 * Opens the regular file at `path` without following a last link or blocking on a FIFO, and
 * reads it with `openedText`; or why it cannot be (`shown cannot be read (ENOENT)`).
 */
export function smallTextFile(
  path: string,
  shown: string,
  bound: number,
): { bytes: Buffer; text: string; opened: Stats } | { refused: string } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return {
      refused: `${shown} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`,
    };
  }
  try {
    const opened = fstatSync(fd);
    const read = openedText(fd, opened, shown, bound);
    return "refused" in read ? read : { ...read, opened };
  } finally {
    closeSync(fd);
  }
}

/** What `read` gives, or undefined where it throws (gone, not allowed, not a folder). */
export function quietly<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
