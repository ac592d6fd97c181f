import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, renameSync, rmSync, type Stats, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readOwnJson } from "../own-json.js";
import type { SkillFile } from "./parse.js";
import { sweepCaches } from "./sweep.js";

/** What reading one `SKILL.md` gave: its fields (no body) and sha256, or why it is not loaded. */
export type SkillReading = { hash: string; skill: Omit<SkillFile, "body"> } | { refused: string };

/** One file's reading, with the file's identity when it was read and when that was. */
type Entry = SkillReading & {
  /** Device, inode, size, mtime and ctime (milliseconds, as `stat` gives them) of the file read. */
  key: Key;
  /** When the reading began (milliseconds since the epoch, the clock files are stamped by). */
  madeAt: number;
};

type Key = [dev: number, ino: number, size: number, mtimeMs: number, ctimeMs: number];

/** The folder of the skill caches, in the state folder. */
export const skillCacheFolder = (state: string) => join(state, "cache", "skills");

/** The cache file of one skills folder, in the state folder. */
export function skillCacheFile(state: string, skillsFolder: string): string {
  const name = createHash("sha256").update(skillsFolder).digest("hex").slice(0, 32);
  return join(skillCacheFolder(state), `${name}.json`);
}

/** A cache file larger than this is not read (300 skills take about 100 KB). */
const MAX_BYTES = 8 * 1024 * 1024;
/** The version of the cache files this reads and writes; a file of another is not read. */
const VERSION = 2;
/** A cache file in use is stamped again when it is older than this, so the sweep keeps it. */
const RESTAMP_MS = 24 * 60 * 60 * 1000;

/**
 * The readings of one skills folder's `SKILL.md` files, kept from run to run so a look at
 * unchanged skills is one `lstat` each. An entry is used only when the file is exactly the one
 * read: same device, inode, size, mtime and ctime (an edit that keeps the size and puts the
 * mtime back still moves the ctime, which no one can set; a file renamed over it is another
 * inode, and its ctime moves too), and when it last changed more than a second before the
 * reading began, so a change within the same tick of the file system's clock (which leaves the
 * times as they were) cannot hide behind it. A change after that moves the ctime by more than
 * the second, so the milliseconds `stat` gives tell it.
 *
 * It is a cache of reading, never of trust: a project skill is loaded only when the trust record
 * holds the hash, whatever an entry says. The file is mode 0600 in the state folder, written whole
 * and renamed into place; one that is not the user's own, that others may write, or that is not
 * a cache is ignored (the skills are read as if it were empty) and replaced. A file in use is
 * stamped once a day; writing one sweeps away those no look used for a month (`sweep.ts`).
 */
export class SkillCache {
  private readonly entries: Map<string, Entry>;
  private readonly kept = new Map<string, Entry>();
  private changed = false;
  /** When the file read was last written or stamped (0: no file was read). */
  private readonly stamped: number;

  constructor(
    private readonly file: string,
    /** The clock a reading's start is taken from. */
    readonly now: () => number = Date.now,
    /** `read: false`: no entry is taken from the file (every file is read); it is still written. */
    { read = true }: { read?: boolean } = {},
  ) {
    const found = read ? readEntries(file) : { entries: new Map<string, Entry>(), stamped: 0 };
    this.entries = found.entries;
    this.stamped = found.stamped;
  }

  /** The reading of the file at `location` (its `lstat` is `info`), if it can be taken as it is. */
  get(location: string, info: Stats): SkillReading | undefined {
    const entry = this.entries.get(location);
    if (!entry || !sameFile(entry.key, info) || changedSince(info, entry.madeAt)) return undefined;
    this.kept.set(location, entry);
    return entry;
  }

  /**
   * Keeps `reading` of the file at `location`: `opened` is the `fstat` of the open file, taken
   * before it was read, and `madeAt` the time before that `fstat`.
   */
  put(location: string, opened: Stats, madeAt: number, reading: SkillReading): void {
    this.kept.set(location, { ...reading, key: keyOf(opened), madeAt });
    this.changed = true;
  }

  /**
   * Writes the entries used or made by this look, when they differ from the file's (and then
   * sweeps the folder); stamps a file in use that was not written for a day.
   */
  save(): void {
    if (!this.changed && this.kept.size === this.entries.size) {
      if (this.stamped > 0 && Date.now() - this.stamped > RESTAMP_MS) {
        const now = new Date();
        quietly(() => utimesSync(this.file, now, now));
      }
      return;
    }
    const text = JSON.stringify({ version: VERSION, entries: Object.fromEntries(this.kept) });
    const dir = join(this.file, "..");
    const temporary = join(dir, `.${randomUUID()}.tmp`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(temporary, text, { flag: "wx", mode: 0o600 });
      renameSync(temporary, this.file);
    } catch {
      // A cache that cannot be written costs the next run its time, nothing else.
      rmSync(temporary, { force: true });
      return;
    }
    sweepCaches(dir);
  }
}

const keyOf = (info: Stats): Key => [info.dev, info.ino, info.size, info.mtimeMs, info.ctimeMs];

const sameFile = (key: Key, info: Stats) =>
  key[4] === info.ctimeMs &&
  key[3] === info.mtimeMs &&
  key[2] === info.size &&
  key[1] === info.ino &&
  key[0] === info.dev;

/** Whether the file changed later than a second before `madeAt` (the racy case). */
const changedSince = (info: Stats, madeAt: number) =>
  Math.max(info.mtimeMs, info.ctimeMs) + 1000 > Math.floor(madeAt);

function quietly(act: () => void): void {
  try {
    act();
  } catch {
    // Best effort: a cache only ever saves time.
  }
}

/**
 * The entries of a cache file, and when it was last written or stamped; none when it is missing,
 * foreign, too large or not a cache.
 */
function readEntries(file: string): { entries: Map<string, Entry>; stamped: number } {
  const entries = new Map<string, Entry>();
  const read = readOwnJson(file, MAX_BYTES);
  const value = read?.value;
  if (!read || !isObject(value) || value.version !== VERSION || !isObject(value.entries))
    return { entries, stamped: 0 };
  for (const [location, candidate] of Object.entries(value.entries))
    if (isEntry(candidate)) entries.set(location, candidate);
  return { entries, stamped: read.mtimeMs };
}

/** Whether `value` (fresh from `JSON.parse`, held by nothing else) is an entry as `put` makes them. */
function isEntry(value: unknown): value is Entry {
  if (!isObject(value) || typeof value.madeAt !== "number") return false;
  const { key } = value;
  if (!Array.isArray(key) || key.length !== 5 || !key.every((part) => typeof part === "number"))
    return false;
  if (typeof value.refused === "string") return true;
  return (
    typeof value.hash === "string" &&
    /^[0-9a-f]{64}$/.test(value.hash) &&
    isSkillFields(value.skill)
  );
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
