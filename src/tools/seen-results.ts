import { relative } from "node:path";
import { realOr } from "../paths.js";
import type { Tool, ToolResult } from "../types.js";
import { SEEING_TOOLS, type SeenFiles } from "./seen.js";

/**
 * The tools, with each successful `read`, `write` and `edit` result saying what the agent has now
 * seen of its file (`ToolResult.seen`): what the call recorded in `seen`, the file's real path
 * relative to the workspace `root` and its content hash. A session keeps it with the result, and
 * a resumed session takes it back (`SeenFiles.recall`). Other tools, and failures, pass as they
 * are. Calls run one at a time, so what `seen` recorded during a call is that call's.
 */
export function withSeenResults(tools: readonly Tool[], seen: SeenFiles, root: string): Tool[] {
  let realRoot: string | undefined;
  const noted = (result: ToolResult, before: SeenFiles["latest"]): ToolResult => {
    const saw = seen.latest;
    if (result.isError || saw === undefined || saw === before) return result;
    realRoot ??= realOr(root);
    return { ...result, seen: { path: relative(realRoot, saw.path), sha256: saw.content.hash } };
  };
  return tools.map((tool) => {
    if (!SEEING_TOOLS.has(tool.spec.name)) return tool;
    return {
      spec: tool.spec,
      execute: async (input, signal) => {
        const before = seen.latest;
        return noted(await tool.execute(input, signal), before);
      },
    };
  });
}
