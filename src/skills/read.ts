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
  const refused = (reason: string) => ({ refused: reason });
  if (!opened.isFile()) return refused("SKILL.md is not a regular file");
  if (opened.size > skillFileBytes)
    return refused(`SKILL.md is ${opened.size} bytes (at most ${skillFileBytes})`);
  const bytes = readFileSync(fd);
  // It grew past the bound after fstat: refused all the same (as a configuration file is).
  if (bytes.length > skillFileBytes)
    return refused(`SKILL.md is ${bytes.length} bytes (at most ${skillFileBytes})`);
  if (bytes.includes(0)) return refused("SKILL.md holds a NUL byte");
  if (firstInvalidUtf8(bytes) !== -1) return refused("SKILL.md is not UTF-8 text");
  const parsed = parseSkill(bytes.toString("utf8"), folder);
  if ("refused" in parsed) return parsed;
  const { body: _body, ...skill } = parsed;
  return { hash: contentHash(bytes), skill };
}

/** What `read` gives, or undefined where it throws (gone, not allowed, not a folder). */
export function quietly<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
