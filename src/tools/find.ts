import { stat } from "node:fs/promises";
import { Type } from "@sinclair/typebox";
import type { Tool } from "../types.js";
import { defineTool, ToolError } from "./define.js";
import { BoundedLines, limits } from "./limits.js";
import type { BoundaryOptions } from "./path.js";
import { globMatcher } from "./search/patterns.js";
import { loadRE2 } from "./search/re2.js";
import { Skips } from "./search/skips.js";
import { walk } from "./search/walk.js";
import { resolveShown } from "./shown-path.js";

export function findTool(root: string, boundary: BoundaryOptions = {}): Tool {
  return defineTool({
    name: "find",
    description:
      "Find files by glob, relative to path (src/**/*.ts; a pattern without / matches names at any depth; {a,b} alternation). Skips .git and .gitignored files.",
    input: Type.Object({
      pattern: Type.String({ minLength: 1, description: "Glob, relative to path" }),
      path: Type.Optional(Type.String({ description: "Folder to search (default .)" })),
    }),
    async run({ pattern, path = "." }, signal) {
      await loadRE2();
      const matches = globMatcher(pattern);
      const {
        path: start,
        realRoot,
        shown,
        state,
        prefix,
      } = await resolveShown(root, path, boundary);
      if (!(await stat(start)).isDirectory()) throw new ToolError(`${shown} is not a folder`);
      const found = new BoundedLines(limits.listEntries);
      const skips = new Skips();
      for await (const entry of walk(realRoot, start, { signal, skips, exclude: state })) {
        if (matches(entry.sub))
          found.add(`${prefix}${entry.rel}${entry.dirent.isDirectory() ? "/" : ""}`);
      }
      const notes = [
        found.left > 0 ? `[truncated: ${found.left} more matches]` : undefined,
        skips.note(),
      ].filter((note) => note !== undefined);
      const lines = found.lines.length === 0 ? [`no files match ${pattern}`] : found.lines;
      return { content: [...lines, ...notes].join("\n") };
    },
  });
}
