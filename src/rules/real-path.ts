import { lstat, readlink } from "node:fs/promises";
import { dirname, isAbsolute, join } from "node:path";
import { within } from "../paths.js";

/**
 * The real path `path` opens: its nearest existing folder resolved, the missing names after, and
 * how many names are missing (1: only the file itself).
 */
export async function realTarget(
  path: string,
): Promise<{ path: string; missing: number } | undefined> {
  const names = path.split("/");
  for (let absent = 0; absent < names.length; absent++) {
    const head = names.slice(0, names.length - absent).join("/") || "/";
    const real = await resolveLinks(head);
    if (real === undefined) return undefined;
    if (real !== "missing")
      return { path: join(real, ...names.slice(names.length - absent)), missing: absent };
  }
  return undefined;
}

/**
 * Whether `path`, opened from `workspace`, lands inside `realWorkspace` once the system resolves
 * it: the path is resolved as the kernel does (symlinks first, then `..`); when it does not exist,
 * its nearest existing folder must be inside and at most `missing` trailing names may be absent,
 * none of them `.` or `..`, and the first of them no name at all (not a dangling symlink).
 */
export async function realInside(
  realWorkspace: string,
  workspace: string,
  path: string,
  missing: number,
): Promise<boolean> {
  const full = isAbsolute(path) ? path : `${workspace}/${path}`;
  const names = full.split("/");
  for (let absent = 0; absent <= Math.min(missing, names.length - 1); absent++) {
    const tail = names.slice(names.length - absent);
    if (tail.some((name) => name === "." || name === ".." || name === "")) return false;
    const head = names.slice(0, names.length - absent).join("/") || "/";
    const real = await resolveLinks(head);
    if (real === "missing") continue;
    if (real === undefined || !within(realWorkspace, real)) return false;
    // the first absent name must be absent as a name too: a dangling symlink leads elsewhere
    const first = tail[0];
    return first === undefined || (await lstat(join(real, first)).then(() => false, isMissing));
  }
  return false;
}

function isMissing(error: NodeJS.ErrnoException): boolean {
  return error.code === "ENOENT";
}

/** Symlinks followed before a path is taken as unreadable (the kernel's own limit). */
const linkLimit = 40;

/**
 * The real path of `path` as the kernel resolves it (each symlink where it stands, then `..`),
 * `"missing"` when a name in it does not exist, `undefined` when it cannot be known here: a
 * symlink loop, a name under a file, an unreadable folder, or a path through `/proc`, whose
 * `self`, `cwd` and `fd` links name the process that follows them (bash, not this one; `/dev/stdin`
 * and `/dev/fd` lead there).
 */
export async function resolveLinks(path: string): Promise<string | undefined | "missing"> {
  let done = "/";
  let rest = path.split("/");
  let links = 0;
  while (rest.length > 0) {
    const name = rest.shift() ?? "";
    if (name === "" || name === ".") continue;
    if (name === "..") {
      done = dirname(done);
      continue;
    }
    const next = join(done, name);
    if (next === "/proc" || next.startsWith("/proc/")) return undefined;
    const info = await lstat(next).catch((error: NodeJS.ErrnoException) => error.code ?? "");
    if (info === "ENOENT") return "missing";
    if (typeof info === "string") return undefined;
    if (info.isSymbolicLink()) {
      if (++links > linkLimit) return undefined;
      const target = await readlink(next).catch(() => undefined);
      if (target === undefined) return undefined;
      rest = [...target.split("/"), ...rest];
      if (target.startsWith("/")) done = "/";
      continue;
    }
    if (rest.some((part) => part !== "") && !info.isDirectory()) return undefined;
    done = next;
  }
  return done;
}
