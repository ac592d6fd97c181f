import { basename } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import type { Compaction } from "../../compaction/record.js";
import type { TurnResult } from "../../runner/events.js";
import { sessionMessages } from "../../session/read.js";
import { Session } from "../../session/session.js";
import { sessionsDir } from "../../session/store.js";
import type { CliArgs } from "../args.js";
import { describeError } from "../errors.js";
import type { RunMcp } from "../mcp.js";
import { isMode, modes } from "../modes.js";
import { providerFor } from "../provider.js";
import { sessionToResume } from "../store.js";
import { workspaceFolder } from "../workspace.js";
import { editorServers, sessionMcp } from "./mcp.js";
import { type AcpSession, type AcpShared, openSession, type Resumed } from "./session.js";
import { stopReason, UpdateMapper } from "./updates.js";

/**
 * `mini-agent acp`: an Agent Client Protocol agent (protocol version 1) on stdin and stdout.
 * stdout carries protocol messages only: anything else written to it (a stray `console.log`)
 * goes to stderr, and the protocol gets the real stdout. Resolves when the editor closes stdin.
 */
export async function acpCommand(args: CliArgs, version: string): Promise<number> {
  const env = process.env;
  const connect = providerFor(args, env);
  const write = process.stdout.write.bind(process.stdout);
  const protocolOut = Writable.toWeb(
    new Writable({ write: (chunk, _encoding, done) => void write(chunk, done) }),
  );
  routeStrayOutput();
  const stderr = process.stderr;
  const tell = (line: string) => void stderr.write(line);
  const provider = await connect.client(
    (notice) => stderr.write(`mini-agent: ${notice}\n`),
    () => undefined,
  );
  const sessions = new Map<string, AcpSession>();
  const input = Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>;
  let shared: AcpShared | undefined;
  const share = (client: acp.AgentContext): AcpShared => {
    shared ??= { args, env, model: connect.model, provider, client, stderr };
    return shared;
  };
  const find = (sessionId: string): AcpSession => {
    const session = sessions.get(sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    return session;
  };
  const connection = acp
    .agent({ name: "mini-agent" })
    .onRequest("initialize", () => capabilities(version))
    .onRequest("session/new", async ({ params, client }) => {
      const workspace = await checkedFolder(params.cwd);
      const mcp = await sessionMcp(args, workspace, params.mcpServers, tell);
      const session = await closingOnFailure(mcp, () => openSession(share(client), workspace, mcp));
      sessions.set(session.id, session);
      return { sessionId: session.id, modes: modeState(session) };
    })
    .onRequest("session/load", async ({ params, client }) => {
      if (sessions.has(params.sessionId))
        throw acp.RequestError.invalidRequest(undefined, "this session is already open");
      const workspace = await checkedFolder(params.cwd);
      const path = await sessionFile(sessionsDir(env, workspace), params.sessionId);
      editorServers(params.mcpServers);
      await replay(path, workspace, (update) =>
        client.notify("session/update", { sessionId: params.sessionId, update }),
      );
      const mcp = await sessionMcp(args, workspace, params.mcpServers, tell);
      const session = await closingOnFailure(mcp, async () =>
        openSession(share(client), workspace, mcp, await resumed(path)),
      );
      sessions.set(session.id, session);
      return { modes: modeState(session) };
    })
    .onRequest("session/set_mode", ({ params }) => setMode(find(params.sessionId), params.modeId))
    .onRequest("session/prompt", async ({ params, client }) => {
      const session = find(params.sessionId);
      if (session.turn.current)
        throw acp.RequestError.invalidRequest(
          undefined,
          "a prompt is already running in this session",
        );
      const notify = (update: acp.SessionUpdate) =>
        client.notify("session/update", { sessionId: session.id, update });
      return { stopReason: await runPrompt(session, promptText(params.prompt), notify) };
    })
    .onNotification("session/cancel", ({ params }) => {
      sessions.get(params.sessionId)?.turn.current?.abort();
    })
    .connect(acp.ndJsonStream(protocolOut, input));
  await connection.closed;
  for (const session of sessions.values()) {
    session.turn.current?.abort();
    await session.journal.close();
    await session.mcp?.close();
  }
  return 0;
}

/** What `initialize` answers: protocol version 1 and what this agent can do, truthfully. */
function capabilities(version: string): acp.InitializeResponse {
  return {
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: false },
      mcpCapabilities: { http: true, sse: false },
    },
    agentInfo: { name: "mini-agent", version },
    authMethods: [],
  };
}

/** `session/set_mode`: switches the session to a known mode; any other id is the request's error. */
function setMode(session: AcpSession, modeId: string): Record<string, never> {
  if (!isMode(modeId))
    throw acp.RequestError.invalidParams(
      { modeId },
      `no mode ${JSON.stringify(modeId)}: the modes are ${modes.map((mode) => mode.id).join(", ")}`,
    );
  session.mode.current = modeId;
  return {};
}

/** A session opened with its MCP servers, which are ended when it cannot be opened. */
async function closingOnFailure(
  mcp: RunMcp | undefined,
  open: () => Promise<AcpSession>,
): Promise<AcpSession> {
  try {
    return await open();
  } catch (error) {
    await mcp?.close();
    throw error;
  }
}

/** The session's folder, checked like `--cwd`; a bad one is the request's error. */
async function checkedFolder(cwd: string): Promise<string> {
  return await workspaceFolder(cwd).catch((error: unknown) => {
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

/** Sends every message of the session file as the updates a live turn would have sent. */
async function replay(
  path: string,
  workspace: string,
  notify: (update: acp.SessionUpdate) => Promise<unknown>,
): Promise<void> {
  const mapper = new UpdateMapper(workspace);
  for await (const message of sessionMessages(path))
    for (const update of mapper.replay(message)) await notify(update);
}

/** The session file opened to go on from, as `--resume` opens it; a failure is the request's. */
async function resumed(path: string): Promise<Resumed> {
  try {
    const { session, messages, compaction, imagesRefused } = await Session.open(path);
    return {
      session,
      messages,
      imagesRefused,
      ...(compaction && { compaction: compaction as Compaction }),
    };
  } catch (error) {
    throw acp.RequestError.internalError(undefined, describeError(error, undefined));
  }
}

/** The modes an editor offers, and the session's. */
function modeState(session: AcpSession): acp.SessionModeState {
  return {
    currentModeId: session.mode.current,
    availableModes: modes.map(({ id, name, description }) => ({ id, name, description })),
  };
}

/** The prompt's text: its text blocks, and the address of each resource link, a line each. */
function promptText(prompt: readonly acp.ContentBlock[]): string {
  return prompt
    .map((block) =>
      block.type === "text" ? block.text : block.type === "resource_link" ? block.uri : "",
    )
    .filter((part) => part !== "")
    .join("\n");
}

/** Runs one prompt as a turn, its events sent as session updates in order; its stop reason. */
async function runPrompt(
  session: AcpSession,
  text: string,
  notify: (update: acp.SessionUpdate) => Promise<unknown>,
): Promise<acp.StopReason> {
  const controller = new AbortController();
  session.turn.current = controller;
  const mapper = new UpdateMapper(session.workspace);
  let sending = Promise.resolve();
  try {
    const result = await session.runner.runTurn(text, {
      signal: controller.signal,
      onEvent: (event) => {
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

/** The prompt's stop reason; a failed turn is a JSON-RPC error saying why (never a secret). */
function answer(result: TurnResult, signal: AbortSignal): acp.StopReason {
  if (signal.aborted) return "cancelled";
  const reason = stopReason(result.status);
  if (reason !== undefined) return reason;
  const message = describeError(result.error, undefined);
  // The provider's refusal is a stop reason of the protocol, not a failure of the agent.
  if (message.includes("(stop_reason refusal)")) return "refusal";
  throw acp.RequestError.internalError(undefined, message);
}

/** Whatever else writes to stdout (a library's `console.log`) goes to stderr instead. */
function routeStrayOutput(): void {
  const toStderr = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  process.stdout.write = toStderr;
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
}
