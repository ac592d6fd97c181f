import type { Journal } from "../runner/journal.js";
import type { Tool } from "../types.js";
import type { RunMcp } from "./mcp.js";

/**
 * A turn's start with MCP servers, the same for the terminal and an editor: the tools of the
 * servers up now join `tools` after the workspace's own (`own`), each server whose status changed
 * is recorded (the session and every front end hear it), and the servers' instructions are
 * returned for the system prompt. Without servers, nothing changes and nothing is added. A
 * change during a call (the server exited, its restart was refused) is recorded when the call
 * ends, not at the next turn: the receipt and the status say it together.
 */
export async function mcpTurnStart(
  mcp: RunMcp | undefined,
  tools: Tool[],
  own: readonly Tool[],
  journal: Journal,
): Promise<string> {
  if (!mcp) return "";
  const told = async () => {
    for (const status of mcp.changes()) await journal.record({ type: "mcp_status", status });
  };
  const telling = (tool: Tool): Tool => ({
    ...tool,
    execute: async (input, signal) => {
      const result = await tool.execute(input, signal);
      await told();
      return result;
    },
  });
  tools.splice(0, tools.length, ...own, ...mcp.tools().map(telling));
  await told();
  return mcp.instructions();
}
