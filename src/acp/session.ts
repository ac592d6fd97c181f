import type { AgentContext, McpServer } from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk";
import { describeError } from "../app/errors.js";
import { UsageError } from "../app/exit.js";
import { type AgentSession, type FrontEnd, openAgentSession } from "../app/session.js";
import type { AgentSettings } from "../app/settings.js";
import { editorServers } from "./mcp.js";
import { askEditor } from "./permission.js";

/** What every session of one `mini-agent acp` shares: its flags, the editor, the log. */
export interface AcpShared {
  settings: AgentSettings;
  /** `--approval-timeout`: an unanswered permission request is then denied. */
  approvalTimeoutMs: number;
  client: AgentContext;
  stderr: NodeJS.WritableStream;
}

/** One editor session: the session every front end gets, and its running turn. */
export interface AcpSession {
  id: string;
  workspace: string;
  agent: AgentSession;
  /**
   * The running turn: its controller, which `session/cancel` aborts, and its end, which the
   * agent waits for before it exits.
   */
  turn: { current?: AbortController | undefined; ending?: Promise<unknown> | undefined };
}

/**
 * A session in `workspace` (already checked like `--cwd`), new or gone on from (`resume`, a
 * session file of that folder), assembled as the terminal's is; its file exists once this
 * returns, so its id is the editor's session id and `mini-agent --continue` finds it. The editor
 * is the one asked what the rules cannot decide; its log (stderr) hears the rest. A configuration
 * the request makes unusable (its MCP servers, a bad file) is the request's error.
 */
export async function openSession(
  shared: AcpShared,
  workspace: string,
  servers: readonly McpServer[],
  resume?: string,
): Promise<AcpSession> {
  const given = editorServers(servers);
  const turn: AcpSession["turn"] = {};
  const permission = { client: shared.client, sessionId: "", timeoutMs: shared.approvalTimeoutMs };
  const tell = (line: string) => void shared.stderr.write(line);
  const frontEnd: FrontEnd = {
    tell,
    notice: (text) => tell(`mini-agent: ${text}\n`),
    ask: (call, question) =>
      askEditor(permission, call, question, turn.current?.signal ?? AbortSignal.abort()),
  };
  const settings = {
    ...shared.settings,
    workspace,
    file: "now" as const,
    mcpServers: given,
    ...(resume !== undefined && { resume }),
  };
  const agent = await openAgentSession(settings, frontEnd).catch((error: unknown) => {
    if (error instanceof RequestError) throw error;
    const message = describeError(error, settings.baseURL, settings.env);
    if (error instanceof UsageError) throw RequestError.invalidParams(undefined, message);
    throw RequestError.internalError(undefined, message);
  });
  if (agent.startLine !== "") tell(`mini-agent: ${agent.startLine}\n`);
  permission.sessionId = agent.journal.sessionId ?? "";
  return { id: permission.sessionId, workspace, agent, turn };
}
