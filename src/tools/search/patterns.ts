import type { RE2JS } from "re2js";
import { ToolError } from "../define.js";
import { re2 } from "./re2.js";

/**
 * Globs, translated to RE2 regular expressions: no glob, whoever wrote it (the model, a
 * `.gitignore`), ever runs on a backtracking engine, so matching is linear in the path.
 *
 * `*` matches within one path segment, `?` one character of it; `**` as a whole segment matches
 * any number of segments (at the start, between two others, or at the end), elsewhere it is
 * `*`; `[abc]`, `[a-z]`, `[!x]` or `[^x]` and `[[:alpha:]]` match one character, never `/`;
 * `{a,b}` is alternation (globs only, not `.gitignore`); a backslash makes the next character
 * literal. Names starting with a dot are matched like any other.
 */
export class GlobError extends Error {
  override name = "GlobError";
}

/**
 * `glob` (find, grep): `{a,b}` alternation, and `dir/**` matches `dir` itself too.
 * `gitignore`: no braces, and `dir/**` matches only what is inside `dir`.
 */
export type GlobDialect = "glob" | "gitignore";

/** The RE2 source of `glob`, matching a whole path (without `^` and `$`). */
export function globSource(glob: string, dialect: GlobDialect): string {
  const alternatives = dialect === "glob" ? expandBraces(glob) : [glob];
  const sources = alternatives.map((alternative) => translate(alternative, dialect));
  return sources.length === 1 ? (sources[0] ?? "") : `(?:${sources.join("|")})`;
}

/**
 * The matcher `find` and `grep` use for a path relative to the folder searched. A pattern
 * without `/` matches the last segment at any depth, as `find -name` does; a leading `./` is
 * dropped.
 */
export function globMatcher(pattern: string): (path: string) => boolean {
  const glob = pattern.startsWith("./") ? pattern.slice(2) : pattern;
  let regex: RE2JS;
  try {
    const source = globSource(glob, "glob");
    regex = compile(glob.includes("/") ? `^${source}$` : `^(?:.*/)?${source}$`);
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, "");
    throw new ToolError(`invalid glob ${JSON.stringify(pattern)}: ${reason}`);
  }
  return (path) => regex.test(path);
}

/** Compiles RE2 source where `.` also matches a newline. */
export function compile(source: string): RE2JS {
  const RE2 = re2();
  return RE2.compile(source, RE2.DOTALL);
}

/** Most alternatives one `{…}` set of a glob may expand to. */
const MAX_EXPANSIONS = 1024;

/** `a{b,c{d,e}}` → `ab`, `acd`, `ace`. A brace without its partner, or with no comma, is literal. */
function expandBraces(glob: string): string[] {
  const open = findBrace(glob);
  if (!open) return [glob];
  const { start, end, parts } = open;
  const head = glob.slice(0, start);
  const tails = expandBraces(glob.slice(end + 1));
  const out: string[] = [];
  for (const part of parts) {
    for (const middle of expandBraces(part)) {
      for (const tail of tails) {
        out.push(head + middle + tail);
        if (out.length > MAX_EXPANSIONS)
          throw new GlobError(`braces expand to more than ${MAX_EXPANSIONS} patterns`);
      }
    }
  }
  return out;
}

/** The first `{…}` holding a top-level comma, with its comma-separated parts. */
function findBrace(glob: string): { start: number; end: number; parts: string[] } | undefined {
  for (let start = 0; start < glob.length; start++) {
    if (glob[start] === "\\") {
      start++;
      continue;
    }
    if (glob[start] !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    for (let at = start; at < glob.length; at++) {
      const char = glob[at];
      if (char === "\\") at++;
      else if (char === "{") depth++;
      else if (char === "," && depth === 1) commas.push(at);
      else if (char === "}" && --depth === 0) {
        if (commas.length === 0) break;
        const cuts = [start, ...commas, at];
        const parts = cuts.slice(1).map((cut, i) => glob.slice((cuts[i] ?? 0) + 1, cut));
        return { start, end: at, parts };
      }
    }
  }
  return undefined;
}

function translate(glob: string, dialect: GlobDialect): string {
  let out = "";
  for (let at = 0; at < glob.length; at++) {
    const char = glob[at] ?? "";
    if (char === "\\") {
      at++;
      out += at < glob.length ? literal(glob[at] ?? "") : "\\\\";
    } else if (char === "*") {
      let end = at;
      while (glob[end + 1] === "*") end++;
      const wholeSegment =
        end > at &&
        (at === 0 || glob[at - 1] === "/") &&
        (end + 1 === glob.length || glob[end + 1] === "/");
      if (!wholeSegment) out += "[^/]*";
      else if (end + 1 === glob.length) {
        if (at === 0) out += ".*";
        else if (dialect === "gitignore") out += ".+";
        else out = `${out.slice(0, -1)}(?:/.*)?`;
      } else {
        out += "(?:.*/)?";
        end++;
      }
      at = end;
    } else if (char === "?") out += "[^/]";
    else if (char === "[") {
      const parsed = bracket(glob, at);
      if (!parsed) throw new GlobError("unclosed [");
      out += parsed.source;
      at = parsed.end;
    } else out += literal(char);
  }
  return out;
}

const POSIX_CLASSES = new Set([
  "alnum",
  "alpha",
  "ascii",
  "blank",
  "cntrl",
  "digit",
  "graph",
  "lower",
  "print",
  "punct",
  "space",
  "upper",
  "word",
  "xdigit",
]);

/** The bracket expression starting at `start`, as an RE2 class that never matches `/`. */
function bracket(glob: string, start: number): { source: string; end: number } | undefined {
  let at = start + 1;
  const negate = glob[at] === "!" || glob[at] === "^";
  if (negate) at++;
  const items: string[] = [];
  for (let first = true; at < glob.length; at++, first = false) {
    let char = glob[at] ?? "";
    if (char === "]" && !first) {
      if (items.length === 0) return { source: negate ? "[^/]" : "[^\\x00-\\x{10FFFF}]", end: at };
      return { source: `[${negate ? "^/" : ""}${items.join("")}]`, end: at };
    }
    if (char === "[" && glob[at + 1] === ":") {
      const close = glob.indexOf(":]", at + 2);
      const name = close === -1 ? "" : glob.slice(at + 2, close);
      if (!POSIX_CLASSES.has(name)) throw new GlobError(`unknown character class [:${name}:]`);
      items.push(`[:${name}:]`);
      at = close + 1;
      continue;
    }
    if (char === "\\" && at + 1 < glob.length) char = glob[++at] ?? "";
    const isRange = glob[at + 1] === "-" && glob[at + 2] !== undefined && glob[at + 2] !== "]";
    if (isRange) {
      let high = glob[at + 2] ?? "";
      let skip = 2;
      if (high === "\\" && at + 3 < glob.length) {
        high = glob[at + 3] ?? "";
        skip = 3;
      }
      if (high < char) throw new GlobError(`invalid range ${char}-${high}`);
      items.push(...rangeWithoutSlash(char, high));
      at += skip;
    } else if (char !== "/") items.push(classChar(char));
  }
  return undefined;
}

/** A range as RE2 class items, leaving out `/`. */
function rangeWithoutSlash(low: string, high: string): string[] {
  if (low > "/" || high < "/") return [`${classChar(low)}-${classChar(high)}`];
  const out: string[] = [];
  if (low < "/") out.push(`${classChar(low)}-${classChar(".")}`);
  if (high > "/") out.push(`${classChar("0")}-${classChar(high)}`);
  return out;
}

const classChar = (char: string) => (/[\\\]^[-]/.test(char) ? `\\${char}` : char);

const literal = (char: string) => (/[\\.+*?()|[\]{}^$]/.test(char) ? `\\${char}` : char);
