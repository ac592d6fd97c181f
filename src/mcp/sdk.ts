/**
 * The official MCP SDK, loaded only when a server is configured: a run without MCP never
 * reads it. The one place that names the package at run time.
 */
export type Sdk = Pick<
  typeof import("@modelcontextprotocol/client"),
  "Client" | "StreamableHTTPClientTransport" | "deserializeMessage" | "ProtocolError"
>;

let loading: Promise<Sdk> | undefined;

export function loadSdk(): Promise<Sdk> {
  loading ??= import("@modelcontextprotocol/client");
  return loading;
}
