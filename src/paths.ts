import { isAbsolute, relative, sep } from "node:path";

/**
 * Whether `path` is `folder` or lies inside it. Both are absolute and resolved alike (real paths
 * where a boundary depends on it): the one meaning of "inside" for the tools' workspace boundary,
 * the sandbox's hidden paths, the project root and the rules' redirects. A name that merely starts
 * with two dots (`..notes`) is inside; `..` and what lies above is not. The walk and grep compare
 * raw bytes of real paths for names that are not UTF-8, with the same meaning (`tools/shown-path.ts`).
 */
export function within(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** Whether `path` lies inside `folder` and is not `folder` itself. */
export function strictlyWithin(folder: string, path: string): boolean {
  return relative(folder, path) !== "" && within(folder, path);
}
