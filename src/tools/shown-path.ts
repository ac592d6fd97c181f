import { readlinkSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { ToolError } from "./define.js";
import { decodeShown, showName, showText } from "./names.js";
import {
  type BoundaryOptions,
  PathEscapeError,
  realStateDir,
  resolveInWorkspace,
  StateFolderError,
} from "./path.js";

/**
 * `resolveInWorkspace` for the tools that walk and search (`ls`, `find`, `grep`), which hold
 * paths as bytes: a path shown with `\xNN` escapes (a name that is not UTF-8) resolves too.
 * `shown` is the path as the model sees it; `state` is the real state folder a walk must skip.
 */
export async function resolveShown(
  root: string,
  userPath: string,
  boundary: BoundaryOptions = {},
): Promise<{
  path: Buffer;
  realRoot: string;
  shown: string;
  state: Buffer | undefined;
  /** What walks put before a path relative to `realRoot`: "" in the workspace, the read-only root outside it. */
  prefix: string;
}> {
  const stateDir = await realStateDir(boundary);
  const state = stateDir === undefined ? undefined : Buffer.from(stateDir);
  const decoded = decodeShown(userPath);
  if (typeof decoded === "string") {
    const { path, realRoot, shown } = await resolveInWorkspace(root, userPath, boundary);
    if (realRoot === (await realpath(root)))
      return { path: Buffer.from(path), realRoot, shown, state, prefix: "" };
    // A read-only root (a skill folder) confines the walk by itself, wherever it lies.
    const prefix = `${showText(realRoot)}/`;
    return { path: Buffer.from(path), realRoot, shown, state: undefined, prefix };
  }
  if (decoded.includes(0)) throw new ToolError("path contains a NUL byte");
  if (decoded.subarray(0, 2).equals(Buffer.from("~/"))) throw new PathEscapeError();
  const realRoot = await realpath(root);
  const rootBytes = Buffer.from(realRoot);
  const full =
    decoded[0] === 0x2f ? decoded : Buffer.concat([rootBytes, Buffer.from("/"), decoded]);
  const real = await realpath(full, { encoding: "buffer" });
  if (state && (real.equals(state) || isInside(state, real))) throw new StateFolderError();
  if (real.equals(rootBytes)) return { path: real, realRoot, shown: ".", state, prefix: "" };
  if (!isInside(rootBytes, real)) throw new PathEscapeError();
  const shown = showName(real.subarray(rootBytes.length + 1));
  return { path: real, realRoot, shown, state, prefix: "" };
}

/** Whether `path` lies strictly inside the folder `root` (both real paths, as bytes). */
export function isInside(root: Buffer, path: Buffer): boolean {
  return (
    path.length > root.length &&
    path[root.length] === 0x2f &&
    path.subarray(0, root.length).equals(root)
  );
}

const DELETED = Buffer.from(" (deleted)");

/**
 * Where the open descriptor `fd` points, as the kernel says (`/proc/self/fd`), whatever path it
 * was opened by; undefined without `/proc`. A file removed since keeps its last path.
 */
export function descriptorPath(fd: number): Buffer | undefined {
  let real: Buffer;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`, { encoding: "buffer" });
  } catch {
    return undefined;
  }
  const end = real.length - DELETED.length;
  return end > 0 && real.subarray(end).equals(DELETED) ? real.subarray(0, end) : real;
}
