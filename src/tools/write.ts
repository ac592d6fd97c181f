import { lstat } from "node:fs/promises";
import { Type } from "@sinclair/typebox";
import type { MoreProtected } from "../protected/files.js";
import type { Tool } from "../types.js";
import { defineTool, ToolError } from "./define.js";
import { writeAtomic } from "./files.js";
import { makeFolders, openResolved } from "./open.js";
import { type BoundaryOptions, resolveInWorkspace } from "./path.js";
import { type ProtectedWrites, refuseProtected } from "./protected.js";
import { digestFile, type SeenContent, type SeenFiles } from "./seen.js";
import { requireSeen, requireUnchanged } from "./stale.js";

/**
 * `write` replaces a whole file with the UTF-8 `content` given, whatever the file held before
 * (a file in another encoding included: it is the model's explicit choice of every byte).
 * An existing file must hold what the agent last saw (`seen`), and still hold it right before
 * the rename; a new file must still be absent then. What `write` wrote is then seen. A protected
 * file (`protectedWhy`) is written only when `approved` says so for its real path.
 */
export function writeTool(
  root: string,
  seen: SeenFiles,
  boundary: BoundaryOptions = {},
  approved?: ProtectedWrites,
  more?: MoreProtected,
): Tool {
  return defineTool({
    name: "write",
    description:
      "Create a file, or replace a whole file read (or written) in this session and unchanged since (parent folders are created). Prefer edit for changes.",
    input: Type.Object({
      path: Type.String({ description: "File path in the workspace" }),
      content: Type.String({ description: "The complete new content" }),
    }),
    async run({ path, content }, signal) {
      const target = await resolveInWorkspace(root, path, boundary);
      const { path: file, shown } = target;
      await refuseProtected(target, "write", approved, more);
      // The real path: a symlink here means the entry was swapped since it was resolved.
      const existing = await lstat(file).catch(() => undefined);
      if (existing?.isDirectory()) throw new ToolError(`${shown} is a folder`);
      if (target.folder) {
        throw new ToolError(
          existing
            ? `${shown} is not a folder`
            : `${shown}/ names a folder: write needs a file path`,
        );
      }
      if (existing && !existing.isFile() && !existing.isSymbolicLink())
        throw new ToolError(`${shown} is not a regular file`);
      let before: SeenContent | undefined;
      if (existing) {
        const opened = await openResolved(target);
        try {
          before = await digestFile(opened.handle, signal);
          await requireSeen(seen, opened, before, "write", signal);
        } finally {
          await opened.handle.close();
        }
      }
      await makeFolders(target);
      const written = await writeAtomic(target, content, {
        mode: existing?.isFile() ? existing.mode & 0o7777 : undefined,
        signal,
        beforeRename: () => requireUnchanged(target, before, "write", signal),
      });
      seen.record(file, written);
      const bytes = Buffer.byteLength(content);
      return { content: `${existing ? "replaced" : "created"} ${shown} (${bytes} bytes)` };
    },
  });
}
