import { once } from "node:events";
import { basename } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { describeError } from "../app/errors.js";
import { exitCodes } from "../app/exit.js";
import { isMode, modes } from "../app/modes.js";
import { compactedLine, imagesHeldBackNotice, retryNotice } from "../app/notices.js";
import { MissingKeyError, providerFor } from "../app/provider.js";
import { sessionToResume } from "../app/sessions.js";
import type { AgentSettings } from "../app/settings.js";
import type { Stopper } from "../app/signals.js";
import { workspaceFolder } from "../app/workspace.js";
import { youngGeneration } from "../app/young-generation.js";
import { normalizeHistory } from "../history/normalize.js";
import { ProviderError } from "../providers/provider-error.js";
import type { TurnResult } from "../runner/events.js";
import { keepSandboxAnswers } from "../sandbox/bwrap.js";
import { sessionMessages } from "../session/read.js";
import { sessionsDir, stateHome } from "../session/store.js";
import type { PlanItem } from "../tools/plan.js";
import type { Message } from "../types.js";
import { visible } from "../visible.js";
import { builtInPrompt, sendCommands, userCommandPrompt } from "./commands.js";
import { ChangeDiffs } from "./diffs.js";
import { absolute, sessionList } from "./list.js";
import { type AcpPrompt, promptOf } from "./prompt.js";
import { type AcpSession, type AcpShared, openSession } from "./session.js";
import { stopReason, UpdateMapper } from "./updates.js";

/** What `mini-agent acp` is started with: what every session gets, and the editor's wait. */
export interface AcpSettings {
  settings: AgentSettings;
  /** `--approval-timeout`, in milliseconds. */
  approvalTimeoutMs: number;
}

/**
 * `mini-agent acp`: an Agent Client Protocol agent (protocol version 1) on stdin and stdout.
 * stdout carries protocol messages only: anything else written to it (a stray `console.log`)
 * goes to stderr, and the protocol gets the real stdout. Resolves when the editor closes stdin.
 */
export async function acpCommand(
  start: AcpSettings,
  version: string,
  stopper: Stopper,
): Promise<number> {
  const { env } = start.settings;
  // For the stopper the whole connection is one turn: a signal aborts it, and every session's.
  const life = stopper.beginTurn();
  // Editors start agents with their own environment, often without the key: the agent answers
  // them all the same, and each prompt fails saying what to set (`keyMissing`).
  const settings = { ...start.settings, keyLater: true as const };
  const keyMissing = missingKey(start.settings, env);
  const protocolOut = protocolStdout();
  const stderr = process.stderr;
  const sessions = new Map<string, AcpSession>();
  const input = Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>;
  let shared: AcpShared | undefined;
  const share = (client: acp.AgentContext): AcpShared => {
    shared ??= { ...start, settings, client, stderr };
    return shared;
  };
  const find = (sessionId: string): AcpSession => {
    const session = sessions.get(sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    return session;
  };
  const connection = acp
    .agent({ name: "mini-agent" })
    .onRequest("initialize", () => capabilities(version, settings.provider))
    .onRequest("authenticate", () => {
      if (keyMissing) throw acp.RequestError.authRequired(undefined, keyMissing.message);
      return {};
    })
    .onRequest("session/new", async ({ params, client }) => {
      const workspace = await checkedFolder(params.cwd);
      const session = await openSession(share(client), workspace, params.mcpServers);
      sessions.set(session.id, session);
      afterAnswer(session, client);
      return { sessionId: session.id, modes: modeState(session) };
    })
    .onRequest("session/load", async ({ params, client }) => {
      if (sessions.has(params.sessionId))
        throw acp.RequestError.invalidRequest(undefined, "this session is already open");
      const session = await loadSession(
        params,
        env,
        (update) => client.notify("session/update", { sessionId: params.sessionId, update }),
        (workspace, path) => openSession(share(client), workspace, params.mcpServers, path),
      );
      sessions.set(session.id, session);
      afterAnswer(session, client);
      return { modes: modeState(session) };
    })
    .onRequest("session/list", ({ params }) => sessionList(env, params))
    .onRequest("session/set_mode", ({ params }) => setMode(find(params.sessionId), params.modeId))
    .onRequest("session/prompt", async ({ params, client }) => {
      const session = find(params.sessionId);
      if (session.turn.current || life.aborted)
        throw acp.RequestError.invalidRequest(
          undefined,
          life.aborted ? "the agent is stopping" : "a prompt is already running in this session",
        );
      const notify = (update: acp.SessionUpdate) =>
        client.notify("session/update", { sessionId: session.id, update });
      const ending = runPrompt(session, promptOf(params.prompt), notify);
      session.turn.ending = ending;
      return { stopReason: await ending };
    })
    .onRequest("session/close", async ({ params }) => {
      const session = find(params.sessionId);
      sessions.delete(session.id);
      await endSessions([session]);
      return {};
    })
    .onNotification("session/cancel", ({ params }) => {
      sessions.get(params.sessionId)?.turn.current?.abort();
    })
    .connect(acp.ndJsonStream(protocolOut, input));
  // The editor leaving (stdin closed) or a signal (which aborts `life`) ends every session.
  await Promise.race([connection.closed, once(life, "abort")]);
  await endSessions(sessions.values());
  keepSandboxAnswers();
  stopper.endTurn();
  if (life.aborted) return stopper.exitCode ?? exitCodes.interrupted;
  return brokenConnection(connection.signal.reason, stderr) ? exitCodes.error : exitCodes.done;
}

/**
 * Whether the connection ended for another reason than the editor closing it (a message over
 * the protocol's bound, unreadable input): then said on stderr in one line.
 */
function brokenConnection(reason: unknown, stderr: NodeJS.WritableStream): boolean {
  if (!(reason instanceof Error) || reason.message === "ACP connection closed") return false;
  stderr.write(`mini-agent: the editor's connection ended: ${visible(reason.message)}\n`);
  return true;
}

/**
 * Ends each session: its running turn aborted and waited for, so every call of it gets its
 * receipt and the turn its end in the session file; then the file and the MCP servers closed.
 */
async function endSessions(sessions: Iterable<AcpSession>): Promise<void> {
  for (const session of sessions) {
    session.turn.current?.abort();
    await session.turn.ending?.catch(() => undefined);
    await session.agent.close();
  }
}

/**
 * What `initialize` answers: protocol version 1 and what this agent can do, truthfully, with the
 * one way to authenticate: the provider's key in the environment the editor starts it with.
 */
function capabilities(
  version: string,
  provider: AgentSettings["provider"],
): acp.InitializeResponse {
  return {
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: true, audio: false, embeddedContext: false },
      mcpCapabilities: { http: true, sse: false },
      sessionCapabilities: { list: {}, close: {} },
    },
    agentInfo: { name: "mini-agent", version },
    authMethods: [authMethod(provider)],
  };
}

const restart =
  "in the environment the editor starts mini-agent with (its agent server settings), then restart the agent.";

/** How to give this provider its key: there is no other way than the environment. */
function authMethod(provider: AgentSettings["provider"]): acp.AuthMethod {
  if (provider === "anthropic")
    return {
      id: "anthropic-api-key",
      name: "Anthropic API key",
      description: `Set ANTHROPIC_API_KEY ${restart}`,
    };
  return {
    id: "openai-api-key",
    name: "OpenAI API key",
    description: `Set OPENAI_API_KEY (or OPENAI_BASE_URL, for a local server) ${restart}`,
  };
}

/** The missing key's error, when the provider's key is not in the environment (`settings`' own rule). */
function missingKey(settings: AgentSettings, env: NodeJS.ProcessEnv): MissingKeyError | undefined {
  try {
    providerFor(settings, env);
    return undefined;
  } catch (error) {
    if (error instanceof MissingKeyError) return error;
    throw error;
  }
}

/** `session/set_mode`: switches the session to a known mode; any other id is the request's error. */
function setMode(session: AcpSession, modeId: string): Record<string, never> {
  if (!isMode(modeId))
    throw acp.RequestError.invalidParams(
      { modeId },
      `no mode ${JSON.stringify(modeId)}: the modes are ${modes.map((mode) => mode.id).join(", ")}`,
    );
  session.agent.mode.current = modeId;
  return {};
}

/** The session's folder, checked like `--cwd`; a bad one is the request's error. */
async function checkedFolder(cwd: string): Promise<string> {
  return await workspaceFolder(absolute(cwd), stateHome(process.env)).catch((error: unknown) => {
    throw acp.RequestError.invalidParams({ cwd }, describeError(error, undefined));
  });
}

/** The file of the session with exactly this id in the folder's sessions, or the request's error. */
async function sessionFile(dir: string, sessionId: string): Promise<string> {
  const path = await sessionToResume(dir, sessionId).catch((error: unknown) => {
    throw acp.RequestError.resourceNotFound(describeError(error, undefined));
  });
  if (basename(path, ".jsonl") !== sessionId)
    throw acp.RequestError.resourceNotFound(
      `no session ${JSON.stringify(sessionId)} for this folder`,
    );
  return path;
}

/**
 * Sends every message of the session file as the updates a live turn would have sent, then the
 * session's plan (`SessionRunner.plan`: a compaction's too) as the last plan update would have.
 */
async function replay(
  path: string,
  workspace: string,
  notify: (update: acp.SessionUpdate) => Promise<unknown>,
  plan: PlanItem[] | undefined,
): Promise<void> {
  const mapper = new UpdateMapper(workspace);
  const messages: Message[] = [];
  for await (const message of sessionMessages(path)) messages.push(message);
  // As the history is repaired for the provider: every call answered once, stray results gone.
  for (const message of normalizeHistory(messages).messages)
    for (const update of mapper.replay(message)) await notify(update);
  if (plan === undefined) return;
  for (const update of mapper.updates({ type: "plan", items: plan })) await notify(update);
}

/**
 * `session/load`: the session file of that folder opened (so checked and locked) with the rest
 * of the session before anything of it is replayed, then replayed. Loading that fails closes the
 * session, freeing its file's lock.
 */
async function loadSession(
  params: acp.LoadSessionRequest,
  env: NodeJS.ProcessEnv,
  notify: (update: acp.SessionUpdate) => Promise<unknown>,
  open: (workspace: string, path: string) => Promise<AcpSession>,
): Promise<AcpSession> {
  const workspace = await checkedFolder(params.cwd);
  const path = await sessionFile(sessionsDir(env, workspace), params.sessionId);
  const session = await open(workspace, path);
  try {
    await replay(path, workspace, notify, session.agent.runner.plan);
    return session;
  } catch (error) {
    await session.agent.close();
    throw error;
  }
}

/** The modes an editor offers, and the session's. */
function modeState(session: AcpSession): acp.SessionModeState {
  return {
    currentModeId: session.agent.mode.current,
    availableModes: modes.map(({ id, name, description }) => ({ id, name, description })),
  };
}

/**
 * The session's commands, sent once the answer that names the session is on its way (an editor
 * drops updates of a session it does not know yet).
 */
function afterAnswer(session: AcpSession, client: acp.AgentContext): void {
  const notify = (update: acp.SessionUpdate) =>
    client.notify("session/update", { sessionId: session.id, update });
  setImmediate(() => void sendCommands(session, notify).catch(() => undefined));
}

/**
 * Runs one prompt: a built-in command an editor can run (`builtInPrompt`), else a turn of the
 * prompt (or of what one of the user's commands stands for), its events sent as session updates
 * in order; its stop reason. The commands are looked at again first, and sent when they changed.
 */
async function runPrompt(
  session: AcpSession,
  prompt: AcpPrompt,
  notify: (update: acp.SessionUpdate) => Promise<unknown>,
): Promise<acp.StopReason> {
  const controller = new AbortController();
  session.turn.current = controller;
  const diffs = ChangeDiffs.forSession(session.workspace, session.agent.journal.sessionPath);
  const mapper = new UpdateMapper(session.workspace, diffs);
  let sending = Promise.resolve();
  try {
    await session.agent.commands.refresh();
    await sendCommands(session, notify);
    const command = await builtInPrompt(session, prompt.text, controller.signal, notify);
    if (command !== undefined) return command;
    const text = await userCommandPrompt(session, prompt.text);
    const result = await session.agent.runner.runTurn(text, {
      signal: controller.signal,
      images: prompt.images,
      onEvent: (event) => {
        youngGeneration.watch(event);
        // What the terminal says on stderr in every format, the editor's log gets too.
        if (event.type === "retry") retryNotice(process.stderr, event.notice);
        if (event.type === "images_held_back") imagesHeldBackNotice(process.stderr, event.count);
        if (event.type === "compaction")
          process.stderr.write(`mini-agent: ${compactedLine(event.compaction)}\n`);
        for (const update of mapper.updates(event))
          sending = sending.then(() => notify(update)).then(() => undefined);
      },
    });
    await sending;
    return answer(result, controller.signal);
  } finally {
    session.turn.current = undefined;
  }
}

/**
 * The prompt's stop reason; a failed turn is a JSON-RPC error saying why (never a secret): a key
 * missing or refused by the provider (401) is "authentication required", which an editor shows
 * as such.
 */
function answer(result: TurnResult, signal: AbortSignal): acp.StopReason {
  if (signal.aborted) return "cancelled";
  const reason = stopReason(result.stop);
  if (reason !== undefined) return reason;
  const { error } = result;
  const message = describeError(error, undefined);
  const unauthenticated =
    error instanceof MissingKeyError || (error instanceof ProviderError && error.status === 401);
  if (unauthenticated) throw acp.RequestError.authRequired(undefined, message);
  throw acp.RequestError.internalError(undefined, message);
}

/**
 * The real stdout, for protocol messages only: from now on whatever else writes to stdout (a
 * library's `console.log`) goes to stderr instead.
 */
function protocolStdout(): WritableStream {
  const write = process.stdout.write.bind(process.stdout);
  const out = Writable.toWeb(
    new Writable({ write: (chunk, _encoding, done) => void write(chunk, done) }),
  );
  routeStrayOutput();
  return out;
}

/** Whatever else writes to stdout (a library's `console.log`) goes to stderr instead. */
function routeStrayOutput(): void {
  const toStderr = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  process.stdout.write = toStderr;
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
}
