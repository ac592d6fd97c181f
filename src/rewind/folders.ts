import { lstat, readdir, realpath, rmdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { strictlyWithin } from "../paths.js";
import { systemErrorMeaning } from "../system-errors.js";

/** What a rewind does to a folder the agent made: remove it, or keep it and say why. */
export type FolderAction =
  | { kind: "remove-folder"; path: string; target: string }
  | { kind: "refuse"; path: string; reason: string; diff: string[] };

/** The most names a kept folder's line gives of what it holds. */
const MOST_NAMED = 3;

/**
 * Children before their parent, siblings by name: folders in the order they can be removed
 * (`a/b` before `a`, `a` before `a-x` and `e`).
 */
export function deepestFirst(a: string, b: string): number {
  const left = a.split("/");
  const right = b.split("/");
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const [x = "", y = ""] = [left[i], right[i]];
    if (x !== y) return x < y ? -1 : 1;
  }
  return right.length - left.length;
}

/**
 * For each folder the agent made from prompt N on (relative to `realRoot`), deepest first: removed
 * when what it holds is only files the rewind deletes (`deleted`) and folders it removes; kept,
 * with a refusal saying what it holds, otherwise. A folder gone already, or no longer a folder, or
 * reached through a link now, is passed over: it is not the one the agent made.
 */
export async function planFolders(
  folders: readonly string[],
  realRoot: string,
  deleted: ReadonlySet<string>,
): Promise<FolderAction[]> {
  const gone = new Set(deleted);
  const actions: FolderAction[] = [];
  for (const folder of [...folders].sort(deepestFirst)) {
    const target = join(realRoot, folder);
    if (!(await isOwnFolder(realRoot, target))) continue;
    const path = `${folder}/`;
    const names = await readdir(target).catch((error: NodeJS.ErrnoException) => {
      actions.push({
        kind: "refuse",
        path,
        reason: `it cannot be read (${systemErrorMeaning(error.code ?? "EIO")}): it is kept`,
        diff: [],
      });
      return undefined;
    });
    if (!names) continue;
    const held = names.filter((name) => !gone.has(`${folder}/${name}`)).sort();
    if (held.length === 0) {
      gone.add(folder);
      actions.push({ kind: "remove-folder", path, target });
      continue;
    }
    const more = held.length > MOST_NAMED ? ` and ${held.length - MOST_NAMED} more` : "";
    const listed = `${held.slice(0, MOST_NAMED).join(", ")}${more}`;
    actions.push({
      kind: "refuse",
      path,
      reason: `the folder is not empty (it holds ${listed}): it is kept`,
      diff: [],
    });
  }
  return actions;
}

/** A real folder inside the workspace, reached through no link. */
async function isOwnFolder(realRoot: string, target: string): Promise<boolean> {
  if (!strictlyWithin(realRoot, target)) return false;
  const parent = await realpath(dirname(target)).catch(() => undefined);
  if (parent !== dirname(target)) return false;
  const info = await lstat(target).catch(() => undefined);
  return info?.isDirectory() === true;
}

/** Removes a folder the plan found empty of all but what the rewind removed, if it still is. */
export async function removeFolder(realRoot: string, target: string): Promise<void> {
  if (!(await isOwnFolder(realRoot, target)))
    throw new Error("it is no longer a folder of the workspace");
  await rmdir(target).catch((error: NodeJS.ErrnoException) => {
    throw new Error(
      error.code === "ENOTEMPTY" || error.code === "EEXIST"
        ? "it is not empty now: it is kept"
        : `it could not be removed (${error.code === undefined ? error.message : systemErrorMeaning(error.code)})`,
    );
  });
}
