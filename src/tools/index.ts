import type { Tool } from "../types.js";
import { type BashOptions, bashTool } from "./bash.js";
import { editTool } from "./edit.js";
import { findTool } from "./find.js";
import { grepTool } from "./grep.js";
import { lsTool } from "./ls.js";
import { readTool } from "./read.js";
import { writeTool } from "./write.js";

export interface WorkspaceToolsOptions {
  bash?: BashOptions;
  /**
   * mini-agent's state folder (`$MINI_AGENT_HOME`). Every file tool refuses any path under it
   * (`path is inside mini-agent's state folder`), symlinks to it included, and walks (`find`,
   * `grep`) never enter it, so a workspace that holds it cannot be used to read or forge sessions.
   */
  stateDir?: string;
}

/**
 * The built-in tools bound to one workspace folder: `read`, `ls`, `find`, `grep` (read-only),
 * `write`, `edit` and `bash`. Every path goes through `workspacePath`. Whether a call may run is
 * the approval policy's business (`denyBashByDefault` denies `bash`), not the tools'.
 */
export function createWorkspaceTools(root: string, options: WorkspaceToolsOptions = {}): Tool[] {
  const boundary = { stateDir: options.stateDir };
  return [
    readTool(root, boundary),
    lsTool(root, boundary),
    findTool(root, boundary),
    grepTool(root, boundary),
    writeTool(root, boundary),
    editTool(root, boundary),
    bashTool(root, options.bash),
  ];
}
