import { mkdirSync, renameSync, rmSync, type Stats, utimesSync, writeFileSync } from "node:fs";
import { join, sep } from "node:path";
import { nodeCrypto, sha256Hex } from "../crypto.js";
import { readOwnJson } from "../own-json.js";
import type { SkillFile } from "./parse.js";
import { sweepCaches } from "./sweep.js";

/** What reading one `SKILL.md` gave: its fields (no body) and sha256, or why it is not loaded. */
export type SkillReading = { hash: string; skill: Omit<SkillFile, "body"> } | { refused: string };

/** Device, inode, size, mtime and ctime (milliseconds, as `stat` gives them) of the file read. */
type Key = [dev: number, ino: number, size: number, mtimeMs: number, ctimeMs: number];

/** The fields of a reading but the name and description, when it has any. */
type MoreFields = Omit<SkillFile, "body" | "name" | "description">;

/**
 * One file's reading as the cache file keeps it, one array a file: its path (below the skills
 * folder, or absolute outside it), its identity when it was read, when the reading began
 * (milliseconds since the epoch, the clock files are stamped by), then either its sha256, name,
 * description and other fields, or why it was refused.
 */
type Entry =
  | [path: string, ...key: Key, madeAt: number, hash: string, name: string, description: string]
  | [
      path: string,
      ...key: Key,
      madeAt: number,
      hash: string,
      name: string,
      description: string,
      more: MoreFields,
    ]
  | [path: string, ...key: Key, madeAt: number, refused: string];

/** The folder of the skill caches, in the state folder. */
export const skillCacheFolder = (state: string) => join(state, "cache", "skills");

/** The cache file of one skills folder, in the state folder. */
export function skillCacheFile(state: string, skillsFolder: string): string {
  const name = sha256Hex(skillsFolder).slice(0, 32);
  return join(skillCacheFolder(state), `${name}.json`);
}

/** A cache file larger than this is not read (300 skills take about 70 KB). */
const MAX_BYTES = 8 * 1024 * 1024;
/** The version of the cache files this reads and writes; a file of another is not read. */
const VERSION = 3;
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
 * stamped once a day; writing one sweeps away those no look used for a month (`sweep.ts`). Its
 * entries are arrays (`Entry`), each path below the skills folder: 300 skills are read in a
 * fraction of the time objects keyed by absolute paths took.
 */
export class SkillCache {
  private readonly file: string;
  /** The skills folder and a separator: the start of the paths kept relative. */
  private readonly prefix: string;
  private readonly entries: Map<string, Entry>;
  private readonly kept = new Map<string, Entry>();
  private changed = false;
  /** When the file read was last written or stamped (0: no file was read). */
  private readonly stamped: number;

  constructor(
    state: string,
    /** The real path of the skills folder. */
    folder: string,
    /** The clock a reading's start is taken from. */
    readonly now: () => number = Date.now,
    /** `read: false`: no entry is taken from the file (every file is read); it is still written. */
    { read = true }: { read?: boolean } = {},
  ) {
    this.file = skillCacheFile(state, folder);
    this.prefix = `${folder}${sep}`;
    const found = read ? readEntries(this.file) : { entries: new Map<string, Entry>(), stamped: 0 };
    this.entries = found.entries;
    this.stamped = found.stamped;
  }

  /** The reading of the file at `location` (its `lstat` is `info`), if it can be taken as it is. */
  get(location: string, info: Stats): SkillReading | undefined {
    const path = this.pathOf(location);
    const entry = this.entries.get(path);
    if (!entry || !sameFile(entry, info) || changedSince(info, entry[6])) return undefined;
    this.kept.set(path, entry);
    return readingOf(entry);
  }

  /**
   * Keeps `reading` of the file at `location`: `opened` is the `fstat` of the open file, taken
   * before it was read, and `madeAt` the time before that `fstat`.
   */
  put(location: string, opened: Stats, madeAt: number, reading: SkillReading): void {
    const path = this.pathOf(location);
    const { dev, ino, size, mtimeMs, ctimeMs } = opened;
    const head = [path, dev, ino, size, mtimeMs, ctimeMs, madeAt] as const;
    if ("refused" in reading) this.kept.set(path, [...head, reading.refused]);
    else {
      const { name, description, ...more } = reading.skill;
      const fields = [...head, reading.hash, name, description] as const;
      this.kept.set(path, Object.keys(more).length > 0 ? [...fields, more] : [...fields]);
    }
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
    const text = JSON.stringify({ version: VERSION, entries: [...this.kept.values()] });
    const dir = join(this.file, "..");
    const temporary = join(dir, `.${nodeCrypto().randomUUID()}.tmp`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(temporary, text, { flag: "wx", mode: 0o600 });
      renameSync(temporary, this.file);
    } catch {
      // A cache that cannot be written costs the next run its time, nothing else (its folder
      // may not even be reachable: a file in the way, no permission).
      quietly(() => rmSync(temporary, { force: true }));
      return;
    }
    sweepCaches(dir);
  }

  private pathOf(location: string): string {
    return location.startsWith(this.prefix) ? location.slice(this.prefix.length) : location;
  }
}

function readingOf(entry: Entry): SkillReading {
  if (entry.length === 8) return { refused: entry[7] };
  const skill = { name: entry[8], description: entry[9] };
  return { hash: entry[7], skill: entry.length === 11 ? { ...skill, ...entry[10] } : skill };
}

const sameFile = (entry: Entry, info: Stats) =>
  entry[5] === info.ctimeMs &&
  entry[4] === info.mtimeMs &&
  entry[3] === info.size &&
  entry[2] === info.ino &&
  entry[1] === info.dev;

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
 * The entries of a cache file by their paths, and when it was last written or stamped; none when
 * it is missing, foreign, too large or not a cache. An entry not as `put` makes them is left out.
 */
function readEntries(file: string): { entries: Map<string, Entry>; stamped: number } {
  const entries = new Map<string, Entry>();
  const read = readOwnJson(file, MAX_BYTES);
  const value = read?.value;
  if (!read || !isObject(value) || value.version !== VERSION || !Array.isArray(value.entries))
    return { entries, stamped: 0 };
  for (const candidate of value.entries as unknown[])
    if (isEntry(candidate)) entries.set(candidate[0], candidate);
  return { entries, stamped: read.mtimeMs };
}

const HASH = /^[0-9a-f]{64}$/;

/** Whether `value` (fresh from `JSON.parse`, held by nothing else) is an entry as `put` makes them. */
function isEntry(value: unknown): value is Entry {
  if (!Array.isArray(value) || (value.length !== 8 && value.length !== 10 && value.length !== 11))
    return false;
  if (typeof value[0] !== "string" || typeof value[7] !== "string") return false;
  for (let at = 1; at <= 6; at++) if (typeof value[at] !== "number") return false;
  if (value.length === 8) return true;
  return (
    HASH.test(value[7]) &&
    typeof value[8] === "string" &&
    typeof value[9] === "string" &&
    (value.length === 10 || isMoreFields(value[10]))
  );
}

function isMoreFields(value: unknown): value is MoreFields {
  if (!isObject(value)) return false;
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
