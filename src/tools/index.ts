import type { MoreProtected } from "../protected/files.js";
import type { Tool } from "../types.js";
import { type BashOptions, bashTool } from "./bash.js";
import { editTool } from "./edit.js";
import { findTool } from "./find.js";
import { grepTool } from "./grep.js";
import { lsTool } from "./ls.js";
import type { ProtectedWrites } from "./protected.js";
import { readTool } from "./read.js";
import { SeenFiles } from "./seen.js";
import { writeTool } from "./write.js";

export interface WorkspaceToolsOptions {
  bash?: BashOptions;
  /**
   * mini-agent's state folder (`$MINI_AGENT_HOME`). Every file tool refuses any path under it
   * (`path is inside mini-agent's state folder`), symlinks to it included, and walks (`find`,
   * `grep`) never enter it, so a workspace that holds it cannot be used to read or forge sessions.
   */
  stateDir?: string;
  /**
   * What the agent has seen of each file (`SeenFiles`), shared by `read`, `write` and `edit`: a
   * fresh one by default, so new tools (a resumed session) have seen nothing. Pass one in to
   * `clear()` it when the model's memory is cut (a compaction).
   */
  seen?: SeenFiles;
  /**
   * Whether the call now running may change a protected file, given its real path: git's
   * configuration and hooks (`.git/config`, `.git/hooks/**`, a `.git` file) and mini-agent's
   * project files (`.mcp.json`, `.mini-agent/**`, `.agents/skills/**`, `.claude/skills/**`).
   * `write` and `edit` ask it with the path they actually open, so a link to such a file is that
   * file; by default they refuse them all. The CLI answers yes for the one file the user approved.
   */
  protectedWrites?: ProtectedWrites;
  /**
   * Files this session protects beyond that set, by real path, with why (the CLI's: the files a
   * hook runs), in the one protected set (`MoreProtected`): `write` and `edit` treat them as
   * protected files, and bash's sandbox keeps them read-only and puts them back after a command.
   */
  moreProtected?: MoreProtected;
  /**
   * Real paths of folders outside the workspace that `read`, `ls`, `find` and `grep` may open
   * too, read-only (the registered skill folders), asked for each call. `write` and `edit` never
   * get them.
   */
  readOnlyRoots?: () => readonly string[];
}

/**
 * The built-in tools bound to one workspace folder: `read`, `ls`, `find`, `grep` (read-only),
 * `write`, `edit` and `bash`. Every path goes through `workspacePath`. `edit` and `write` replace
 * an existing file only when its content is what `read` (or their own write) last showed. Whether a call may run is
 * the approval policy's business (`denyBashByDefault` denies `bash`), not the tools'.
 */
export { SeenFiles };

export function createWorkspaceTools(root: string, options: WorkspaceToolsOptions = {}): Tool[] {
  const boundary = { stateDir: options.stateDir };
  const reading = { ...boundary, readOnlyRoots: options.readOnlyRoots };
  const seen = options.seen ?? new SeenFiles();
  return [
    readTool(root, seen, reading),
    lsTool(root, reading),
    findTool(root, reading),
    grepTool(root, reading),
    writeTool(root, seen, boundary, options.protectedWrites, options.moreProtected),
    editTool(root, seen, boundary, options.protectedWrites, options.moreProtected),
    bashTool(root, {
      ...options.bash,
      ...(options.moreProtected && { moreProtected: options.moreProtected }),
    }),
  ];
}
