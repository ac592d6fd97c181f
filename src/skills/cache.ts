import { createHash, randomUUID } from "node:crypto";
import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { SkillFile } from "./parse.js";

/** What reading one `SKILL.md` gave: its fields (no body) and sha256, or why it is not loaded. */
export type SkillReading = { hash: string; skill: Omit<SkillFile, "body"> } | { refused: string };

/** One file's reading, with the file's identity when it was read and when that was. */
type Entry = SkillReading & {
  /** Device, inode, size, mtime and ctime (nanoseconds) of the file that was read. */
  key: string;
  /** When the reading began (milliseconds since the epoch, the clock files are stamped by). */
  madeAt: number;
};

/** The cache file of one skills folder, in the state folder. */
export function skillCacheFile(state: string, skillsFolder: string): string {
  const name = createHash("sha256").update(skillsFolder).digest("hex").slice(0, 32);
  return join(state, "cache", "skills", `${name}.json`);
}

/** A cache file larger than this is not read (300 skills take about 100 KB). */
const MAX_BYTES = 8 * 1024 * 1024;

/**
 * The readings of one skills folder's `SKILL.md` files, kept from run to run so a look at
 * unchanged skills is one `lstat` each. An entry is used only when the file is exactly the one
 * read: same device, inode, size, mtime and ctime to the nanosecond (an edit that keeps the size
 * and puts the mtime back still moves the ctime; a file renamed over it is another inode), and
 * when it last changed more than a second before the reading began, so a change within the same
 * tick of the file system's clock (which leaves the times as they were) cannot hide behind it.
 *
 * It is a cache of reading, never of trust: a project skill is loaded only when the trust record
 * holds the hash, whatever an entry says. The file is mode 0600 in the state folder, written whole
 * and renamed into place; one that is not the user's own, that others may write, or that is not
 * a cache is ignored (the skills are read as if it were empty) and replaced.
 */
export class SkillCache {
  private readonly entries: Map<string, Entry>;
  private readonly kept = new Map<string, Entry>();
  private changed = false;

  constructor(
    private readonly file: string,
    /** The clock a reading's start is taken from. */
    readonly now: () => number = Date.now,
    /** `read: false`: no entry is taken from the file (every file is read); it is still written. */
    { read = true }: { read?: boolean } = {},
  ) {
    this.entries = read ? readEntries(file) : new Map();
  }

  /** The reading of the file at `location` (its `lstat` is `info`), if it can be taken as it is. */
  get(location: string, info: BigIntStats): SkillReading | undefined {
    const entry = this.entries.get(location);
    if (!entry || entry.key !== keyOf(info) || changedSince(info, entry.madeAt)) return undefined;
    this.kept.set(location, entry);
    return readingOf(entry);
  }

  /**
   * Keeps `reading` of the file at `location`: `opened` is the `fstat` of the open file, taken
   * before it was read, and `madeAt` the time before that `fstat`.
   */
  put(location: string, opened: BigIntStats, madeAt: number, reading: SkillReading): void {
    this.kept.set(location, { ...reading, key: keyOf(opened), madeAt });
    this.changed = true;
  }

  /** Writes the entries used or made by this look, when they differ from the file's. */
  save(): void {
    if (!this.changed && this.kept.size === this.entries.size) return;
    const text = JSON.stringify({ version: 1, entries: Object.fromEntries(this.kept) });
    const dir = join(this.file, "..");
    const temporary = join(dir, `.${randomUUID()}.tmp`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(temporary, text, { flag: "wx", mode: 0o600 });
      renameSync(temporary, this.file);
    } catch {
      // A cache that cannot be written costs the next run its time, nothing else.
      rmSync(temporary, { force: true });
    }
  }
}

const keyOf = (info: BigIntStats) =>
  `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;

/** Whether the file changed later than a second before `madeAt` (the racy case). */
function changedSince(info: BigIntStats, madeAt: number): boolean {
  // BigInts: no Math.max.
  let changed = info.mtimeNs;
  if (info.ctimeNs > changed) changed = info.ctimeNs;
  return changed + 1_000_000_000n > BigInt(Math.floor(madeAt)) * 1_000_000n;
}

function readingOf(entry: Entry): SkillReading {
  return "refused" in entry ? { refused: entry.refused } : { hash: entry.hash, skill: entry.skill };
}

/** The entries of a cache file; none when it is missing, foreign, too large or not a cache. */
function readEntries(file: string): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return entries;
  }
  try {
    const info = fstatSync(fd);
    const uid = process.getuid?.();
    if (!info.isFile() || info.size > MAX_BYTES) return entries;
    if ((uid !== undefined && info.uid !== uid) || (info.mode & 0o022) !== 0) return entries;
    const value: unknown = JSON.parse(readFileSync(fd, "utf8"));
    if (!isObject(value) || value.version !== 1 || !isObject(value.entries)) return entries;
    for (const [location, candidate] of Object.entries(value.entries)) {
      const entry = entryOf(candidate);
      if (entry) entries.set(location, entry);
    }
    return entries;
  } catch {
    return new Map();
  } finally {
    closeSync(fd);
  }
}

function entryOf(value: unknown): Entry | undefined {
  if (!isObject(value) || typeof value.key !== "string" || typeof value.madeAt !== "number")
    return undefined;
  const { key, madeAt } = value;
  if (typeof value.refused === "string") return { key, madeAt, refused: value.refused };
  const { hash, skill } = value;
  if (typeof hash !== "string" || !/^[0-9a-f]{64}$/.test(hash) || !isSkillFields(skill))
    return undefined;
  const { name, description, license, compatibility, metadata, allowedTools, warning } = skill;
  return {
    key,
    madeAt,
    hash,
    skill: {
      name,
      description,
      ...(license !== undefined && { license }),
      ...(compatibility !== undefined && { compatibility }),
      ...(metadata !== undefined && { metadata: { ...metadata } }),
      ...(allowedTools !== undefined && { allowedTools: [...allowedTools] }),
      ...(warning !== undefined && { warning }),
    },
  };
}

function isSkillFields(value: unknown): value is Omit<SkillFile, "body"> {
  if (!isObject(value) || typeof value.name !== "string" || typeof value.description !== "string")
    return false;
  const optionalText = (field: unknown) => field === undefined || typeof field === "string";
  const texts = (field: unknown) =>
    Array.isArray(field) && field.every((item) => typeof item === "string");
  return (
    optionalText(value.license) &&
    optionalText(value.compatibility) &&
    optionalText(value.warning) &&
    (value.metadata === undefined ||
      (isObject(value.metadata) && texts(Object.values(value.metadata)))) &&
    (value.allowedTools === undefined || texts(value.allowedTools))
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
