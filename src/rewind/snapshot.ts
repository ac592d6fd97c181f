import { isUtf8 } from "node:buffer";
import { lstatSync, readdirSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import { basename, dirname } from "node:path";
import { type BlobStore, hashOfFile } from "../session/blobs.js";
import type { BashFile, NodeState } from "../session/records.js";
import { systemErrorMeaning } from "../system-errors.js";
import { LEFT_OUT, LeftOutFolders } from "./left-out.js";

/** Bytes of one file the snapshot keeps; a bigger file is seen, hashed, and not kept. */
export const SNAPSHOT_FILE_CAP = 64 * 1024 * 1024;
/** Entries one walk looks at, at most: past that the call's changes are not known. */
export const SNAPSHOT_MOST_ENTRIES = 200_000;
/** How long one walk may take. */
export const SNAPSHOT_BOUND_MS = 10_000;
/**
 * A file changed this close to the walk that saw it is racy: a same-size write within the same
 * timestamp tick (2 s on FAT) keeps its stat information, so the next walk reads it again. So the
 * times need no more than the microsecond `Stats` gives (a double of milliseconds): a change the
 * next walk compares by its stat information moved the change time by over 2 s.
 */
const RACY_MS = 2_000;
const CHANGING = "it kept changing while it was copied";
/**
 * A rewind puts a file back by a rename, which gives the path a new file: the other names of a
 * file with several (a hard link, as pnpm's store makes) would keep what the command wrote, even
 * outside the workspace. So such a file is not kept, and is read-only for a sandboxed call.
 */
export const LINKED = "it has other hard links, which a rewind could not put back";
/** Copies of a file that changes while it is copied, before its bytes are given up. */
const TRIES = 3;

/** What a change of a path shows: type and mode, size, inode, both times (milliseconds). */
interface Stamp {
  mode: number;
  size: number;
  ino: number;
  mtime: number;
  ctime: number;
}

/** What the snapshot knows of one path: its stat information, and what it held then. */
interface Seen {
  stat: Stamp;
  state: NodeState;
  /** Its stat cannot prove it unchanged at the next walk: that walk reads it again. */
  racy: boolean;
  /** Why its bytes are not in the store, when they are not. */
  unkept?: string;
}

/**
 * One walk of the workspace: every path seen, the folders whose contents it did not look at
 * (`leftOut`: by the rule of `LeftOutFolders`, or not readable) and those holding names it leaves
 * out (`oddNames`), each with why; or why the walk stopped.
 */
export type Walk =
  | {
      kind: "walked";
      seen: Map<string, Seen>;
      leftOut: Map<string, string>;
      oddNames: Map<string, string>;
      /** The paths seen whose state a rewind could not put back: bytes not kept, a device. */
      unkept: string[];
    }
  | { kind: "skipped"; reason: string };

const UNREADABLE = "the snapshot cannot read it: what it holds is not kept";
const NOT_UTF8 = "it holds names that are not UTF-8, which the snapshot leaves out";

export interface SnapshotOptions {
  /** Real paths whose subtrees are left out (mini-agent's state folder). */
  exclude?: readonly string[];
  fileCap?: number;
  mostEntries?: number;
  boundMs?: number;
  /** How a path's stat information is read (tests give a coarse clock's); `lstat` by default. */
  lstat?: (path: string) => Stats | undefined;
}

/**
 * The workspace as bash calls find and leave it, kept so that a rewind can undo what they changed:
 * a walk before each call and after it (`walk`), each comparing every entry with the last walk's
 * stat information and copying a regular file into the store the first time its bytes are seen
 * (copy on first sight), so what any command changes was kept before it ran. `.git` folders and
 * the excluded ones are left out, and so are names that are not UTF-8. A walk never follows a link.
 */
export class WorkspaceSnapshot {
  private known = new Map<string, Seen>();
  private readonly rule: LeftOutFolders;

  constructor(
    private readonly root: string,
    private readonly store: BlobStore,
    private readonly options: SnapshotOptions = {},
  ) {
    this.rule = new LeftOutFolders(root);
  }

  private stat(path: string): Stats | undefined {
    return (this.options.lstat ?? statOf)(path);
  }

  /**
   * Walks the workspace now; the walk becomes what the next one compares with. `after`: the walk
   * after a call, which leaves out the folders the walk before it left out, and no other it saw.
   */
  walk(after = false): Walk {
    const realRoot = realpathSync(this.root);
    this.rule.refresh();
    const leftOut = new Map<string, string>();
    const oddNames = new Map<string, string>();
    const unkept: string[] = [];
    const started = Date.now();
    const deadline = Date.now() + (this.options.boundMs ?? SNAPSHOT_BOUND_MS);
    const most = this.options.mostEntries ?? SNAPSHOT_MOST_ENTRIES;
    // The excluded paths by their folder, so a folder without one costs no look-up per name.
    const excluded = new Map<string, Set<string>>();
    for (const path of this.options.exclude ?? [])
      excluded.set(
        dirname(path),
        new Set([...(excluded.get(dirname(path)) ?? []), basename(path)]),
      );
    const seen = new Map<string, Seen>();
    // Each folder with its path relative to the workspace ("" for the workspace itself), and
    // whether git ignores it.
    const folders: [string, string, boolean][] = [[realRoot, "", false]];
    for (let next = folders.pop(); next !== undefined; next = folders.pop()) {
      const [folder, under, ignored] = next;
      let names: string[];
      try {
        names = namesIn(folder);
      } catch (error) {
        // Not ours to read: what it holds is not seen (one gone since it was seen holds nothing).
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") leftOut.set(under, UNREADABLE);
        continue;
      }
      const skip = excluded.get(folder);
      for (const name of names) {
        if (name === NOT_UTF8_NAME) {
          oddNames.set(under, NOT_UTF8);
          continue;
        }
        if (skip?.has(name)) continue;
        const path = `${folder}/${name}`;
        if (seen.size >= most)
          return { kind: "skipped", reason: `the workspace has over ${most} entries` };
        if (seen.size % 1024 === 0 && Date.now() > deadline) {
          // What this walk copied is kept and known: the next walk goes on from there.
          for (const [rel, entry] of seen) this.known.set(rel, entry);
          return {
            kind: "skipped",
            reason: `the snapshot of the workspace took over ${(this.options.boundMs ?? SNAPSHOT_BOUND_MS) / 1000} s`,
          };
        }
        const rel = under === "" ? name : `${under}/${name}`;
        const entry = this.look(path, rel, started);
        if (!entry) continue;
        seen.set(rel, entry);
        if (entry.unkept !== undefined || "other" in entry.state) unkept.push(rel);
        if (!("folder" in entry.state)) continue;
        const isIgnored = ignored || this.rule.ignored(rel);
        if (isIgnored && this.isLeftOut(path, rel, after)) leftOut.set(rel, LEFT_OUT);
        else folders.push([path, rel, isIgnored]);
      }
    }
    this.known = seen;
    return { kind: "walked", seen, leftOut, oddNames, unkept };
  }

  private isLeftOut(path: string, rel: string, after: boolean): boolean {
    const info = this.stat(path);
    return info !== undefined && this.rule.leftOut(path, rel, info, !after);
  }

  /** One path: as the last walk knew it when its stat information is the same, else looked at. */
  private look(path: string, rel: string, started: number): Seen | undefined {
    const info = this.stat(path);
    if (!info) return undefined;
    const known = this.known.get(rel);
    const same = known !== undefined && sameStamp(info, known.stat);
    if (same && !known.racy) return known;
    const stat = stampOf(info);
    const mode = info.mode & 0o7777;
    if (info.isDirectory()) return { stat, state: { folder: true, mode }, racy: false };
    if (info.isSymbolicLink()) {
      const target = linkOf(path);
      const state = { link: target ?? "" };
      return target === undefined ? undefined : { stat, state, racy: isRacy(info, started) };
    }
    if (!info.isFile()) return { stat, state: { other: true, mode }, racy: false };
    if (same && "hash" in known.state && !known.unkept) {
      // Racy: its bytes are read again where they are; only new bytes are copied.
      const hash = hashWhere(path);
      const now = this.stat(path);
      if (hash === known.state.hash && now && sameStamp(now, stat))
        return { ...known, racy: isRacy(now, started) };
    }
    if (isGitObject(rel, info)) return this.seenFile(this.link(path, info), started);
    if (info.nlink > 1)
      return this.seenFile({ info, hash: hashWhere(path), unkept: LINKED }, started);
    return this.seenFile(this.copy(path, info), started);
  }

  /**
   * A git object or pack, kept by a hard link: git never changes one once written (it writes a
   * new file and renames it), so the link holds its bytes for as long as the store does, at no
   * cost while the workspace has it too. Its stat information is taken after the link, which
   * changes its change time. It is never racy: nothing rewrites it within a timestamp tick (a
   * command that rewrote it in place would rewrite the link too, which a rewind finds by its hash).
   */
  private link(path: string, info: Stats): Copied {
    const put = this.store.linkFile(path);
    const after = this.stat(path) ?? info;
    if (put.ok) return { info: after, hash: put.hash, linked: true };
    return { info: after, hash: hashWhere(path), unkept: put.reason };
  }

  private seenFile(copy: Copied, started: number): Seen {
    const { info, hash, unkept } = copy;
    const mode = info.mode & 0o7777;
    const racy = !copy.linked && isRacy(info, started);
    return {
      stat: stampOf(info),
      state: { hash, mode, uid: info.uid, gid: info.gid },
      // A file that kept changing is looked at again; one over a limit only when its stat says so.
      racy: racy || unkept === CHANGING,
      ...(unkept !== undefined && { unkept }),
    };
  }

  /**
   * The file's bytes copied into the store, its stat information taken again after the copy:
   * a file that changed meanwhile is copied again, up to three times. A file over the size
   * limit, or one the store refuses, is hashed where it is, and said not kept.
   */
  private copy(path: string, first: Stats): Copied {
    const cap = this.options.fileCap ?? SNAPSHOT_FILE_CAP;
    let info = first;
    for (let tried = 1; ; tried++) {
      const over = Number(info.size) > cap;
      const put = over
        ? {
            ok: false as const,
            reason: `the file is ${info.size} bytes, over the ${cap} bytes the snapshot keeps of one file`,
          }
        : this.store.putFile(path, Number(info.size));
      const after = this.stat(path) ?? info;
      const same = sameStamp(after, stampOf(info));
      if (put.ok && same) return { info, hash: put.hash };
      if (!put.ok && (same || tried >= TRIES))
        return { info: after, hash: hashWhere(path), unkept: put.reason };
      if (tried >= TRIES)
        return {
          info: after,
          hash: put.ok ? put.hash : hashWhere(path),
          unkept: CHANGING,
        };
      info = after;
    }
  }
}

interface Copied {
  info: Stats;
  hash: string;
  unkept?: string;
  /** Kept by a hard link (a git object), not by a copy. */
  linked?: boolean;
}

/**
 * A git object or pack file as git leaves it: in an `objects` folder of a `.git` folder, named by
 * the hash of what it holds (`ab/cdef…`, `pack/pack-….pack` and its index, reverse index, bitmap
 * and mtimes), read-only. One made writable is kept by content, as any other file.
 */
export function isGitObject(rel: string, info: Stats): boolean {
  return (info.mode & 0o222) === 0 && GIT_OBJECT.test(rel);
}

const GIT_OBJECT =
  /(?:^|\/)\.git\/(?:[^/]+\/)*objects\/(?:[0-9a-f]{2}\/[0-9a-f]{38}|[0-9a-f]{2}\/[0-9a-f]{62}|pack\/pack-(?:[0-9a-f]{40}|[0-9a-f]{64})\.(?:pack|idx|rev|bitmap|mtimes))$/;

/**
 * What differs between two walks, path by path, sorted: each change a rewind can undo. A folder
 * either walk did not look into (`leftOut`), and what it holds, are not compared: what was there
 * is not known.
 */
export function changesBetween(
  before: Map<string, Seen>,
  after: Map<string, Seen>,
  leftOut: ReadonlySet<string> = new Set(),
): BashFile[] {
  const out = (path: string) => {
    for (let at = path.length; at > 0; at = path.lastIndexOf("/", at - 1))
      if (leftOut.has(path.slice(0, at))) return true;
    return false;
  };
  // A path a walk found unchanged holds the very entry the walk before had: no state is compared.
  const changed: string[] = [];
  for (const [path, was] of before) {
    const now = after.get(path);
    if (now !== was && !(now && sameNode(was.state, now.state))) changed.push(path);
  }
  for (const path of after.keys()) if (!before.has(path)) changed.push(path);
  const changes: BashFile[] = [];
  for (const path of changed.sort(byPath)) {
    if (leftOut.size > 0 && out(path)) continue;
    const was = before.get(path);
    const now = after.get(path);
    changes.push({
      path,
      before: was?.state ?? null,
      after: now?.state ?? null,
      ...(was?.unkept !== undefined && { unkept: was.unkept }),
    });
  }
  return changes;
}

/** The same thing at a path: kind, and bytes, mode or target. */
export function sameNode(a: NodeState | null, b: NodeState | null): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function statOf(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

const stampOf = (info: Stats): Stamp => ({
  mode: info.mode,
  size: info.size,
  ino: info.ino,
  mtime: info.mtimeMs,
  ctime: info.ctimeMs,
});

const sameStamp = (info: Stats, stamp: Stamp) =>
  info.mtimeMs === stamp.mtime &&
  info.ctimeMs === stamp.ctime &&
  info.size === stamp.size &&
  info.ino === stamp.ino &&
  info.mode === stamp.mode;

const isRacy = (info: Stats, started: number) =>
  info.mtimeMs + RACY_MS >= started || info.ctimeMs + RACY_MS >= started;

/** Stands for every name of a folder that is not UTF-8 (`namesIn`). */
const NOT_UTF8_NAME = "\0";

/**
 * The names in a folder, read as text; each that is not UTF-8 (read as one holding U+FFFD,
 * then told apart by its bytes) given as `NOT_UTF8_NAME`.
 */
function namesIn(folder: string): string[] {
  const names = readdirSync(folder);
  if (!names.some((name) => name.includes("\uFFFD"))) return names;
  return readdirSync(folder, { encoding: "buffer" }).map((raw) =>
    isUtf8(raw) ? raw.toString("utf8") : NOT_UTF8_NAME,
  );
}

function linkOf(path: string): string | undefined {
  try {
    const target = readlinkSync(path, { encoding: "buffer" });
    return isUtf8(target) ? target.toString("utf8") : undefined;
  } catch {
    return undefined;
  }
}

/** The SHA-256 of a file that is not kept, read where it is; a file that cannot be read has none. */
function hashWhere(path: string): string {
  try {
    return hashOfFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return `unreadable: ${code === undefined ? "error" : systemErrorMeaning(code)}`;
  }
}
