import { realpath, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { within } from "../paths.js";
import { visible } from "../visible.js";
import { UsageError } from "./exit.js";

/**
 * The real path of the folder to work in, or a `UsageError` that says truly why not: it does not
 * exist, it is not a folder, or its path is not UTF-8. Node hands a path that is not UTF-8 to
 * JavaScript with U+FFFD in place of the bad bytes, and no file call can reach it by that name;
 * every tool works on text paths, so such a folder is refused by name rather than "missing".
 * mini-agent's own state folder (`state`), or a folder inside it, is refused too: there a
 * command's redirect "inside the workspace" would write the user's MCP servers, rules or sessions,
 * which the tools and the sandbox otherwise keep out of the agent's reach.
 */
export async function workspaceFolder(cwd: string, state: string): Promise<string> {
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
  if (within(await realpath(state).catch(() => resolve(state)), real))
    throw new UsageError(
      `${shown} is mini-agent's state folder or inside it: the agent never works there (run it in a project folder)`,
    );
  return real;
}
