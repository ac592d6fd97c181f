import { homedir } from "node:os";
import type { AgentContext } from "@agentclientprotocol/sdk";
import { contextWindowFor } from "../app/compaction.js";
import type { RunMcp } from "../app/mcp.js";
import { mcpTurnStart } from "../app/mcp-turn.js";
import { type ModeState, withModeLine } from "../app/modes.js";
import { imageNotKeptLine } from "../app/notices.js";
import { approvedWrites, cliPolicy } from "../app/policy.js";
import { systemPrompts } from "../app/system-prompt.js";
import type { CliArgs } from "../cli/args.js";
import { ruleBook, rulesFile } from "../cli/rules-command.js";
import type { Compaction } from "../compaction/record.js";
import { FileChanges } from "../rewind/changes.js";
import { Journal } from "../runner/journal.js";
import { SessionRunner } from "../runner/runner.js";
import { resolveSandbox, sandboxName } from "../sandbox/bwrap.js";
import type { ImagesRefusal } from "../session/records.js";
import { Session } from "../session/session.js";
import { SessionStore, sessionsDir, stateHome } from "../session/store.js";
import { createWorkspaceTools, type WorkspaceToolsOptions } from "../tools/index.js";
import { SeenFiles } from "../tools/seen.js";
import type { Message, ModelClient, Tool } from "../types.js";
import { visible } from "../visible.js";
import { askEditor } from "./permission.js";

/** What every session of one `mini-agent acp` shares: its flags, the provider, the editor. */
export interface AcpShared {
  args: CliArgs;
  env: NodeJS.ProcessEnv;
  model: string;
  provider: ModelClient;
  client: AgentContext;
  stderr: NodeJS.WritableStream;
}

/** One editor session: its runner over a session file like the CLI's, and its running turn. */
export interface AcpSession {
  id: string;
  workspace: string;
  runner: SessionRunner;
  journal: Journal;
  /**
   * The running turn: its controller, which `session/cancel` aborts, and its end, which the
   * agent waits for before it exits.
   */
  turn: { current?: AbortController | undefined; ending?: Promise<unknown> | undefined };
  /** The session mode; `session/set_mode` changes it. */
  mode: ModeState;
  /** Its MCP servers, ended with the session. */
  mcp: RunMcp | undefined;
}

/** A session file opened to go on from (`session/load`): the CLI's resume. */
export interface Resumed {
  session: Session;
  messages: Message[];
  compaction?: Compaction;
  /** Who refused images in it (`images_refused` records). */
  imagesRefused: ImagesRefusal[];
}

/**
 * A new session in `workspace` (already checked like `--cwd`): the session file is created now,
 * so its id is the editor's session id and `mini-agent --continue` finds it. Built from the
 * same parts as the CLI's run: the tools, the rules and their policy, the system prompt and the
 * runner with its journal; the editor is the one asked what the rules cannot decide.
 */
export async function openSession(
  shared: AcpShared,
  workspace: string,
  mcp: RunMcp | undefined,
  resumed?: Resumed,
): Promise<AcpSession> {
  const { args, env } = shared;
  const sandboxOptions = {
    mode: args.sandbox,
    readOnly: [stateHome(env)],
    probeCache: stateHome(env),
    hide: args.sandboxHide,
    limits: args.sandboxLimits,
  };
  const sandbox = await resolveSandbox(sandboxOptions);
  const sandboxed = sandbox.kind === "bwrap";
  const seen = new SeenFiles();
  const approvedWrite = approvedWrites(stateHome(env));
  const { changes, own } = workspaceTools(workspace, stateHome(env), {
    bash: { sandbox: sandboxOptions },
    seen,
    protectedWrites: approvedWrite.allows,
  });
  // The runner's tool list: the workspace's, then the MCP tools of the servers up at turn start.
  const tools = [...own];
  const session =
    resumed?.session ??
    (await Session.create({
      dir: sessionsDir(env, workspace),
      workspace,
      model: shared.model,
      sandbox: sandboxName(sandbox),
      onImageNotKept: (note) => shared.stderr.write(imageNotKeptLine(note)),
    }));
  const mode: ModeState = { current: args.mode };
  const journal = new Journal(new SessionStore(stateHome(env), async () => session, session));
  const turn: AcpSession["turn"] = {};
  const rules = await ruleBook(rulesFile(env, workspace), args.rules);
  const permission = {
    client: shared.client,
    sessionId: session.id,
    timeoutMs: args.approvalTimeoutMs,
  };
  const policy = cliPolicy({
    bash: args.allowBash ? "allow" : "ask",
    rules,
    workspace,
    sandboxed,
    tell: (line) => shared.stderr.write(line),
    ask: (call, question) =>
      askEditor(permission, call, question, turn.current?.signal ?? AbortSignal.abort()),
    protectedFiles: approvedWrite,
    record: (decision) => journal.record({ type: "approval", decision }),
    mode: () => mode.current,
    mcpHints: (name) => mcp?.hints(name),
  });
  const prompts = await systemPrompts(
    { workspace, bash: args.allowBash ? "allowed" : "ask", sandboxed, platform: process.platform },
    { home: homedir(), state: stateHome(env) },
    visible,
  );
  const contextWindow = contextWindowFor(shared.model, args.contextWindow);
  const runner = new SessionRunner({
    client: shared.provider,
    tools,
    beforeToolCall: policy,
    journal,
    changes,
    system: async () => {
      const instructions = await mcpTurnStart(mcp, tools, own, journal);
      return withModeLine(`${await prompts.next()}${instructions}`, mode.current);
    },
    ...(resumed && { history: resumed.messages, imagesRefused: resumed.imagesRefused }),
    ...(resumed?.compaction && { resume: resumed.compaction }),
    info: { model: shared.model, workspace, sandbox: sandboxName(sandbox) },
    provider: args.provider,
    maxTurns: args.maxTurns,
    ...(args.tokenBudget !== undefined && { tokenBudget: args.tokenBudget }),
    ...(contextWindow !== undefined && { contextWindow }),
    seen,
    retry: { env, ...(args.baseURL !== undefined && { baseURL: args.baseURL }) },
  });
  return { id: session.id, workspace, runner, journal, turn, mode, mcp };
}

/** The workspace's tools, `write` and `edit` wrapped to keep what they change, for a rewind. */
function workspaceTools(
  workspace: string,
  stateDir: string,
  options: Omit<WorkspaceToolsOptions, "stateDir">,
): { changes: FileChanges; own: Tool[] } {
  const changes = new FileChanges({ root: workspace, stateDir });
  return { changes, own: changes.wrap(createWorkspaceTools(workspace, { ...options, stateDir })) };
}
