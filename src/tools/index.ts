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
}

/**
 * The built-in tools bound to one workspace folder: `read`, `ls`, `find`, `grep` (read-only),
 * `write`, `edit` and `bash`. Every path goes through `workspacePath`. Whether a call may run is
 * the approval policy's business (`denyBashByDefault` denies `bash`), not the tools'.
 */
export function createWorkspaceTools(root: string, options: WorkspaceToolsOptions = {}): Tool[] {
  return [
    readTool(root),
    lsTool(root),
    findTool(root),
    grepTool(root),
    writeTool(root),
    editTool(root),
    bashTool(root, options.bash),
  ];
}
