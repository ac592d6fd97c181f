import { realpath, stat } from "node:fs/promises";
import { visible } from "../visible.js";
import { UsageError } from "./args.js";

/**
 * The real path of the folder to work in, or a `UsageError` that says truly why not: it does not
 * exist, it is not a folder, or its path is not UTF-8. Node hands a path that is not UTF-8 to
 * JavaScript with U+FFFD in place of the bad bytes, and no file call can reach it by that name;
 * every tool works on text paths, so such a folder is refused by name rather than "missing".
 */
export async function workspaceFolder(cwd: string): Promise<string> {
  const shown = visible(cwd);
  let real: string;
  try {
    real = await realpath(cwd);
  } catch {
    if (cwd.includes("\uFFFD")) {
      throw new UsageError(
        `the folder's path is not valid UTF-8: ${shown} (mini-agent needs a UTF-8 path: rename the folder)`,
      );
    }
    throw new UsageError(`no such folder: ${shown} (check --cwd)`);
  }
  if (!(await stat(real)).isDirectory())
    throw new UsageError(`not a folder: ${shown} (--cwd needs a folder)`);
  return real;
}
