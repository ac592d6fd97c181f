import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { Type } from "@sinclair/typebox";
import type { Tool } from "../types.js";
import { defineTool, ToolError } from "./define.js";
import { globMatcher } from "./find.js";
import { limits, truncated } from "./limits.js";
import { resolveInWorkspace, workspacePath } from "./path.js";
import { lineSearch, searchFile } from "./scan.js";
import { walk } from "./walk.js";

export function grepTool(root: string): Tool {
  return defineTool({
    name: "grep",
    description:
      "Search file contents with a JavaScript regular expression. Prints file:line: text. Skips .git, .gitignored and binary files.",
    input: Type.Object({
      pattern: Type.String({ minLength: 1, description: "Regular expression" }),
      path: Type.Optional(Type.String({ description: "File or folder (default .)" })),
      glob: Type.Optional(Type.String({ description: "Only files matching this glob, e.g. *.ts" })),
      ignoreCase: Type.Optional(Type.Boolean()),
    }),
    async run({ pattern, path = ".", glob, ignoreCase = false }, signal) {
      let regex: RegExp;
      try {
        regex = new RegExp(pattern, ignoreCase ? "i" : "");
      } catch (error) {
        throw new ToolError(`invalid grep pattern: ${(error as Error).message}`);
      }
      const wanted = glob === undefined ? () => true : globMatcher(glob);
      const { path: start, realRoot, shown } = await resolveInWorkspace(root, path);
      const files = (await stat(start)).isDirectory()
        ? filesUnder(realRoot, start, signal)
        : single(start, shown);

      const out: string[] = [];
      let chars = 0;
      let full = false;
      let seen = 0;
      for await (const file of files) {
        if (!wanted(glob?.includes("/") ? file.rel : basename(file.rel))) continue;
        // Small files are read synchronously; let a Ctrl-C through now and then.
        if (++seen % 256 === 0) await new Promise((resolve) => setImmediate(resolve));
        const search = lineSearch(regex, (lineNo, line) => {
          const text =
            line.length > limits.grepLineChars
              ? `${line.slice(0, limits.grepLineChars)} ${truncated(line.length - limits.grepLineChars)}`
              : line;
          const entry = `${file.rel}:${lineNo}: ${text}`;
          if (out.length === limits.grepMatches || chars + entry.length > limits.outputChars) {
            full = true;
            return false;
          }
          out.push(entry);
          chars += entry.length + 1;
          return true;
        });
        if ((await searchFile(file.path, search, signal)) === "stopped") break;
      }
      if (out.length === 0) return { content: `no matches for ${pattern}` };
      if (full)
        out.push(
          `[truncated: stopped after ${out.length} matches; narrow the pattern, path or glob]`,
        );
      return { content: out.join("\n") };
    },
  });
}

async function* single(path: string, rel: string) {
  yield { path, rel };
}

/** Regular files under `start`; a symlink counts only when its real target is in the workspace. */
async function* filesUnder(realRoot: string, start: string, signal?: AbortSignal) {
  for await (const entry of walk(realRoot, start, signal)) {
    if (entry.dirent.isFile()) yield { path: entry.path, rel: entry.rel };
    else if (entry.dirent.isSymbolicLink()) {
      const target = await workspacePath(realRoot, entry.path).catch(() => undefined);
      if (target && (await stat(target)).isFile()) {
        yield { path: target, rel: entry.rel };
      }
    }
  }
}
