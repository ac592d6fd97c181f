import { realpathSync } from "node:fs";
import { isAbsolute, relative, sep } from "node:path";

/**
 * Whether `path` is `folder` or lies inside it. Both are absolute and resolved alike (real paths
 * where a boundary depends on it): the one meaning of "inside" for the tools' workspace boundary,
 * the sandbox's hidden paths, the project root and the rules' redirects. A name that merely starts
 * with two dots (`..notes`) is inside; `..` and what lies above is not. The walk and grep compare
 * raw bytes of real paths for names that are not UTF-8, with the same meaning (`tools/shown-path.ts`).
 *
 * Two paths already in their resolved form (what `path.resolve` would leave as it is) are compared
 * as text, without resolving them again: a check against every skill folder is one comparison each.
 */
export function within(folder: string, path: string): boolean {
  if (isResolved(folder) && isResolved(path))
    return (
      path === folder ||
      (path.startsWith(folder) &&
        (folder.length === 1 || path.charCodeAt(folder.length) === SEPARATOR))
    );
  const rel = relative(folder, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** Whether `path` lies inside `folder` and is not `folder` itself. */
export function strictlyWithin(folder: string, path: string): boolean {
  return relative(folder, path) !== "" && within(folder, path);
}

const SEPARATOR = 0x2f;
/** An empty, `.` or `..` component, or a separator at the end. */
const UNRESOLVED = /\/\.{0,2}(?:\/|$)/;

/**
 * Whether `path` is an absolute POSIX path `path.resolve` leaves as it is: `/`, or `/` and names
 * none of which is empty, `.` or `..`.
 */
function isResolved(path: string): boolean {
  if (sep !== "/" || path.charCodeAt(0) !== SEPARATOR) return false;
  return path.length === 1 || !UNRESOLVED.test(path);
}

/** A path's real path, or the path itself when it is not there (or cannot be resolved). */
export function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
