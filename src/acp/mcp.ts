import { type McpServer, RequestError } from "@agentclientprotocol/sdk";
import type { RunMcp } from "../app/mcp.js";
import { type CliArgs, UsageError } from "../cli/args.js";
import { type McpServerConfig, parseMcpConfig } from "../mcp/config.js";
import { stateHome } from "../session/store.js";

/** Where the editor's servers say they came from, in their problems and in `mini-agent config`. */
const from = "the editor's mcpServers";

/**
 * The editor's MCP servers (`session/new`'s `mcpServers`) as configuration entries, checked as a
 * configuration file's are, their values taken as written (no `${}` is expanded: the editor
 * passes values, not templates). The editor's user configured them: they need no trust record. SSE,
 * a transport MCP has deprecated, is refused, and so is a name given twice or an entry the
 * configuration would refuse: each a one-line error of the request.
 */
export function editorServers(list: readonly McpServer[]): McpServerConfig[] {
  const names = new Set<string>();
  const entries: [string, unknown][] = [];
  for (const server of list) {
    if (names.has(server.name))
      throw invalidServers(`${from}: two servers are named ${JSON.stringify(server.name)}`);
    names.add(server.name);
    entries.push([server.name, entryOf(server)]);
  }
  const { servers, problems } = parseMcpConfig({ mcpServers: Object.fromEntries(entries) }, from);
  if (problems[0] !== undefined) throw invalidServers(problems[0]);
  return servers.map((server) => ({ ...server, literal: true }));
}

function entryOf(server: McpServer): unknown {
  if (!("type" in server)) {
    const env = Object.fromEntries(server.env.map((pair) => [pair.name, pair.value]));
    return { command: server.command, args: server.args, env };
  }
  if (server.type === "sse")
    throw invalidServers(
      `${from}: server ${JSON.stringify(server.name)}: SSE is not supported (mcpCapabilities.sse is false): use its Streamable HTTP address`,
    );
  const headers = Object.fromEntries(server.headers.map((pair) => [pair.name, pair.value]));
  return { type: "http", url: server.url, headers };
}

function invalidServers(message: string): RequestError {
  return RequestError.invalidParams(undefined, message);
}

/**
 * A session's MCP servers: the editor's, then the configured ones as a run of the CLI finds
 * them (an untrusted project server skipped, its status said at the first turn). `--no-mcp`
 * starts none. A bad configuration file is the request's error, in one line.
 */
export async function sessionMcp(
  args: CliArgs,
  workspace: string,
  list: readonly McpServer[],
  tell: (line: string) => void,
): Promise<RunMcp | undefined> {
  const given = editorServers(list);
  if (args.noMcp) return undefined;
  const { startMcp } = await import("../app/mcp.js");
  const options = { workspace, state: stateHome(process.env), flagFiles: args.mcpConfig, given };
  return await startMcp({ ...options, env: process.env, tell }).catch((error: unknown) => {
    if (error instanceof UsageError) throw RequestError.invalidParams(undefined, error.message);
    throw error;
  });
}
