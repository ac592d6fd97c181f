import { lstat, realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { within } from "../paths.js";
import { protectedWhy } from "../protected/files.js";
import { allowedFolderChanges, cdTarget } from "./folder.js";
import { readPaths } from "./read-paths.js";
import { realInside, realTarget, resolveLinks } from "./real-path.js";
import type { Script } from "./script.js";
import type { CommandView, Run } from "./wrappers.js";

/**
 * What the read-only set may run without the sandbox: `runs`, the reads whose every path lands
 * inside the workspace from every folder the line may be in; `cds`, the changes of folder that
 * land inside; `problems`, redirects that read a protected file or the state folder.
 */
export interface InsideReads {
  runs: Set<Run>;
  cds: Set<Run>;
  problems: string[];
}

/**
 * The reads of `script` that stay inside the workspace (`readPaths` says which words are paths).
 * A path stays inside when it does by its text and by its real path (every link resolved, a
 * missing name reads nothing, unless another command of the line may make it), is no protected file (`protectedWhy`), and neither lies in the
 * state folder nor holds it. A relative path is judged from every folder an earlier `cd` of the
 * line may have led to (with a loop and a `cd`, relative paths ask). A read of the current
 * folder (`ls`, `grep -r x`) is judged as `.` from each of those folders. `filesOnly`: a
 * folder asks too.
 */
export async function insideReads(
  script: Script,
  views: CommandView[],
  workspace: string,
  stateFolder: string | undefined,
): Promise<InsideReads> {
  const found: InsideReads = { runs: new Set(), cds: new Set(), problems: [] };
  const realWorkspace = await realpath(workspace).catch(() => undefined);
  if (realWorkspace === undefined) return found;
  const realState =
    stateFolder === undefined
      ? undefined
      : await realpath(stateFolder).catch(() => resolve(stateFolder));
  // A command of the line that is neither a read nor a `cd` (one an allow rule lets run: `ln`,
  // `git checkout`, `tar`) may make a missing name a link out before a read opens it.
  const mayMake = views
    .flatMap((view) => view.runs)
    .some((run) => cdTarget(run.words) === undefined && readPaths(run) === undefined);
  const missing = mayMake ? 0 : Number.POSITIVE_INFINITY;
  const inside = (path: string, file = false) =>
    readInside(path, workspace, realWorkspace, realState, file, missing);
  found.cds = await allowedFolderChanges(script, views, workspace, (path) =>
    realInside(realWorkspace, workspace, path, missing),
  );
  const moves = script.loops === true && found.cds.size > 0;
  const folders = [workspace];
  for (const run of views.flatMap((view) => view.runs)) {
    if (found.cds.has(run)) {
      const target = cdTarget(run.words) ?? ".";
      const landings = isAbsolute(target) ? [target] : folders.map((f) => `${f}/${target}`);
      // bash lands by the text, or where the links lead when that fails: both count
      const real = await Promise.all(landings.map((path) => resolveLinks(path)));
      const reached = [
        ...landings.map((path) => resolve(path)),
        ...real.filter((path): path is string => path !== undefined && path !== "missing"),
      ];
      for (const landing of reached) if (!folders.includes(landing)) folders.push(landing);
      continue;
    }
    const read = readPaths(run);
    if (read === undefined) continue;
    const words = read.folder ? [{ kind: "static" as const, value: "." }] : read.paths;
    let ok = true;
    for (const word of words) {
      if (!ok) break;
      if (word.kind !== "static") ok = false;
      else if (word.value === "-") continue;
      else if (isAbsolute(word.value)) ok = await inside(word.value, read.filesOnly);
      else if (moves) ok = false;
      else
        for (const folder of folders)
          ok &&= await inside(`${folder}/${word.value}`, read.filesOnly);
    }
    if (read.repository)
      for (const folder of folders) ok &&= await ownRepository(folder, realWorkspace);
    if (ok) found.runs.add(run);
  }
  for (const word of script.reads)
    if (
      word.kind === "static" &&
      word.value !== "/dev/null" &&
      !(await inside(resolve(workspace, word.value)))
    )
      found.problems.push(
        `a redirect from ${word.value}, which leaves the workspace, is protected or holds the state folder`,
      );
  return found;
}

/**
 * Whether reading the absolute `path` stays inside the workspace and out of the protected set
 * and the state folder (see `insideReads`).
 */
async function readInside(
  path: string,
  workspace: string,
  realWorkspace: string,
  realState: string | undefined,
  file: boolean,
  missing: number,
): Promise<boolean> {
  const full = path.replace(/(.)\/+$/, "$1");
  if (!within(workspace, resolve(full))) return false;
  if (!(await realInside(realWorkspace, workspace, full, missing))) return false;
  const real = await realTarget(full);
  if (real === undefined || !within(realWorkspace, real.path) || real.missing > missing)
    return false;
  if (file && real.missing === 0 && (await lstat(real.path)).isDirectory()) return false;
  if (realState !== undefined && (within(realState, real.path) || within(real.path, realState)))
    return false;
  return (await protectedWhy(realWorkspace, real.path)) === undefined;
}

/**
 * Whether the git repository git finds from `folder` lies inside the workspace: the nearest
 * folder at or above it with a `.git` is inside and its `.git` is a folder, not a link nor a
 * `gitdir:` file (which may lead anywhere); or there is none, and no folder above the workspace
 * holds a `HEAD` either (git then finds no repository and reads nothing).
 */
async function ownRepository(folder: string, realWorkspace: string): Promise<boolean> {
  const real = await realpath(folder).catch(() => undefined);
  if (real === undefined || !within(realWorkspace, real)) return false;
  for (let at = real; ; at = dirname(at)) {
    const dotGit = await lstat(join(at, ".git")).catch(() => undefined);
    if (dotGit !== undefined) return within(realWorkspace, at) && dotGit.isDirectory();
    if (!within(realWorkspace, at) && (await lstat(join(at, "HEAD")).catch(() => undefined)))
      return false;
    if (at === dirname(at)) return true;
  }
}
