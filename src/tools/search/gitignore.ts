import type { RE2JS } from "re2js";
import type { Pace } from "./pace.js";
import { compile, GlobError, globSource } from "./patterns.js";
import { loadRE2 } from "./re2.js";

/**
 * The rules of one `.gitignore`, compiled once. `decide` answers for a path relative to the
 * file's folder: `true` ignored, `false` re-included by a `!` rule, `undefined` no rule matched.
 *
 * Semantics (git's): blank lines and `#` comments are skipped, `\#` and `\!` are literal;
 * trailing spaces are dropped unless escaped; `!` negates and the last matching rule wins; a
 * trailing `/` matches folders only; a `/` at the start or in the middle anchors the pattern to
 * this folder, otherwise it matches a name at any depth; `**` as in `patterns.ts`; a pattern
 * that cannot be parsed (an unclosed `[`) matches nothing, as in git.
 */
export interface IgnoreRules {
  decide(rel: string, name: string, isDir: boolean): boolean | undefined;
}

interface Rule {
  negate: boolean;
  dirOnly: boolean;
  /** Matched against the path relative to the folder, else against the name. */
  anchored: boolean;
  glob: string;
}

/** Glob alternatives per compiled regex: large enough to be few, small enough to compile fast. */
const BATCH = 200;

/** Parses and compiles `text`; `pace` lets the event loop run between batches of rules. */
export async function compileIgnore(text: string, pace: Pace): Promise<IgnoreRules> {
  await loadRE2();
  const runs: Run[] = [];
  for (const line of text.replace(/^\uFEFF/, "").split("\n")) {
    const rule = parseRule(line);
    if (!rule) continue;
    let run = runs.at(-1);
    if (run?.negate !== rule.negate) {
      run = new Run(rule.negate);
      runs.push(run);
    }
    await run.add(rule, pace);
  }
  for (const run of runs) await run.seal(pace);
  return {
    decide(rel, name, isDir) {
      for (let i = runs.length - 1; i >= 0; i--) {
        const run = runs[i];
        if (run?.matches(rel, name, isDir)) return !run.negate;
      }
      return undefined;
    },
  };
}

/** One `.gitignore` line as a rule, or undefined for a blank line, a comment or a bare `/`. */
export function parseRule(line: string): Rule | undefined {
  let text = line.endsWith("\r") ? line.slice(0, -1) : line;
  if (text === "" || text.startsWith("#")) return undefined;
  text = trimTrailingSpaces(text);
  const negate = text.startsWith("!");
  if (negate) text = text.slice(1);
  const dirOnly = text.endsWith("/");
  while (text.endsWith("/")) text = text.slice(0, -1);
  const anchored = text.includes("/");
  if (text.startsWith("/")) text = text.slice(1);
  if (text === "") return undefined;
  return { negate, dirOnly, anchored, glob: text };
}

function trimTrailingSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === " " && !isEscaped(text, end - 1)) end--;
  return text.slice(0, end);
}

/** Whether the character at `at` follows an odd number of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let slashes = 0;
  while (at - slashes - 1 >= 0 && text[at - slashes - 1] === "\\") slashes++;
  return slashes % 2 === 1;
}

const GLOB_META = /[*?[\\]/;

/**
 * Consecutive rules of one sign. Literal rules (most of a big `.gitignore`) go into sets; the
 * rest into a few regular expressions of up to `BATCH` alternatives, tried on `path` or
 * `path/` for a folder (a folder-only alternative ends with `/`).
 */
class Run {
  private readonly names = new Set<string>();
  private readonly paths = new Set<string>();
  private readonly nameGlobs: string[] = [];
  private readonly pathGlobs: string[] = [];
  private readonly nameRegexes: RE2JS[] = [];
  private readonly pathRegexes: RE2JS[] = [];

  constructor(readonly negate: boolean) {}

  async add(rule: Rule, pace: Pace): Promise<void> {
    const suffix = rule.dirOnly ? "/" : "";
    if (!GLOB_META.test(rule.glob)) {
      (rule.anchored ? this.paths : this.names).add(rule.glob + suffix);
      return;
    }
    let source: string;
    try {
      source = globSource(rule.glob, "gitignore");
    } catch (error) {
      if (error instanceof GlobError) return; // git skips a pattern it cannot parse
      throw error;
    }
    const alternative = rule.dirOnly ? `${source}/` : `${source}/?`;
    const globs = rule.anchored ? this.pathGlobs : this.nameGlobs;
    globs.push(alternative);
    if (globs.length === BATCH) await this.flush(pace);
  }

  async seal(pace: Pace): Promise<void> {
    await this.flush(pace);
  }

  matches(rel: string, name: string, isDir: boolean): boolean {
    const suffix = isDir ? "/" : "";
    if (this.names.has(name) || (isDir && this.names.has(`${name}/`))) return true;
    if (this.paths.has(rel) || (isDir && this.paths.has(`${rel}/`))) return true;
    const nameKey = name + suffix;
    const relKey = rel + suffix;
    return (
      this.nameRegexes.some((regex) => regex.test(nameKey)) ||
      this.pathRegexes.some((regex) => regex.test(relKey))
    );
  }

  private async flush(pace: Pace): Promise<void> {
    for (const [globs, regexes] of [
      [this.nameGlobs, this.nameRegexes],
      [this.pathGlobs, this.pathRegexes],
    ] as const) {
      if (globs.length === 0) continue;
      regexes.push(compile(`^(?:${globs.join("|")})$`));
      await pace.step(globs.length);
      globs.length = 0;
    }
  }
}
