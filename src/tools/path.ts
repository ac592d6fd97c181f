import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { within } from "../paths.js";
import { ToolError } from "./define.js";
import { decodeShown, showText } from "./names.js";

/** Thrown for any path outside the workspace; tools turn it into an `isError` result. */
export class PathEscapeError extends ToolError {
  constructor() {
    super("path escapes workspace");
  }
}

/** What the path boundary refuses besides leaving the workspace. */
export interface BoundaryOptions {
  /**
   * mini-agent's own state folder (`$MINI_AGENT_HOME`: sessions, rules). When it lies inside the
   * workspace, paths under it are refused all the same, so the model cannot forge a session.
   * Compared by real path, so a symlink to it is refused too.
   */
  stateDir?: string | undefined;
  /**
   * Real paths of folders outside the workspace that this tool may also open, read-only: the
   * registered skill folders (asked afresh for each call, as skills are found again each turn).
   * Only `read`, `ls`, `find` and `grep` are given them, so `write` and `edit` still refuse every
   * path there. A path counts as inside one when its real path is, like the workspace boundary;
   * a skill folder in the state folder is open all the same, nothing else there is.
   */
  readOnlyRoots?: (() => readonly string[]) | undefined;
}

const MAX_LINKS = 40;

/**
 * The path boundary every tool uses. Resolves `userPath` (relative to the workspace, or absolute
 * inside it) to a real path: symlinks are followed, in the final component and in every parent,
 * including dangling ones, and the result must lie inside the real workspace root and outside
 * the state folder. For a path that does not exist yet, the deepest existing ancestor decides.
 * `~` is not expanded: it is refused, like every other way out. Nothing is created. `shownPath`
 * is a path as tools show it (`names.ts`: `\\`, `\n`, `\xNN` escapes stand for the bytes of odd
 * names).
 *
 * This checks a path, not what a later `open` reaches: another process may swap an entry in
 * between. Tools that open files use `openInWorkspace`, which verifies what was opened.
 */
export async function workspacePath(
  root: string,
  shownPath: string,
  options: BoundaryOptions = {},
): Promise<string> {
  const userPath = decodeShown(shownPath);
  if (typeof userPath !== "string")
    throw new ToolError("path is not valid UTF-8: only ls, find and grep open such names");
  if (userPath.includes("\0")) throw new ToolError("path contains a NUL byte");
  if (userPath === "~" || userPath.startsWith("~/")) throw new PathEscapeError();
  const realRoot = await realpath(root);
  const real = await resolveReal(resolve(realRoot, userPath), 0);
  await checkInside(realRoot, real, options);
  return real;
}

/** Throws unless the real path `real` lies inside `realRoot` and outside the state folder. */
export async function checkInside(
  realRoot: string,
  real: string,
  options: BoundaryOptions,
): Promise<void> {
  if (readOnlyRootOf(real, options) !== undefined) return;
  if (!within(realRoot, real)) throw new PathEscapeError();
  const state = await realStateDir(options);
  if (state !== undefined && within(state, real)) throw new StateFolderError();
}

/** Thrown for a path under mini-agent's state folder. */
export class StateFolderError extends ToolError {
  constructor() {
    super("path is inside mini-agent's state folder");
  }
}

/** The real path of the state folder, when there is one to refuse. */
export async function realStateDir(options: BoundaryOptions): Promise<string | undefined> {
  return options.stateDir === undefined ? undefined : resolveReal(resolve(options.stateDir), 0);
}

/** The read-only root (a skill folder) the real path `real` lies in, if any: the one place it is decided. */
export function readOnlyRootOf(real: string, options: BoundaryOptions): string | undefined {
  return options.readOnlyRoots?.().find((root) => within(root, real));
}

/** A tool's path argument resolved: its real path, the real root, and how the model sees it. */
export interface Resolved {
  path: string;
  realRoot: string;
  shown: string;
  /** The path names a folder: it ends with `/`, `/.` or `/..` (`a.txt/` is not `a.txt`). */
  folder: boolean;
  /** The boundary it was checked against, to check what is later opened against the same. */
  boundary: BoundaryOptions;
}

export async function resolveInWorkspace(
  root: string,
  userPath: string,
  options: BoundaryOptions = {},
): Promise<Resolved> {
  const workspace = await realpath(root);
  const path = await workspacePath(workspace, userPath, options);
  const folder = /(^|\/)\.{0,2}$/.test(userPath);
  // A path in a read-only root (a skill folder outside the workspace) is checked against it.
  const realRoot = within(workspace, path)
    ? workspace
    : (readOnlyRootOf(path, options) ?? workspace);
  return { path, realRoot, shown: displayPath(workspace, path), folder, boundary: options };
}

/** The workspace-relative form of a real path, for what the model reads; absolute outside it. */
export function displayPath(realRoot: string, path: string): string {
  return showText(within(realRoot, path) ? relative(realRoot, path) || "." : path);
}

/** The real path of `path`, following symlinks even when their final target does not exist. */
async function resolveReal(path: string, links: number): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
  }
  const stats = await lstat(path).catch(() => undefined);
  if (stats?.isSymbolicLink()) {
    if (links >= MAX_LINKS) throw new ToolError("too many levels of symbolic links");
    return resolveReal(resolve(dirname(path), await readlink(path)), links + 1);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  return join(await resolveReal(parent, links), basename(path));
}
