import { lstatSync } from "node:fs";
import { dirname } from "node:path";
import { strictlyWithin } from "../paths.js";

/**
 * Paths inside the workspace kept read-only for one command (what the rewind's snapshot could not
 * keep), or the whole workspace (`whole`): a command in the sandbox cannot change what a rewind
 * could not put back.
 */
export type KeptReadOnly = { whole: true } | { whole: false; paths: readonly string[] };

/**
 * The bwrap mounts for `kept`, inside the workspace: each path bound read-only onto itself (a
 * write fails with "Read-only file system", a removal or rename with "Device or resource busy"),
 * and each folder on its way inside the workspace bound onto itself, so no folder holding it can
 * be renamed away either (the path would move with it). The whole workspace is made read-only
 * last (`lastMounts`): before that bwrap still makes its mount points in it.
 */
export function keptReadOnlyMounts(workspace: string, kept: KeptReadOnly): string[] {
  if (kept.whole) return [];
  const folders = new Set<string>();
  const mounts: string[] = [];
  for (const path of kept.paths) {
    // One gone since the walk holds nothing to keep (bwrap would refuse to start without it).
    if (!strictlyWithin(workspace, path) || !exists(path)) continue;
    for (let folder = dirname(path); strictlyWithin(workspace, folder); folder = dirname(folder))
      folders.add(folder);
    mounts.push("--ro-bind", path, path);
  }
  return [...[...folders].flatMap((folder) => ["--bind", folder, folder]), ...mounts];
}

/**
 * The mounts that make the whole workspace read-only, after every other: the workspace's own
 * mount and each folder inside it bound writable onto itself (a git folder) remounted read-only.
 */
export function lastMounts(workspace: string, kept: KeptReadOnly, inside: string[]): string[] {
  if (!kept.whole) return [];
  const writable = new Set([workspace]);
  for (const mount of groups(inside))
    if (mount[0] === "--bind" && mount[2] !== undefined) writable.add(mount[2]);
  return [...writable].flatMap((path) => ["--remount-ro", path]);
}

/** How many words each mount option of bwrap takes after it. */
const ARITY: Record<string, number> = {
  "--bind": 2,
  "--ro-bind": 2,
  "--dev-bind": 2,
  "--tmpfs": 1,
  "--remount-ro": 1,
};

/** bwrap's mount options, one group (option and its words) each. */
function groups(args: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let at = 0; at < args.length; ) {
    const option = args[at] ?? "";
    const arity = ARITY[option];
    if (arity === undefined) throw new Error(`unknown bwrap mount option ${option}`);
    out.push(args.slice(at, at + 1 + arity));
    at += 1 + arity;
  }
  return out;
}

/**
 * Mounts inside the workspace ordered shallowest first (and in their own order at one depth):
 * bwrap takes a bound folder from the host, where the mounts made inside it so far do not exist,
 * so a folder bound after a mount inside it would hide that mount.
 */
export function shallowestFirst(args: readonly string[]): string[] {
  const depth = (group: string[]) => (group[group.length - 1] ?? "").split("/").length;
  return groups(args)
    .map((group, at) => ({ group, at }))
    .sort((a, b) => depth(a.group) - depth(b.group) || a.at - b.at)
    .flatMap(({ group }) => group);
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
