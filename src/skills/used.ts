import { isAbsolute, resolve } from "node:path";

/**
 * The file a `read` of `path` opened, as a skill's use is told from the receipts (after a
 * compaction, in an export): an absolute path as it is, a relative one resolved in the workspace.
 * A skill counts as read when this is its `SKILL.md`'s location.
 */
export function readTarget(path: string, workspace: string): string {
  return isAbsolute(path) ? path : resolve(workspace, path);
}
