import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import type { TurnResult } from "../../runner/events.js";
import type { CliArgs } from "../args.js";
import { describeError } from "../errors.js";
import { providerFor } from "../provider.js";
import { workspaceFolder } from "../workspace.js";
import { type AcpSession, type AcpShared, openSession } from "./session.js";
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
  const provider = await connect.client(
    (notice) => stderr.write(`mini-agent: ${notice}\n`),
    () => undefined,
  );
  const sessions = new Map<string, AcpSession>();
  const input = Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>;
  const app = acp.agent({ name: "mini-agent" });
  let shared: AcpShared | undefined;
  const connection = app
    .onRequest("initialize", () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: false,
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
        mcpCapabilities: { http: false, sse: false },
      },
      agentInfo: { name: "mini-agent", version },
      authMethods: [],
    }))
    .onRequest("session/new", async ({ params, client }) => {
      if (params.mcpServers.length > 0) {
        throw acp.RequestError.invalidParams(
          { mcpServers: params.mcpServers.map((server) => server.name) },
          "mini-agent acp does not connect the editor's MCP servers yet: pass an empty mcpServers list",
        );
      }
      const workspace = await workspaceFolder(params.cwd).catch((error: unknown) => {
        throw acp.RequestError.invalidParams({ cwd: params.cwd }, describeError(error, undefined));
      });
      shared ??= {
        args,
        env,
        model: connect.model,
        provider,
        client,
        stderr,
        approvalTimeoutMs: args.approvalTimeoutMs,
      };
      const session = await openSession(shared, workspace);
      sessions.set(session.id, session);
      return { sessionId: session.id };
    })
    .onRequest("session/prompt", async ({ params, client }) => {
      const session = sessions.get(params.sessionId);
      if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
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
  }
  return 0;
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
