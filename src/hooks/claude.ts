import { resolve } from "node:path";

/**
 * What a hook reads on stdin, in Claude Code's names, so a script written for Claude Code works
 * unchanged: its tool names (`Bash`, `Read`, `Write`, `Edit`, `Grep`, `Glob`, `LS`; an MCP tool
 * keeps its `mcp__server__tool`) and its field names in `tool_input`, with absolute paths. Ours
 * go beside them: `mini_agent_tool` and `mini_agent_input`, the call as the model made it.
 */

/** Our tool → Claude Code's name for it. A tool with none (`plan`, MCP tools) keeps its own. */
const CLAUDE_NAMES: Readonly<Record<string, string>> = {
  bash: "Bash",
  read: "Read",
  write: "Write",
  edit: "Edit",
  grep: "Grep",
  find: "Glob",
  ls: "LS",
};

export function claudeToolName(tool: string): string {
  return Object.hasOwn(CLAUDE_NAMES, tool) ? (CLAUDE_NAMES[tool] ?? tool) : tool;
}

/**
 * A call's input in Claude Code's field names (`file_path`, `old_string`, `new_string`,
 * `command`), paths made absolute from the workspace. A field the model did not give is left
 * out; one of the wrong kind is passed on as it is (the tool refuses it after).
 */
export function claudeToolInput(
  tool: string,
  input: Readonly<Record<string, unknown>>,
  workspace: string,
): Record<string, unknown> {
  const path = (value: unknown) => (typeof value === "string" ? resolve(workspace, value) : value);
  const fields = (pairs: [string, unknown][]) =>
    Object.fromEntries(pairs.filter(([, value]) => value !== undefined));
  switch (tool) {
    case "bash":
      return fields([
        ["command", input.command],
        // Claude Code's Bash timeout is in milliseconds; ours in seconds.
        ["timeout", typeof input.timeout === "number" ? input.timeout * 1000 : input.timeout],
      ]);
    case "read":
      return fields([
        ["file_path", path(input.path)],
        ["offset", input.offset],
        ["limit", input.limit],
      ]);
    case "write":
      return fields([
        ["file_path", path(input.path)],
        ["content", input.content],
      ]);
    case "edit":
      return fields([
        ["file_path", path(input.path)],
        ["old_string", input.oldText],
        ["new_string", input.newText],
        ["replace_all", input.replaceAll],
      ]);
    case "grep":
      return fields([
        ["pattern", input.pattern],
        ["path", path(input.path ?? ".")],
        ["glob", input.glob],
        ["-i", input.ignoreCase],
      ]);
    case "find":
      return fields([
        ["pattern", input.pattern],
        ["path", path(input.path ?? ".")],
      ]);
    case "ls":
      return fields([["path", path(input.path ?? ".")]]);
    default:
      return { ...input };
  }
}
