import { statfsSync } from "node:fs";

/** Free bytes under which a call that would run without asking asks instead. */
export const LOW_SPACE_BYTES = 2 ** 30;

/** The folders whose file systems a call fills: what it writes, and what is kept to undo it. */
export interface SpaceWatched {
  /** The workspace, where commands and `write` and `edit` write. */
  workspace: string;
  /** mini-agent's state folder, where the session and the bytes a rewind puts back are kept. */
  stateDir: string;
}

/**
 * Why calls should be asked about: the first of the workspace's and the state folder's file
 * systems with under 1 GiB free to an unprivileged writer, or undefined when both have more (or
 * their free space cannot be read: a folder that does not exist yet). `free` reads a folder's free
 * bytes (`statfs`; tests give their own).
 */
export function lowSpace(
  watched: SpaceWatched,
  free: (path: string) => number | undefined = freeBytes,
): string | undefined {
  const folders = [
    ["workspace", watched.workspace],
    ["state folder", watched.stateDir],
  ] as const;
  for (const [name, path] of folders) {
    const bytes = free(path);
    if (bytes === undefined || bytes >= LOW_SPACE_BYTES) continue;
    return `the file system of the ${name} (${path}) has ${mebibytes(bytes)} free, under 1 GiB: a call could fill it, and what it changes could not all be kept for a rewind`;
  }
  return undefined;
}

function freeBytes(path: string): number | undefined {
  try {
    const info = statfsSync(path);
    return info.bavail * info.bsize;
  } catch {
    return undefined;
  }
}

const mebibytes = (bytes: number) => `${Math.floor(bytes / 2 ** 20)} MiB`;
