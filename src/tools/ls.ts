import { readdir, stat } from "node:fs/promises";
import { Type } from "@sinclair/typebox";
import type { Tool } from "../types.js";
import { defineTool, ToolError } from "./define.js";
import { limits } from "./limits.js";
import { resolveInWorkspace } from "./path.js";
import { skippedIn } from "./walk.js";

export function lsTool(root: string): Tool {
  return defineTool({
    name: "ls",
    description: "List a folder: folders end with /. Skips .git and .gitignored entries.",
    input: Type.Object({
      path: Type.Optional(Type.String({ description: "Folder in the workspace (default .)" })),
    }),
    async run({ path = "." }) {
      const { path: dir, realRoot, shown } = await resolveInWorkspace(root, path);
      if (!(await stat(dir)).isDirectory())
        throw new ToolError(`${shown} is not a folder: use read`);
      const entries = await readdir(dir, { withFileTypes: true });
      const skipped = await skippedIn(realRoot, dir);
      const names: string[] = [];
      let ignored = 0;
      for (const entry of entries) {
        const isDir = entry.isDirectory();
        if (skipped(entry.name, isDir)) {
          ignored++;
          continue;
        }
        names.push(
          isDir ? `${entry.name}/` : entry.isSymbolicLink() ? `${entry.name}@` : entry.name,
        );
      }
      names.sort();
      const shownNames = names.slice(0, limits.listEntries);
      const notes = [];
      if (names.length > shownNames.length) {
        notes.push(`[truncated: ${names.length - shownNames.length} more entries]`);
      }
      if (ignored > 0) notes.push(`(${ignored} ignored entries not shown)`);
      if (names.length === 0) notes.unshift("(empty folder)");
      return { content: [...shownNames, ...notes].join("\n") };
    },
  });
}
