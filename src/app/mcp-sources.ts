import { homedir } from "node:os";
import { join } from "node:path";
import { readConfigFile } from "../config/load.js";
import { ConfigError, refuseKeys } from "../config/parse.js";
import {
  type McpServerConfig,
  mergeMcpServers,
  parseMcpConfigText,
  splitByTrust,
} from "../mcp/config.js";
import { coverageOf, withPrograms } from "../mcp/programs.js";
import { projectRoot } from "../project/root.js";
import { loadTrust, type WorkspaceTrust } from "../trust/trust.js";
import { UsageError } from "./exit.js";

/**
 * Where a run's MCP servers come from, highest precedence first: an editor's (over ACP) and
 * `--mcp-config` files, the project's `.mcp.json` at the project root, the user's file in the
 * state folder. A bad flag or
 * user file is a usage error (one line: file, server, field); the project file is the project's,
 * maybe a cloned one: its broken entries are only listed, and none runs before it is trusted.
 */

export type McpSource = "flag" | "project" | "user";

export interface SourcedServer {
  server: McpServerConfig;
  source: McpSource;
  /** Project servers: whether the trust record holds this entry's hash. Others: always true. */
  trusted: boolean;
}

export interface McpSources {
  /** Every configured server after the merge, sorted by name. */
  servers: SourcedServer[];
  /** Shadowed names, and each problem of the project file. */
  warnings: string[];
  /** The project's `.mcp.json`, its folder (what a server's `programs` are relative to), and its trust record. */
  projectFile: string;
  root: string;
  trust: WorkspaceTrust;
  /**
   * Before every start and restart: a project server starts only while the trust record holds
   * its entry's hash with its files as they are now (`connectMcpServers`' `checkStart`).
   */
  checkStart: (server: McpServerConfig) => Promise<string | undefined>;
}

/** The user's servers: `mcp.json` in the state folder (none when it is absent). */
export async function userMcpServers(state: string): Promise<McpServerConfig[]> {
  return strict(join(state, "mcp.json"), "if-present");
}

/**
 * The project's `.mcp.json`: its valid servers and a line per problem, never an exception. Each
 * server's hash covers the workspace files its command line names (`withPrograms`).
 */
export async function projectMcpServers(
  root: string,
  workspace: string,
): Promise<{ file: string; servers: McpServerConfig[]; problems: string[]; found: boolean }> {
  const file = join(root, ".mcp.json");
  // Only a regular UTF-8 file of at most 1 MiB, never through a link: the configuration's rule.
  let text: string | undefined;
  try {
    text = await readConfigFile(file, false);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { file, servers: [], problems: [`${error.message}: skipped`], found: true };
  }
  if (text === undefined) return { file, servers: [], problems: [], found: false };
  const { servers, problems } = parseMcpConfigText(text, file);
  const covered = await Promise.all(
    servers.map((server) => withPrograms(server, { root, workspace, env: process.env })),
  );
  return { file, servers: covered, problems, found: true };
}

/** The project root's folder of a workspace (the AGENTS.md rule). */
export async function mcpProjectRoot(workspace: string): Promise<string> {
  return (await projectRoot(workspace, { home: homedir() })).path;
}

export interface SourceOptions {
  workspace: string;
  state: string;
  flagFiles: readonly string[];
  /** Servers given whole, as the flags' files give theirs (an editor's, over ACP): first of all. */
  given?: readonly McpServerConfig[];
}

/** Reads every source and merges them; throws a `UsageError` for a bad flag or user file. */
export async function mcpSources(options: SourceOptions): Promise<McpSources> {
  const flags: McpServerConfig[] = [...(options.given ?? [])];
  for (const file of options.flagFiles) flags.push(...(await strict(file, "required")));
  const user = await userMcpServers(options.state);
  const root = await mcpProjectRoot(options.workspace);
  const project = await projectMcpServers(root, options.workspace);
  const trust = await loadTrust(options.state, root);
  const { trusted, untrusted } = splitByTrust(project.servers, trust);
  // An untrusted project entry never takes the place of the user's server of the same name.
  const merged = mergeMcpServers([
    { servers: flags },
    { servers: trusted },
    { servers: user },
    { servers: untrusted },
  ]);
  const sourceOf = (server: McpServerConfig): McpSource =>
    flags.includes(server) ? "flag" : project.servers.includes(server) ? "project" : "user";
  const servers = merged.servers.map((server) => {
    const source = sourceOf(server);
    return { server, source, trusted: source !== "project" || trusted.includes(server) };
  });
  const warnings = [...merged.warnings, ...project.problems];
  if (trust.warning !== undefined) warnings.push(trust.warning);
  const fromProject = new Set(project.servers);
  const checkStart = (server: McpServerConfig) =>
    fromProject.has(server)
      ? stillTrusted(server, { root, workspace: options.workspace }, options.state)
      : Promise.resolve(undefined);
  return { servers, warnings, projectFile: project.file, root, trust, checkStart };
}

/**
 * Why a project server must not start now: its entry, with the workspace files its trust covers
 * as they are now, is not what the trust record holds (the model rewrote `srv.mjs` after the
 * server started, then made it exit). The record is read again: a user who trusted the changed
 * server meanwhile (`mini-agent mcp trust NAME`) is heard.
 */
async function stillTrusted(
  server: McpServerConfig,
  folders: { root: string; workspace: string },
  state: string,
): Promise<string | undefined> {
  const now = await coverageOf(server.entry, { ...folders, env: process.env });
  const trust = await loadTrust(state, folders.root);
  if (trust.isTrusted("mcp", server.name, now.hash)) return undefined;
  const files = [...new Set([...(server.programs ?? []), ...now.programs])].sort();
  const what = files.length > 0 ? `its files (${files.join(", ")})` : "its entry";
  return `not started: ${what} changed since it was trusted; mini-agent mcp trust ${server.name} trusts it as it is now`;
}

/**
 * A file of the user's (named by `--mcp-config`, or the one in the state folder when present):
 * a link is followed, and every problem stops the run, the first one being the error; a value
 * that looks like a key is one (as in `config.json`).
 */
async function strict(file: string, need: "required" | "if-present"): Promise<McpServerConfig[]> {
  let text: string | undefined;
  try {
    text = await readConfigFile(file, true);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  if (text === undefined && need === "if-present") return [];
  if (text === undefined) throw new UsageError(`${file}: no such file`);
  const { servers, problems } = parseMcpConfigText(text, file);
  if (problems[0] !== undefined) throw new UsageError(problems[0]);
  try {
    refuseKeys(JSON.parse(text), file);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  return servers;
}

/** A `.mcp.json` is a few entries: a bigger one is never read (it is read on every run). */
