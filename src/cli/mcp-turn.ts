import type { Journal } from "../runner/journal.js";
import type { Tool } from "../types.js";
import type { RunMcp } from "./mcp.js";

/**
 * A turn's start with MCP servers, the same for the terminal and an editor: the tools of the
 * servers up now join `tools` after the workspace's own (`own`), each server whose status changed
 * is recorded (the session and every front end hear it), and the servers' instructions are
 * returned for the system prompt. Without servers, nothing changes and nothing is added.
 */
export async function mcpTurnStart(
  mcp: RunMcp | undefined,
  tools: Tool[],
  own: readonly Tool[],
  journal: Journal,
): Promise<string> {
  if (!mcp) return "";
  tools.splice(0, tools.length, ...own, ...mcp.tools());
  for (const status of mcp.changes()) await journal.record({ type: "mcp_status", status });
  return mcp.instructions();
}
