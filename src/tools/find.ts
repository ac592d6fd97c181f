import { stat } from "node:fs/promises";
import { Type } from "@sinclair/typebox";
import picomatch from "picomatch";
import type { Tool } from "../types.js";
import { defineTool, ToolError } from "./define.js";
import { limits } from "./limits.js";
import { resolveInWorkspace } from "./path.js";
import { walk } from "./walk.js";

export function findTool(root: string): Tool {
  return defineTool({
    name: "find",
    description:
      "Find files by glob (src/**/*.ts; a pattern without / matches names at any depth). Skips .git and .gitignored files.",
    input: Type.Object({
      pattern: Type.String({ minLength: 1, description: "Glob" }),
      path: Type.Optional(Type.String({ description: "Folder to search (default .)" })),
    }),
    async run({ pattern, path = "." }, signal) {
      const { path: start, realRoot, shown } = await resolveInWorkspace(root, path);
      if (!(await stat(start)).isDirectory()) throw new ToolError(`${shown} is not a folder`);
      const matches = globMatcher(pattern);
      const found: string[] = [];
      let more = 0;
      for await (const entry of walk(realRoot, start, signal)) {
        const rel = shown === "." ? entry.rel : entry.rel.slice(shown.length + 1);
        if (!matches(rel)) continue;
        if (found.length < limits.listEntries)
          found.push(entry.dirent.isDirectory() ? `${entry.rel}/` : entry.rel);
        else more++;
      }
      if (found.length === 0) return { content: `no files match ${pattern}` };
      return {
        content: [...found, ...(more > 0 ? [`[truncated: ${more} more matches]`] : [])].join("\n"),
      };
    },
  });
}

/** A picomatch matcher; a pattern without `/` matches base names, as `find -name` does. */
export function globMatcher(pattern: string): (path: string) => boolean {
  try {
    return picomatch(pattern, {
      dot: true,
      basename: !pattern.includes("/"),
      strictBrackets: true,
    });
  } catch (error) {
    throw new ToolError(`invalid glob ${JSON.stringify(pattern)}: ${(error as Error).message}`);
  }
}
