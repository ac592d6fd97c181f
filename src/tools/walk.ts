import type { Dirent } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import ignore, { type Ignore } from "ignore";

export interface WalkEntry {
  /** Absolute path. */
  path: string;
  /** Path relative to the workspace root, with `/` separators. */
  rel: string;
  dirent: Dirent;
}

interface Rules {
  base: string;
  ignore: Ignore;
}

/**
 * Walks `start` (a folder inside `root`) depth first in name order, skipping `.git` and what
 * `.gitignore` files in `root` and below exclude. Symlinked folders are listed, not entered.
 * `onIgnored` counts what was left out.
 */
export async function* walk(
  root: string,
  start: string,
  signal?: AbortSignal,
  onIgnored: () => void = () => {},
): AsyncGenerator<WalkEntry> {
  const rules = await ancestorRules(root, start);
  yield* walkDir(root, start, rules, signal, onIgnored);
}

async function* walkDir(
  root: string,
  dir: string,
  inherited: Rules[],
  signal: AbortSignal | undefined,
  onIgnored: () => void,
): AsyncGenerator<WalkEntry> {
  if (signal?.aborted) throw new Error("aborted");
  const rules = [...inherited, ...(await rulesIn(dir))];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [] as Dirent[]);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const dirent of entries) {
    const path = join(dir, dirent.name);
    if (dirent.name === ".git" || isIgnored(rules, path, dirent.isDirectory())) {
      onIgnored();
      continue;
    }
    yield { path, rel: relative(root, path), dirent };
    if (dirent.isDirectory()) yield* walkDir(root, path, rules, signal, onIgnored);
  }
}

/** Whether the walk would skip `path` (for a single file or folder named directly). */
export async function isIgnoredPath(root: string, path: string, isDir: boolean): Promise<boolean> {
  if (path === root) return false;
  const rules = await ancestorRules(root, path);
  return relative(root, path).split("/").includes(".git") || isIgnored(rules, path, isDir);
}

function isIgnored(rules: Rules[], path: string, isDir: boolean): boolean {
  return rules.some((rule) => {
    const rel = relative(rule.base, path);
    return rel !== "" && rule.ignore.ignores(isDir ? `${rel}/` : rel);
  });
}

/** The rules of `root` and every folder between it and `dir`, `dir` excluded. */
async function ancestorRules(root: string, dir: string): Promise<Rules[]> {
  const rel = relative(root, dir);
  const parts = rel === "" ? [] : rel.split("/");
  const rules: Rules[] = [];
  let current = root;
  for (const part of parts) {
    rules.push(...(await rulesIn(current)));
    current = join(current, part);
  }
  return rules;
}

async function rulesIn(dir: string): Promise<Rules[]> {
  try {
    const text = await readFile(join(dir, ".gitignore"), "utf8");
    return [{ base: dir, ignore: ignore().add(text) }];
  } catch {
    return [];
  }
}
