import { type Dirent, lstatSync, readdirSync, readFileSync, type Stats } from "node:fs";
import { join } from "node:path";

/** Entries (all depths) a git-ignored folder may hold before the snapshot leaves it out. */
export const LEFT_OUT_ENTRIES = 5_000;

/**
 * Why a folder is left out by the rule, as the record and the rewind say it. The number is grouped
 * by hand: `toLocaleString` loads ICU's locale data, 10 to 50 ms of every start.
 */
export const LEFT_OUT = `git ignores it and it holds over ${String(LEFT_OUT_ENTRIES).replace(/\B(?=(\d{3})+$)/g, ",")} entries: the snapshot leaves it out`;

/**
 * The snapshot's one rule for leaving a folder out: git ignores it (a pattern of the workspace's
 * `.gitignore` or of its `.git/info/exclude`, or it lies in an ignored folder) and it holds over
 * 5,000 entries (`node_modules`, `.venv`, `target`): copying it would cost more than the rest of
 * the workspace, and what is in it can be made again. A folder is counted when first met, and
 * again before a call when its own change time moved; once left out, it stays out for the session.
 * No git runs: the patterns are read here (a subset of git's: `*`, `?`, `**`, classes, `!`, a
 * leading or inner `/` anchoring to the top; escapes other than of a leading `!` or `#` are not).
 */
export class LeftOutFolders {
  private patterns: { negate: boolean; regex: RegExp }[] = [];
  private read = "";
  private readonly decided = new Map<string, { out: boolean; ctime: number }>();

  constructor(private readonly root: string) {}

  /** Reads the patterns again when either file changed since they were read. */
  refresh(): void {
    const files = [join(this.root, ".gitignore"), join(this.root, ".git", "info", "exclude")];
    const key = files.map(statKey).join("|");
    if (key === this.read) return;
    this.read = key;
    this.patterns = files.flatMap((file) => textOf(file).split("\n").flatMap(compile));
  }

  /** Whether git ignores the folder at `rel` (its parent not ignored: an ignored one's are). */
  ignored(rel: string): boolean {
    let ignored = false;
    for (const { negate, regex } of this.patterns) if (regex.test(rel)) ignored = !negate;
    return ignored;
  }

  /**
   * Whether the ignored folder at `path` is left out: decided when first met, and again when
   * `recount` and its change time moved (not in a walk after a call: the walk before it decided
   * for the call).
   */
  leftOut(path: string, rel: string, info: Stats, recount: boolean): boolean {
    const known = this.decided.get(rel);
    if (known && (known.out || !recount || known.ctime === info.ctimeMs)) return known.out;
    const out = holdsOver(path, LEFT_OUT_ENTRIES);
    this.decided.set(rel, { out, ctime: info.ctimeMs });
    return out;
  }
}

/** Whether the folder holds over `most` entries in all, counted without a stat of each. */
function holdsOver(top: string, most: number): boolean {
  let count = 0;
  const folders = [top];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    count += entries.length;
    if (count > most) return true;
    for (const entry of entries) if (entry.isDirectory()) folders.push(join(folder, entry.name));
  }
  return false;
}

function statKey(path: string): string {
  try {
    const info = lstatSync(path, { bigint: true });
    return `${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
  } catch {
    return "";
  }
}

function textOf(path: string): string {
  try {
    const info = lstatSync(path);
    return info.isFile() && info.size <= 1024 * 1024 ? readFileSync(path, "utf8") : "";
  } catch {
    return "";
  }
}

/** One line of an ignore file as a test of a folder's path relative to the workspace. */
function compile(line: string): { negate: boolean; regex: RegExp }[] {
  let text = line.replace(/\r$/, "").replace(/(?<!\\) +$/, "");
  if (text === "" || text.startsWith("#")) return [];
  const negate = text.startsWith("!");
  if (negate || text.startsWith("\\!") || text.startsWith("\\#")) text = text.slice(1);
  text = text.replace(/\/$/, "");
  const anchored = text.includes("/");
  text = text.replace(/^\//, "");
  if (text === "") return [];
  const body = globBody(text);
  return [{ negate, regex: new RegExp(anchored ? `^${body}$` : `(?:^|/)${body}$`) }];
}

/** A glob of git's as the body of a regular expression over `/`-separated paths. */
function globBody(glob: string): string {
  let out = "";
  for (let at = 0; at < glob.length; at++) {
    const char = glob[at] ?? "";
    if (glob.startsWith("**/", at) && (at === 0 || glob[at - 1] === "/")) {
      out += "(?:.*/)?";
      at += 2;
    } else if (glob.startsWith("/**", at) && at + 3 === glob.length) {
      out += "/.*";
      at += 2;
    } else if (char === "*") out += "[^/]*";
    else if (char === "?") out += "[^/]";
    else if (char === "[") {
      const end = glob.indexOf("]", at + 2);
      if (end < 0) out += "\\[";
      else {
        const inside = glob
          .slice(at + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        out += `[${inside}]`;
        at = end;
      }
    } else out += char.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return out;
}
