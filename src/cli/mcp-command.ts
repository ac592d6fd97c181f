import { runStatus, serverLine } from "../app/mcp.js";
import {
  mcpProjectRoot,
  mcpSources,
  projectMcpServers,
  type SourcedServer,
} from "../app/mcp-sources.js";
import { mcpStatusLine } from "../app/notices.js";
import { trustEntriesOf } from "../mcp/config.js";
import type { McpServerStatus } from "../mcp/index.js";
import { stateHome } from "../session/store.js";
import { visible } from "../visible.js";
import { type CliArgs, exitCodes, UsageError } from "./args.js";

/**
 * `mini-agent mcp list | trust NAME | untrust NAME`. `list` connects the servers that may run
 * (flags, the user's file, trusted project entries) to show their status and tools; a project
 * server not trusted is listed, never started.
 */
export async function mcpCommand(args: CliArgs, workspace: string): Promise<number> {
  const [verb, name, ...rest] = args.mcpCommand ?? [];
  const usage = "usage: mini-agent mcp list | mcp trust NAME | mcp untrust NAME";
  if (verb === "list" && name === undefined) return await list(args, workspace);
  if ((verb === "trust" || verb === "untrust") && name === "")
    throw new UsageError(`mcp ${verb} needs a server's name`);
  if ((verb === "trust" || verb === "untrust") && name !== undefined && rest.length === 0)
    return await trustOne(verb, name, workspace);
  throw new UsageError(usage);
}

async function list(args: CliArgs, workspace: string): Promise<number> {
  const state = stateHome(process.env);
  const sources = await mcpSources({ workspace, state, flagFiles: args.mcpConfig });
  for (const warning of sources.warnings)
    process.stderr.write(`mini-agent: warning: ${visible(warning)}\n`);
  if (sources.servers.length === 0) {
    const why =
      sources.warnings.length > 0
        ? "the warnings above say why"
        : `${visible(sources.projectFile)} has none`;
    process.stdout.write(`no MCP servers (${why})\n`);
    return exitCodes.done;
  }
  const runnable = sources.servers.filter((sourced) => sourced.trusted).map((s) => s.server);
  const { connectMcpServers } = await import("../mcp/index.js");
  const connected = await connectMcpServers(runnable, {
    env: process.env,
    cwd: workspace,
    checkStart: sources.checkStart,
  });
  try {
    const lines = sources.servers.flatMap((sourced) => {
      const status = connected.status().find((known) => known.name === sourced.server.name);
      const tools = connected.tools().filter((tool) => tool.mcp.server === sourced.server.name);
      return [
        headLine(sourced),
        status
          ? `  ${statusText(status)}`
          : `  not started: not trusted (mini-agent mcp trust ${sourced.server.name})`,
        ...tools.map((tool) => `  ${tool.spec.name}`),
      ];
    });
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await connected.close();
  }
  return exitCodes.done;
}

/** `everything (--mcp-config FILE, trusted): node server.js stdio` */
function headLine({ server, source, trusted }: SourcedServer): string {
  const from = source === "flag" ? "--mcp-config" : source === "project" ? "project" : "user";
  const trust = source !== "project" ? "yours" : trusted ? "trusted" : "not trusted";
  return visible(`${server.name} (${from} ${server.file}, ${trust}): ${serverLine(server)}`);
}

async function trustOne(verb: "trust" | "untrust", name: string, workspace: string) {
  const root = await mcpProjectRoot(workspace);
  const { loadTrust } = await import("../trust/trust.js");
  const trust = await loadTrust(stateHome(process.env), root);
  const project = await projectMcpServers(root, workspace);
  const server = project.servers.find((known) => known.name === name);
  if (verb === "untrust") {
    const held = trust.entries().some((entry) => entry.kind === "mcp" && entry.name === name);
    if (!held) {
      process.stdout.write(
        `${visible(name)}: not trusted in ${visible(root)}: nothing to untrust\n`,
      );
      return exitCodes.done;
    }
    await trust.revoke([{ kind: "mcp", name }]);
    process.stdout.write(`${visible(name)}: no longer trusted in ${visible(root)}\n`);
    return exitCodes.done;
  }
  if (!server) {
    if (!project.found)
      throw new UsageError(
        `no .mcp.json in ${root}: no MCP server ${JSON.stringify(name)} to trust`,
      );
    const problem = project.problems.find((line) => line.includes(JSON.stringify(name)));
    if (problem !== undefined) throw new UsageError(problem);
    // Nothing was read of the file (not JSON, no server list, not a regular file): say why.
    const unread = project.servers.length === 0 ? project.problems[0] : undefined;
    if (unread !== undefined)
      throw new UsageError(
        `cannot trust ${JSON.stringify(name)}: ${unread.replace(/: skipped$/, "")}`,
      );
    throw new UsageError(`${project.file} has no MCP server ${JSON.stringify(name)}`);
  }
  await trust.trust(trustEntriesOf([server]));
  process.stdout.write(
    `trusted ${visible(name)} of ${visible(server.file)}: ${visible(serverLine(server))}\n`,
  );
  return exitCodes.done;
}

/** `ready, 13 tool(s)`: the status line of a server without its name. */
function statusText(status: McpServerStatus): string {
  const told = runStatus(status);
  return told ? mcpStatusLine(told).replace(/^MCP server "[^"]*": /, "") : status.state;
}
