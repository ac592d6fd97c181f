import { constants, type Dirent } from "node:fs";
import { type FileHandle, lstat, open, readdir } from "node:fs/promises";
import { limits } from "../limits.js";
import { showName } from "../names.js";
import { descriptorPath, isInside } from "../shown-path.js";
import { compileIgnore, type IgnoreRules } from "./gitignore.js";
import { Pace } from "./pace.js";
import { Skips } from "./skips.js";

export interface WalkEntry {
  /** Absolute path, as bytes: a name need not be UTF-8. */
  path: Buffer;
  /** Path relative to the workspace root, as shown to the model (`showName`). */
  rel: string;
  /** Path relative to the folder the walk started in, shown the same way. */
  sub: string;
  dirent: Dirent<Buffer>;
}

export interface WalkOptions {
  signal?: AbortSignal | undefined;
  /** Where the walk counts what it could not read (folders, ignore files it refused). */
  skips?: Skips;
  /** A folder never listed nor entered, like `.git`: mini-agent's state folder. */
  exclude?: Buffer | undefined;
}

/** The `.gitignore` rules of one folder; `base` is that folder relative to the root, shown. */
interface Scope {
  base: string;
  rules: IgnoreRules;
}

interface Context {
  root: Buffer;
  pace: Pace;
  skips: Skips;
  exclude?: Buffer | undefined;
}

/**
 * Walks `start` (a folder inside the real workspace `root`) depth first in name order, skipping
 * `.git` and what `.gitignore` files in `root` and below exclude. Symlinked folders are listed,
 * not entered. It lets the event loop run every few hundred entries and stops with an error
 * once `signal` is aborted; a folder it cannot list is counted in `skips`, not fatal.
 */
export async function* walk(
  root: string,
  start: string | Buffer,
  options: WalkOptions = {},
): AsyncGenerator<WalkEntry> {
  const context = {
    root: Buffer.from(root),
    pace: new Pace(options.signal),
    skips: options.skips ?? new Skips(),
    exclude: options.exclude,
  };
  context.pace.check();
  const dir = Buffer.isBuffer(start) ? start : Buffer.from(start);
  const scopes = await scopesAbove(context, dir);
  yield* walkDir(context, dir, relativeTo(context.root, dir), "", scopes);
}

async function* walkDir(
  context: Context,
  dir: Buffer,
  rel: string,
  sub: string,
  inherited: Scope[],
): AsyncGenerator<WalkEntry> {
  context.pace.check();
  const scopes = [...inherited, ...(await scopeOf(context, dir, rel))];
  const dirents = await listInside(context, dir);
  if (dirents === "outside") context.skips.add("moved outside");
  if (!Array.isArray(dirents)) return;
  const entries = dirents.map((dirent) => ({ dirent, name: showName(dirent.name) }));
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const { dirent, name } of entries) {
    await context.pace.step();
    const entryRel = join(rel, name);
    if (isSkipped(scopes, entryRel, name, dirent.isDirectory())) continue;
    const path = Buffer.concat([dir, SLASH, dirent.name]);
    if (context.exclude?.equals(path)) continue;
    const entrySub = join(sub, name);
    yield { path, rel: entryRel, sub: entrySub, dirent };
    if (dirent.isDirectory()) yield* walkDir(context, path, entryRel, entrySub, scopes);
  }
}

/** `listFolder` for the walk: a folder it cannot list is counted, not fatal. */
async function listInside(
  context: Context,
  dir: Buffer,
): Promise<Dirent<Buffer>[] | "outside" | "unreadable"> {
  try {
    return await listFolder(context.root, dir, context.exclude);
  } catch {
    context.skips.add("unreadable folder");
    return "unreadable";
  }
}

/**
 * The entries of the folder `dir`, listed through a descriptor opened without following a final
 * link, after the kernel said where it points (`/proc/self/fd`): a folder swapped for a link or
 * a file after its parent was listed, or leading outside the real workspace `root` (or into
 * `exclude`, the state folder), is `outside`, and none of its names is shown. Without `/proc`,
 * listed by path. A folder that cannot be listed throws, as `readdir` does.
 */
export async function listFolder(
  root: Buffer,
  dir: Buffer,
  exclude?: Buffer,
): Promise<Dirent<Buffer>[] | "outside"> {
  const options = { withFileTypes: true, encoding: "buffer" } as const;
  let handle: FileHandle;
  try {
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    // No longer a folder (ENOTDIR; ELOOP): swapped for a link or a file, which is not entered.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR" || code === "ELOOP") return "outside";
    throw error;
  }
  try {
    const real = descriptorPath(handle.fd);
    if (real === undefined) return await readdir(dir, options);
    if (!(real.equals(root) || isInside(root, real))) return "outside";
    if (exclude && (real.equals(exclude) || isInside(exclude, real))) return "outside";
    return await readdir(`/proc/self/fd/${handle.fd}`, options);
  } finally {
    await handle.close();
  }
}

/**
 * Which entries of `dir` (a folder inside the real workspace `root`) a walk would skip, for
 * `ls`: called with the entry's shown name and whether it is a folder.
 */
export async function skippedIn(
  root: string,
  dir: Buffer,
  options: WalkOptions = {},
): Promise<(name: string, isDir: boolean) => boolean> {
  const context = {
    root: Buffer.from(root),
    pace: new Pace(options.signal),
    skips: options.skips ?? new Skips(),
  };
  const rel = relativeTo(context.root, dir);
  const scopes = [...(await scopesAbove(context, dir)), ...(await scopeOf(context, dir, rel))];
  return (name, isDir) => isSkipped(scopes, join(rel, name), name, isDir);
}

/** Deeper `.gitignore` files take precedence; within one, the last matching rule wins. */
function isSkipped(scopes: Scope[], rel: string, name: string, isDir: boolean): boolean {
  if (name === ".git") return true;
  for (let i = scopes.length - 1; i >= 0; i--) {
    const scope = scopes[i];
    if (!scope) continue;
    const inScope = scope.base === "" ? rel : rel.slice(scope.base.length + 1);
    const decision = scope.rules.decide(inScope, name, isDir);
    if (decision !== undefined) return decision;
  }
  return false;
}

/** The scopes of the root and every folder between it and `dir`, `dir` excluded. */
async function scopesAbove(context: Context, dir: Buffer): Promise<Scope[]> {
  const scopes: Scope[] = [];
  const rel = dir.subarray(context.root.length + 1);
  let current = context.root;
  for (const part of dir.length > context.root.length ? split(rel) : []) {
    scopes.push(...(await scopeOf(context, current, relativeTo(context.root, current))));
    current = Buffer.concat([current, SLASH, part]);
  }
  return scopes;
}

/**
 * The rules of `dir`'s `.gitignore`. It is read only when it is a regular file (not a link, a
 * FIFO or a device: the walk never leaves the workspace, so neither does this) of at most
 * `limits.ignoreFileBytes`; otherwise it is counted in `skips` and ignored.
 */
async function scopeOf(context: Context, dir: Buffer, base: string): Promise<Scope[]> {
  const file = Buffer.concat([dir, GITIGNORE]);
  const info = await lstat(file).catch(() => undefined);
  if (!info) return [];
  if (!info.isFile()) {
    context.skips.add("irregular ignore file");
    return [];
  }
  if (info.size > limits.ignoreFileBytes) {
    context.skips.add("oversized ignore file");
    return [];
  }
  const read = await readRegularFile(file, limits.ignoreFileBytes).catch(
    () => "unreadable file" as const,
  );
  if (!Buffer.isBuffer(read)) {
    context.skips.add(read);
    return [];
  }
  return [{ base, rules: await compileIgnore(read.toString("utf8"), context.pace) }];
}

/**
 * Reads a file opened without following a link and without blocking (a FIFO swapped in after
 * the `lstat` opens at once), after checking that what was opened is a regular file.
 */
async function readRegularFile(
  path: Buffer,
  max: number,
): Promise<Buffer | "irregular ignore file" | "oversized ignore file"> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) return "irregular ignore file";
    const buffer = Buffer.alloc(Math.min(info.size, max) + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return bytesRead > max ? "oversized ignore file" : buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

const SLASH = Buffer.from("/");
const GITIGNORE = Buffer.from("/.gitignore");

const join = (rel: string, name: string) => (rel === "" ? name : `${rel}/${name}`);

/** `path` relative to `root` (which contains it), shown; "" for the root itself. */
function relativeTo(root: Buffer, path: Buffer): string {
  return path.length > root.length ? showName(path.subarray(root.length + 1)) : "";
}

function split(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let at = bytes.indexOf(0x2f); at !== -1; at = bytes.indexOf(0x2f, start)) {
    parts.push(bytes.subarray(start, at));
    start = at + 1;
  }
  parts.push(bytes.subarray(start));
  return parts;
}
