import { isAbsolute, resolve } from "node:path";
import { within } from "../paths.js";
import type { Script } from "./script.js";
import type { CommandView, Run } from "./wrappers.js";

/** Whether a path (absolute) leads inside the workspace once the system resolves its links. */
export type InsideCheck = (path: string) => Promise<boolean>;

/** Folders a line may be in at one `cd` are followed up to this many; past it, `cd` asks. */
const mostFolders = 16;

/**
 * The `cd` commands of a line that the read-only set allows: `cd [-L|-P] [--] DIR`, DIR fixed
 * text, run by the shell itself (not through a wrapper, `command cd`), landing inside the
 * workspace from every folder the line may be in when it runs. Those folders are followed in
 * the order of the line: the workspace, and each earlier `cd`'s landing (a `cd` may fail, run in
 * a subshell or be skipped by `&&`, so every earlier one counts). A loop can repeat a relative
 * `cd` without end: with a loop in the line, only absolute folders count. DIR must stay inside
 * both as the shell reads it (`..` taken from the text, `cd -L`) and as the kernel does (links
 * first, `cd -P`): `cd link/..` lands where the link leads when the first way fails. A folder
 * that does not exist makes `cd` fail, which changes nothing.
 */
export async function allowedFolderChanges(
  script: Script,
  views: CommandView[],
  workspace: string,
  inside: InsideCheck,
): Promise<Set<Run>> {
  const allowed = new Set<Run>();
  const folders = [workspace];
  for (const [i, view] of views.entries()) {
    const own = script.commands[i]?.words;
    for (const run of view.runs) {
      const target = run.words === own ? cdTarget(run.words) : undefined;
      if (target === undefined) continue;
      if (!isAbsolute(target) && script.loops) continue;
      const landings = isAbsolute(target)
        ? [target]
        : folders.map((folder) => `${folder}/${target}`);
      let ok = true;
      for (const landing of landings)
        ok &&= within(workspace, resolve(landing)) && (await inside(landing));
      if (!ok) continue;
      allowed.add(run);
      for (const landing of landings) {
        const folder = resolve(landing);
        if (!folders.includes(folder)) folders.push(folder);
      }
      if (folders.length > mostFolders) return allowed;
    }
  }
  return allowed;
}

/** DIR of `cd [-L|-P] [--] DIR`, fixed text; `undefined` for any other `cd` or command. */
export function cdTarget(words: Run["words"]): string | undefined {
  const [program, ...args] = words;
  if (program?.kind !== "static" || program.value !== "cd") return undefined;
  let i = 0;
  while (args[i]?.kind === "static" && /^-[LP]$/.test((args[i] as { value: string }).value)) i++;
  const dashes = args[i];
  if (dashes?.kind === "static" && dashes.value === "--") i++;
  const dir = args[i];
  if (args.length !== i + 1 || dir?.kind !== "static") return undefined;
  if (dir.value === "" || dir.value.startsWith("-")) return undefined;
  // `src/` is `src` (a trailing slash only asks that it be a folder, as cd does anyway)
  return dir.value.replace(/(.)\/+$/, "$1");
}
