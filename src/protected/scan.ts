import type { Stats } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { whyByNames } from "./files.js";

/** What a walk of the workspace found: each protected entry that is not a folder, and why. */
export interface Found {
  /** Each protected file, link or other entry by absolute path (under the real root): why, and its `lstat`. */
  files: Map<string, { why: string; info: Stats }>;
  /** Folders that could not be read: what lies in them is unknown. */
  unread: string[];
}

/** Folders read at once while walking. */
const CONCURRENCY = 16;

/**
 * Every protected entry under `realRoot` (a real path), at any depth, by the one rule
 * (`whyByNames`): a walk that reads each folder once, follows no link, and skips a git folder's
 * `objects/` (only its `info/alternates` files are protected, and they are looked at directly).
 */
export async function findProtected(realRoot: string): Promise<Found> {
  const files: Found["files"] = new Map();
  const unread: string[] = [];
  const queue: { path: string; names: string[]; gitAt: readonly number[] }[] = [
    { path: realRoot, names: [], gitAt: [] },
  ];
  const visit = async (folder: (typeof queue)[number]) => {
    const entries = await readdir(folder.path, { withFileTypes: true }).catch(() => undefined);
    if (entries === undefined) {
      unread.push(folder.path);
      return;
    }
    const isGit = entries.some((entry) => entry.name.toLowerCase() === "head");
    const gitAt = isGit ? [...folder.gitAt, folder.names.length - 1] : folder.gitAt;
    const gitFolder = (at: number) => gitAt.includes(at);
    const found: Promise<void>[] = [];
    for (const entry of entries) {
      const names = [...folder.names, entry.name];
      const path = join(folder.path, entry.name);
      if (entry.isDirectory()) {
        if (isGit && entry.name.toLowerCase() === "objects")
          found.push(alternates(path, names, gitFolder));
        else queue.push({ path, names, gitAt });
        continue;
      }
      const why = whyByNames(names, gitFolder);
      if (why !== undefined) found.push(add(path, why));
    }
    await Promise.all(found);
  };
  /** Notes a protected entry with its `lstat`: gone since the folder was read, it is no entry. */
  const add = async (path: string, why: string) => {
    const info = await lstat(path).catch(() => undefined);
    if (info !== undefined) files.set(path, { why, info });
  };
  const alternates = async (
    objects: string,
    names: string[],
    gitFolder: (at: number) => boolean,
  ) => {
    for (const name of ["alternates", "http-alternates"]) {
      const why = whyByNames([...names, "info", name], gitFolder);
      if (why !== undefined) await add(join(objects, "info", name), why);
    }
  };
  const running = new Set<Promise<void>>();
  while (queue.length > 0 || running.size > 0) {
    while (queue.length > 0 && running.size < CONCURRENCY) {
      const next = queue.pop();
      if (next === undefined) break;
      const job: Promise<void> = visit(next).finally(() => running.delete(job));
      running.add(job);
    }
    if (running.size > 0) await Promise.race(running);
  }
  return { files, unread };
}
