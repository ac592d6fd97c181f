import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { bin, type CliOptions } from "./cli.js";

/**
 * What the editor's side saw: every update (the lists of commands apart, in `commands`: they come
 * once a session is answered, whenever that is among the rest), every permission request,
 * stdout line by line.
 */
export interface AcpRun {
  updates: acp.SessionNotification[];
  /** Each `available_commands_update`. */
  commands: acp.SessionNotification[];
  permissions: acp.RequestPermissionRequest[];
  /** Every line the agent wrote on stdout. */
  lines: string[];
  stderr: () => string;
  /** Sends the agent a signal, as an editor (or the system) stopping it would. */
  kill: (signal: NodeJS.Signals) => void;
  /** Writes these lines to the agent's stdin at once, past the SDK (messages sent together). */
  send: (...messages: object[]) => void;
}

type Answer = (
  request: acp.RequestPermissionRequest,
  run: AcpRun,
) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;

/**
 * Spawns `mini-agent acp` (the built bin) and drives it with the SDK's own client side over its
 * stdio; `op` gets the connection's context. The agent's stdin is closed after `op`, and the
 * result resolves once the process ended.
 */
export async function withAcpAgent<T>(
  args: string[],
  options: CliOptions,
  answer: Answer,
  op: (agent: acp.ClientContext, run: AcpRun) => Promise<T>,
): Promise<{ value: T; run: AcpRun; code: number | null }> {
  const child = spawn(process.execPath, [bin, "acp", ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const run: AcpRun = {
    updates: [],
    commands: [],
    permissions: [],
    lines: [],
    stderr: () => stderr,
    kill: (signal) => void child.kill(signal),
    send: (...messages) =>
      void child.stdin.write(messages.map((message) => `${JSON.stringify(message)}\n`).join("")),
  };
  let partial = "";
  child.stdout.on("data", (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const lines = text.split("\n");
    partial = lines.pop() ?? "";
    run.lines.push(...lines);
  });
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin),
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const client = acp
    .client({ name: "test-editor" })
    .onNotification("session/update", ({ params }) => {
      if (params.update.sessionUpdate === "available_commands_update") run.commands.push(params);
      else run.updates.push(params);
    })
    .onRequest("session/request_permission", ({ params }) => {
      run.permissions.push(params);
      return answer(params, run);
    });
  const value = await client.connectWith(stream, (agent) => op(agent, run));
  child.stdin.end();
  const code = await closed;
  if (partial !== "") run.lines.push(partial);
  return { value, run, code };
}

/** The JSON-RPC id of the agent's last `session/request_permission`, from its stdout. */
export function permissionRequestId(lines: string[]): number | string {
  const requests = lines
    .map((line) => JSON.parse(line) as { id?: number | string; method?: string })
    .filter((message) => message.method === "session/request_permission");
  const id = requests.at(-1)?.id;
  if (id === undefined) throw new Error("the agent sent no session/request_permission");
  return id;
}

/** Selects the option of this kind. */
export const select = (optionId: string): acp.RequestPermissionResponse => ({
  outcome: { outcome: "selected", optionId },
});

/** Every line is one JSON-RPC 2.0 message (a request, a notification or a response). */
export function invalidLines(lines: string[]): string[] {
  return lines.filter((line) => {
    try {
      const message = JSON.parse(line) as Record<string, unknown>;
      if (message.jsonrpc !== "2.0") return true;
      if (typeof message.method === "string") return false;
      return !("id" in message) || !("result" in message || "error" in message);
    } catch {
      return true;
    }
  });
}

/** The JSON-RPC error a request ended with, as the editor's side sees it. */
export async function errorOf(
  request: Promise<unknown>,
): Promise<{ code: number; message: string }> {
  try {
    await request;
  } catch (error) {
    if (error instanceof acp.RequestError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("the request did not fail");
}

/** The permission answer of an editor that expects no question: a question fails the test. */
export const noAnswer = (): acp.RequestPermissionResponse => {
  throw new Error("no permission request was expected");
};
