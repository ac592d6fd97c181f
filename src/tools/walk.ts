import type { Dirent } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, join, relative } from "node:path";
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
 */
export async function* walk(
  root: string,
  start: string,
  signal?: AbortSignal,
): AsyncGenerator<WalkEntry> {
  yield* walkDir(root, start, await ancestorRules(root, start), signal);
}

async function* walkDir(
  root: string,
  dir: string,
  inherited: Rules[],
  signal: AbortSignal | undefined,
): AsyncGenerator<WalkEntry> {
  if (signal?.aborted) throw new Error("aborted");
  const rules = [...inherited, ...(await rulesIn(dir))];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [] as Dirent[]);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const dirent of entries) {
    const path = join(dir, dirent.name);
    if (isSkipped(rules, path, dirent.isDirectory())) continue;
    yield { path, rel: relative(root, path), dirent };
    if (dirent.isDirectory()) yield* walkDir(root, path, rules, signal);
  }
}

/** Which entries of `dir` (a folder inside `root`) a walk would skip, for `ls`. */
export async function skippedIn(
  root: string,
  dir: string,
): Promise<(name: string, isDir: boolean) => boolean> {
  const rules = [...(await ancestorRules(root, dir)), ...(await rulesIn(dir))];
  return (name, isDir) => isSkipped(rules, join(dir, name), isDir);
}

function isSkipped(rules: Rules[], path: string, isDir: boolean): boolean {
  return basename(path) === ".git" || isIgnored(rules, path, isDir);
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
