import { type McpServer, RequestError } from "@agentclientprotocol/sdk";
import { type McpServerConfig, parseMcpConfig } from "../mcp/config.js";

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
