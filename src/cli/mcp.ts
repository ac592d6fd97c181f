import type { McpServerConfig } from "../mcp/config.js";
import { trustEntriesOf } from "../mcp/config.js";
import type { McpServerStatus, McpServers, McpTool } from "../mcp/index.js";
import { visible } from "../visible.js";
import { mcpSources, type SourcedServer } from "./mcp-sources.js";

/**
 * A run's MCP servers: read from their sources, the untrusted project ones asked about (on a
 * terminal) or skipped with one line, the rest connected. Loaded by `import()` from `prepare`,
 * and the SDK only when a server is to start: a run without MCP configuration loads neither.
 */

export interface RunMcp {
  /** The tools of the servers up now, in their stable order. */
  tools(): McpTool[];
  /** The servers' instructions for the system prompt (each capped by the client). */
  instructions(): string;
  /** Status lines of the servers whose status changed since the last call. */
  changes(): string[];
  /** A tool's annotations in words, for the approval question (hints, never consent). */
  hints(tool: string): string | undefined;
  close(): Promise<void>;
}

export interface McpRunOptions {
  workspace: string;
  state: string;
  flagFiles: readonly string[];
  env: NodeJS.ProcessEnv;
  /** Asks the person at the terminal; absent when no one can be asked. */
  confirm?: (question: string) => Promise<boolean>;
  tell: (line: string) => void;
}

/** Reads, trusts and connects; `undefined` when no server is configured (nothing is loaded). */
export async function startMcp(options: McpRunOptions): Promise<RunMcp | undefined> {
  const sources = await mcpSources(options);
  for (const warning of sources.warnings) options.tell(`mini-agent: warning: ${warning}\n`);
  const servers: McpServerConfig[] = [];
  for (const sourced of sources.servers) {
    if (sourced.trusted || (await trusted(sourced, options, sources.trust))) {
      servers.push(sourced.server);
    } else {
      options.tell(
        `mini-agent: MCP server "${sourced.server.name}" of ${sourced.server.file} skipped: not trusted (mini-agent mcp trust ${sourced.server.name})\n`,
      );
    }
  }
  if (servers.length === 0) return undefined;
  const { connectMcpServers } = await import("../mcp/index.js");
  const shown = new Map<string, string>();
  const connected = await connectMcpServers(servers, { env: options.env, cwd: options.workspace });
  return {
    tools: () => connected.tools(),
    instructions: () => instructionsText(connected),
    changes: () => {
      const lines: string[] = [];
      for (const status of connected.status()) {
        const line = statusLine(status);
        if (shown.get(status.name) !== line) lines.push(line);
        shown.set(status.name, line);
      }
      return lines;
    },
    hints: (tool) => hintsOf(connected.tools().find((known) => known.spec.name === tool)),
    close: () => connected.close(),
  };
}

/** Asks whether to trust one project server; a yes is recorded by its entry's hash. */
async function trusted(
  sourced: SourcedServer,
  options: McpRunOptions,
  trust: { trust(entries: ReturnType<typeof trustEntriesOf>): Promise<void> },
): Promise<boolean> {
  if (!options.confirm) return false;
  const { server } = sourced;
  const question = `${visible(server.file)} asks to start the MCP server "${server.name}": ${visible(serverLine(server))}\nTrust it (recorded for this entry; a changed entry asks again)?`;
  if (!(await options.confirm(question))) return false;
  await trust.trust(trustEntriesOf([server]));
  return true;
}

/** The command line of a stdio server, the URL of an HTTP one (before `${}` expansion). */
export function serverLine(server: McpServerConfig): string {
  const { entry } = server;
  if (entry.type === "http") return entry.url;
  return [entry.command, ...(entry.args ?? [])].join(" ");
}

/** `mcp server NAME: up, 3 tools` or `… failed: reason (last stderr line)`. */
export function statusLine(status: McpServerStatus): string {
  const base = `MCP server "${status.name}": ${status.late && status.state === "starting" ? "late" : status.state}`;
  if (status.state === "up") return `${base}, ${status.tools} tool(s)`;
  const last = status.stderr.at(-1);
  const reason = status.reason === undefined ? "" : `: ${status.reason}`;
  return visible(`${base}${reason}${last === undefined ? "" : ` (stderr: ${last})`}`);
}

function instructionsText(connected: McpServers): string {
  const parts = connected
    .instructions()
    .map(({ server, text }) => `## MCP server "${server}"\n\n${text}`);
  return parts.length === 0
    ? ""
    : `\n\n# Instructions of the connected MCP servers\n\n${parts.join("\n\n")}`;
}

function hintsOf(tool: McpTool | undefined): string | undefined {
  const notes = tool?.mcp.annotations;
  if (!notes) return undefined;
  const words = [
    notes.readOnlyHint === true && "read-only",
    notes.destructiveHint === true && "destructive",
    notes.destructiveHint === false && "not destructive",
    notes.idempotentHint === true && "idempotent",
    notes.openWorldHint === true && "reaches outside systems",
  ].filter((word): word is string => typeof word === "string");
  return words.length === 0 ? undefined : words.join(", ");
}
