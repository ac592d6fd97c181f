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
  private patterns: { negate: boolean; matches: (path: string) => boolean }[] = [];
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
    for (const { negate, matches } of this.patterns) if (matches(rel)) ignored = !negate;
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
function compile(line: string): { negate: boolean; matches: (path: string) => boolean }[] {
  let text = line.replace(/\r$/, "").replace(/(?<!\\) +$/, "");
  if (text === "" || text.startsWith("#")) return [];
  const negate = text.startsWith("!");
  if (negate || text.startsWith("\\!") || text.startsWith("\\#")) text = text.slice(1);
  text = text.replace(/\/$/, "");
  const anchored = text.includes("/");
  text = text.replace(/^\//, "");
  if (text === "") return [];
  const tokens = globTokens(text);
  return [{ negate, matches: (path) => globMatches(tokens, path, anchored) }];
}

/**
 * A glob's parts: a character to match (a literal, `?`, a class, each never `/`), `*` (a run of
 * characters but `/`), `any` (a run of any characters) and `skip` (an edge past the next
 * `skip.to - 1` parts: `**` followed by `/` may match nothing).
 */
type Token =
  | { kind: "char"; test: (char: string) => boolean }
  | { kind: "star" }
  | { kind: "any" }
  | { kind: "skip"; to: number };

/** A glob of git's (`*`, `?`, `**`, classes) as parts for `globMatches`. */
function globTokens(glob: string): Token[] {
  const tokens: Token[] = [];
  const literal = (expected: string): Token => ({ kind: "char", test: (c) => c === expected });
  for (let at = 0; at < glob.length; at++) {
    const char = glob[at] ?? "";
    if (glob.startsWith("**/", at) && (at === 0 || glob[at - 1] === "/")) {
      // Nothing, or any run of folders: `(?:.*/)?`.
      tokens.push({ kind: "skip", to: tokens.length + 3 }, { kind: "any" }, literal("/"));
      at += 2;
    } else if (glob.startsWith("/**", at) && at + 3 === glob.length) {
      tokens.push(literal("/"), { kind: "any" });
      at += 2;
    } else if (char === "*") {
      if (tokens.at(-1)?.kind !== "star") tokens.push({ kind: "star" });
    } else if (char === "?") tokens.push({ kind: "char", test: (c) => c !== "/" });
    else if (char === "[" && glob.indexOf("]", at + 2) >= 0) {
      const end = glob.indexOf("]", at + 2);
      const inside = glob
        .slice(at + 1, end)
        .replace(/^!/, "^")
        .replace(/\\/g, "\\\\");
      const regex = new RegExp(`^[${inside}]$`);
      tokens.push({ kind: "char", test: (c) => c !== "/" && regex.test(c) });
      at = end;
    } else tokens.push(literal(char));
  }
  return tokens;
}

/**
 * Whether `path` matches the parts (from its start when `anchored`, else from its start or after
 * any `/`), by following every part it may be at in step, one character at a time: time grows with
 * the name's length times the parts', never more (a regular expression of many stars backtracks
 * for hours on a long name).
 */
function globMatches(tokens: readonly Token[], path: string, anchored: boolean): boolean {
  const closure = (states: Set<number>) => {
    for (const state of states) {
      const token = tokens[state];
      if (token?.kind === "star" || token?.kind === "any") states.add(state + 1);
      else if (token?.kind === "skip") {
        states.add(state + 1);
        states.add(token.to);
      }
    }
    return states;
  };
  let states = closure(new Set([0]));
  for (const char of path) {
    const next = new Set<number>();
    for (const state of states) {
      const token = tokens[state];
      if (token === undefined) continue;
      if (token.kind === "char" && token.test(char)) next.add(state + 1);
      else if (token.kind === "star" && char !== "/") next.add(state);
      else if (token.kind === "any") next.add(state);
    }
    if (!anchored && char === "/") next.add(0);
    states = closure(next);
    if (anchored && states.size === 0) return false;
  }
  return states.has(tokens.length);
}
