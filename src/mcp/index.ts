import { type McpServerConfig, parseMcpConfig } from "./config.js";
import { loadSdk } from "./sdk.js";
import { McpServerConnection, type McpServerStatus, type ServerOptions } from "./server.js";
import type { McpTool } from "./tools.js";

/**
 * The library entry of MCP: connect the configured servers, get their tools as `Tool`s. What
 * calls it decides which servers may run (a project's `.mcp.json` only once trusted); this
 * function runs what it is given.
 */

export interface ConnectMcpOptions {
  /** The agent's environment: servers get it without its secret variables, plus their `env`. */
  env?: NodeJS.ProcessEnv;
  /** Where a relative `cwd` of an entry starts (default: the process's working folder). */
  cwd?: string;
  /** Per server, how long the first start may take before it is reported late (default 30 s). */
  startTimeoutMs?: number;
  /** How long a late start may go on before it fails (default 120 s). */
  lateLimitMs?: number;
  /** Per call, how long without an answer or progress before it times out (default 60 s). */
  callTimeoutMs?: number;
  /** Per call, the most it may take even with progress (default 10 min). */
  maxCallMs?: number;
  /** How many times a crashed server is restarted, at its next call (default 3). */
  maxRestarts?: number;
  /** Characters of one server's `instructions` kept (default 2000). */
  instructionChars?: number;
  /** Each change of a server's status, as it happens (late, up, failed, restarted). */
  onStatus?: (status: McpServerStatus) => void;
  /** Progress notifications of running calls. */
  onProgress?: ServerOptions["onProgress"];
  /**
   * The protocol revision to speak: `2025-11-25` (the default, with the initialize handshake) or
   * exactly `2026-07-28` (stateless, per-request metadata; a server that does not speak it fails).
   */
  protocolVersion?: McpProtocolVersion;
  /**
   * Before every start and restart of a server (a crashed one restarts at its next call): why it
   * must not start now, or `undefined`. The CLI checks here that a project server's program is
   * still what was trusted; a reason fails that start, and the call's receipt says it.
   */
  checkStart?: ServerOptions["checkStart"];
  /** For tests: the wait of each shutdown step (stdin closed, SIGTERM) before the next. */
  closeGraceMs?: number;
}

/** The protocol revisions the client can be pinned to. */
export type McpProtocolVersion = "2025-11-25" | "2026-07-28";

export interface McpServers {
  /**
   * The tools of every server that is up (or crashed and restartable), sorted by name; read it
   * at each turn boundary: a late server's tools appear once it is up.
   */
  tools(): McpTool[];
  /** One status per configured server, sorted by name. */
  status(): McpServerStatus[];
  /** Each running server's `instructions` (capped), for the system prompt. */
  instructions(): { server: string; text: string }[];
  /** Ends every server: stdin closed, then SIGTERM, then SIGKILL. */
  close(): Promise<void>;
}

/** The MCP configuration a library caller passes: the `.mcp.json` shape. */
export interface McpConfig {
  mcpServers: Record<string, unknown>;
}

/**
 * Starts every server of `config` in parallel and resolves once each is up, has failed, or has
 * passed its start timeout (a late server keeps starting; see `McpServers.tools`). A server that
 * cannot start is a status, never an exception; an invalid `config` throws one line naming the
 * server and field. `config` may also be servers already parsed and merged (`McpServerConfig[]`).
 */
export async function connectMcpServers(
  config: McpConfig | readonly McpServerConfig[],
  options: ConnectMcpOptions = {},
): Promise<McpServers> {
  const servers = Array.isArray(config) ? config : configured(config as McpConfig);
  const listeners = options.onStatus;
  const resolved: ServerOptions = {
    env: options.env ?? process.env,
    cwd: options.cwd ?? process.cwd(),
    startTimeoutMs: options.startTimeoutMs ?? 30_000,
    lateLimitMs: options.lateLimitMs ?? 120_000,
    callTimeoutMs: options.callTimeoutMs ?? 60_000,
    maxCallMs: options.maxCallMs ?? 600_000,
    maxRestarts: options.maxRestarts ?? 3,
    maxMessageBytes: 32 * 1024 * 1024,
    closeGraceMs: options.closeGraceMs ?? 2000,
    instructionChars: options.instructionChars ?? 2000,
    onStatus: (status) => listeners?.(status),
    ...(options.protocolVersion && { protocolVersion: options.protocolVersion }),
    ...(options.onProgress && { onProgress: options.onProgress }),
    ...(options.checkStart && { checkStart: options.checkStart }),
  };
  const sdk = servers.length > 0 ? await loadSdk() : undefined;
  const connections = sdk
    ? [...servers]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map((server) => new McpServerConnection(server, sdk, resolved))
    : [];
  await Promise.all(connections.map((connection) => connection.start()));
  return {
    tools: () => connections.flatMap((connection) => connection.tools),
    status: () => connections.map((connection) => connection.status()),
    instructions: () =>
      connections
        .filter((connection) => connection.instructions !== "")
        .map((connection) => ({ server: connection.name, text: connection.instructions })),
    close: async () => {
      await Promise.all(connections.map((connection) => connection.close()));
    },
  };
}

function configured(config: McpConfig): McpServerConfig[] {
  const { servers, problems } = parseMcpConfig(config, "<mcp config>");
  if (problems[0] !== undefined) throw new Error(problems[0]);
  return servers;
}

export type { McpServerConfig } from "./config.js";
export type { McpServerState, McpServerStatus } from "./server.js";
export type { McpTool, McpToolAnnotations } from "./tools.js";
