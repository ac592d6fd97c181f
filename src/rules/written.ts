import { realpath } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { within } from "../paths.js";
import { type MoreProtected, protectedWhy } from "../protected/files.js";
import { realInside, realTarget } from "./real-path.js";
import type { Script, Word } from "./script.js";

/** Redirect targets that write no file. */
export const writesNowhere = ["/dev/null", "/dev/stdout", "/dev/stderr"];

/** A file an allowed command writes by an option or operand (`sort -o FILE`): its program and path. */
export interface Written {
  program: string;
  file: Word;
}

/** A target that writes no file. */
export const nowhere = (word: Word) => word.kind === "static" && writesNowhere.includes(word.value);

/**
 * The files an allow rule lets a command write by its options or operands (`sort -o FILE`,
 * `uniq IN OUT`), judged as a redirect's target is: a path known only at run time, a relative
 * path after a change of folder, a path outside the workspace (by its text or its real path), a
 * protected file (the session's own, `more`, too), or a file in a folder an earlier command of
 * the line may make, asks.
 */
export async function writtenProblems(
  written: Written[],
  script: Script,
  workspace: string,
  more?: MoreProtected,
): Promise<string[]> {
  if (written.length === 0) return [];
  const movesAround = script.commands.some((c) => {
    const program = c.words[0];
    return program?.kind === "static" && /^(cd|pushd|popd)$/.test(program.value);
  });
  const realWorkspace = await realpath(workspace).catch(() => undefined);
  const problems: string[] = [];
  for (const { program, file } of written) {
    if (nowhere(file)) continue;
    if (file.kind === "dynamic") {
      problems.push(`${program} writing ${file.text}, a file known only when the shell runs`);
      continue;
    }
    const path = file.value;
    if (movesAround && !isAbsolute(path)) {
      problems.push(`${program} writing ${path} after a change of folder`);
      continue;
    }
    const inside =
      within(workspace, resolve(workspace, path)) &&
      realWorkspace !== undefined &&
      (await realInside(realWorkspace, workspace, path, Infinity));
    if (!inside || realWorkspace === undefined) {
      problems.push(`${program} writing a file outside the workspace (${path})`);
      continue;
    }
    const target = await realTarget(isAbsolute(path) ? path : join(workspace, path));
    if (target === undefined) {
      problems.push(`${program} writing ${path}, whose real path cannot be read`);
      continue;
    }
    if (target.missing > 1 && script.commands.length > 1) {
      problems.push(`${program} writing ${path}, whose folder an earlier command may make`);
      continue;
    }
    const why = await protectedWhy(realWorkspace, target.path, more);
    if (why !== undefined) problems.push(`${program} writing the protected file ${path} (${why})`);
  }
  return problems;
}
