import { realpath } from "node:fs/promises";
import { join } from "node:path";
import type { McpServerConfig } from "../mcp/config.js";
import { trustEntriesOf } from "../mcp/config.js";
import type { McpServerStatus, McpServers, McpTool } from "../mcp/index.js";
import type { McpStatus } from "../runner/events.js";
import type { Journal } from "../runner/journal.js";
import type { Tool } from "../types.js";
import { foldedLine, visible } from "../visible.js";
import { mcpSources, type SourcedServer } from "./mcp-sources.js";

/**
 * A run's MCP servers: read from their sources, the untrusted project ones asked about (on a
 * terminal) or skipped with one line, the rest connected. Loaded by `import()` from `prepare`,
 * and the SDK only when a server is to start: a run without MCP configuration loads neither.
 */

export interface RunMcp {
  /**
   * A turn's start: the tools of the servers up now, in their stable order, after each server
   * whose status changed since the last look (the skipped ones the first time) was recorded in
   * the journal (the session and every front end hear it). A change during a call (the server
   * exited, its restart was refused) is recorded when the call ends, not at the next turn: the
   * receipt and the status say it together.
   */
  turnTools(): Promise<Tool[]>;
  /** The servers' instructions for the system prompt (each capped by the client). */
  instructions(): string;
  /** A tool's annotations in words, for the approval question (hints, never consent). */
  hints(tool: string): string | undefined;
  /**
   * The workspace files the started project servers' command lines run or load (`programs`, real
   * paths): trusted by their content, so in the session's protected set (nothing the model does
   * changes them between the check and a restart).
   */
  files: string[];
  close(): Promise<void>;
}

export interface McpRunOptions {
  workspace: string;
  state: string;
  flagFiles: readonly string[];
  /** Servers given whole, before the flags' (an editor's, over ACP). */
  given?: readonly McpServerConfig[];
  env: NodeJS.ProcessEnv;
  /** Where the servers' changes of status are recorded. */
  journal: Journal;
  /** Asks the person at the terminal; absent when no one can be asked. */
  confirm?: (question: string) => Promise<boolean>;
  tell: (line: string) => void;
}

/** Reads, trusts and connects; `undefined` when no server is configured (nothing is loaded). */
export async function startMcp(options: McpRunOptions): Promise<RunMcp | undefined> {
  const sources = await mcpSources(options);
  for (const warning of sources.warnings) options.tell(`mini-agent: warning: ${warning}\n`);
  const servers: McpServerConfig[] = [];
  const skipped: McpStatus[] = [];
  for (const sourced of sources.servers) {
    const { server } = sourced;
    if (sourced.trusted || (await trusted(sourced, options, sources.trust))) {
      servers.push(server);
    } else {
      const reason = `skipped, not trusted: ${server.file} (mini-agent mcp trust ${server.name})`;
      skipped.push({ server: server.name, state: "untrusted", reason });
    }
  }
  if (servers.length === 0 && skipped.length === 0) return undefined;
  const files = await programFiles(sources.root, servers);
  const connected =
    servers.length === 0
      ? undefined
      : await (await import("../mcp/index.js")).connectMcpServers(servers, {
          env: options.env,
          cwd: options.workspace,
          checkStart: sources.checkStart,
        });
  const shown = new Map<string, string>();
  let untold = skipped;
  /** The servers whose status changed since the last call (the skipped ones the first time). */
  const changes = () => {
    const changed = [...untold];
    untold = [];
    for (const status of connected?.status() ?? []) {
      const told = runStatus(status);
      if (told === undefined) continue;
      const key = JSON.stringify(told);
      if (shown.get(status.name) !== key) changed.push(told);
      shown.set(status.name, key);
    }
    return changed;
  };
  const told = async () => {
    for (const status of changes()) await options.journal.record({ type: "mcp_status", status });
  };
  const telling = (tool: Tool): Tool => ({
    ...tool,
    execute: async (input, signal) => {
      const result = await tool.execute(input, signal);
      await told();
      return result;
    },
  });
  return {
    turnTools: async () => {
      const tools = (connected?.tools() ?? []).map(telling);
      await told();
      return tools;
    },
    instructions: () => (connected ? instructionsText(connected) : ""),
    hints: (tool) => hintsOf(connected?.tools().find((known) => known.spec.name === tool)),
    files,
    close: async () => {
      await connected?.close();
    },
  };
}

/** Why a trusted server's program is protected, as every writer says it. */
export const mcpProgramWhy = "a trusted MCP server runs it, outside the sandbox";

/** The real paths of the files `servers` run or load, each relative to the project root. */
async function programFiles(root: string, servers: McpServerConfig[]): Promise<string[]> {
  const real = await realpath(root).catch(() => root);
  const files = servers.flatMap((server) =>
    (server.programs ?? []).map((name) => join(real, name)),
  );
  return Promise.all(files.map((file) => realpath(file).catch(() => file)));
}

/** A server's status as the run tells it; `undefined` once closed (the run is ending). */
export function runStatus(status: McpServerStatus): McpStatus | undefined {
  const { name: server, reason, stderr } = status;
  const why = reason === undefined ? {} : { reason };
  const lines = { stderr: stderr.slice(-5) };
  switch (status.state) {
    case "up":
      return {
        server,
        state: "ready",
        tools: status.tools,
        ...(status.leftOut && { reason: `left out: ${status.leftOut.join("; ")}` }),
      };
    case "starting":
      return { server, state: status.restarts > 0 ? "restarting" : "starting", ...why };
    case "failed":
      return { server, state: status.exited ? "exited" : "failed", ...why, ...lines };
    case "closed":
      return undefined;
  }
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

/**
 * What trusting a server approves, before `${}` expansion: the command line of a stdio server
 * (each word quoted as a shell would, so `-c 'node srv.mjs'` and `-c node srv.mjs` differ) or the
 * URL of an HTTP one, then each variable and value it passes on (`env`, `headers`: a secret a
 * reference names reaches the server), then the workspace files its trust covers. Long runs of
 * blanks are shown as a count, as in the bash question.
 */
export function serverLine(server: McpServerConfig): string {
  const { entry } = server;
  const line =
    entry.type === "http"
      ? entry.url
      : [entry.command, ...(entry.args ?? [])].map(shellWord).join(" ");
  const passed =
    entry.type === "http"
      ? Object.entries(entry.headers ?? {}).map(([name, value]) => `headers ${name}: ${value}`)
      : Object.entries(entry.env ?? {}).map(([name, value]) => `env ${name}=${value}`);
  const programs = server.programs?.length
    ? [`trusted with the content of ${server.programs.join(", ")}`]
    : [];
  const unknown = server.unknown?.length
    ? [`the model can change what this runs: ${server.unknown.join("; ")}`]
    : [];
  return foldedLine([line, ...passed, ...programs, ...unknown].join("; "));
}

/** A word as a shell reads it back: as is when it holds only safe characters, else in '…'. */
function shellWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", "'\\''")}'`;
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
