import { stat } from "node:fs/promises";
import { Type } from "@sinclair/typebox";
import type { Tool } from "../types.js";
import { defineTool, ToolError } from "./define.js";
import { BoundedLines, limits } from "./limits.js";
import { showName } from "./names.js";
import type { BoundaryOptions } from "./path.js";
import { Pace } from "./search/pace.js";
import { Skips } from "./search/skips.js";
import { listFolder, skippedIn } from "./search/walk.js";
import { resolveShown } from "./shown-path.js";

export function lsTool(root: string, boundary: BoundaryOptions = {}): Tool {
  return defineTool({
    name: "ls",
    description:
      "List a folder: folders end with /, symlinks with @. Skips .git and .gitignored entries.",
    input: Type.Object({
      path: Type.Optional(Type.String({ description: "Folder in the workspace (default .)" })),
    }),
    async run({ path = "." }, signal) {
      const { path: dir, realRoot, shown, state } = await resolveShown(root, path, boundary);
      if (!(await stat(dir)).isDirectory())
        throw new ToolError(`${shown} is not a folder: use read`);
      const entries = await listFolder(Buffer.from(realRoot), dir, state);
      if (entries === "outside") throw new ToolError(`${shown} changed while in use: try again`);
      const skips = new Skips();
      const skipped = await skippedIn(realRoot, dir, { signal, skips });
      const pace = new Pace(signal);
      const names: string[] = [];
      let ignored = 0;
      for (const entry of entries) {
        await pace.step();
        const name = showName(entry.name);
        const isDir = entry.isDirectory();
        if (skipped(name, isDir)) {
          ignored++;
          continue;
        }
        names.push(isDir ? `${name}/` : entry.isSymbolicLink() ? `${name}@` : name);
      }
      names.sort();
      const listed = new BoundedLines(limits.listEntries);
      for (const name of names) listed.add(name);
      const notes = [
        listed.left > 0 ? `[truncated: ${listed.left} more entries]` : undefined,
        ignored > 0 ? `(${ignored} ignored entries not shown)` : undefined,
        skips.note(),
      ].filter((note) => note !== undefined);
      if (names.length === 0) notes.unshift("(empty folder)");
      return { content: [...listed.lines, ...notes].join("\n") };
    },
  });
}
