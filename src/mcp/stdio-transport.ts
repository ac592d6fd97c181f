import type { ChildProcess } from "node:child_process";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { endCommands, newMarker, RUN_VARIABLE, trackCommand } from "../sandbox/reaper.js";
import { headOf } from "../text.js";

/**
 * The stdio transport of one MCP server: newline-delimited JSON-RPC over the pipes of a process
 * spawned from argv, without a shell. It is ours, not the SDK's, for what the SDK's leaves out:
 * - the process runs in its own process group and session, carrying the reaper's marker
 *   (`sandbox/reaper.ts`), so it and everything it started die with mini-agent: at `close()`,
 *   at `process.exit`, and, after a SIGKILL of the agent, at the next agent's sweep;
 * - `close()` closes stdin, waits, SIGTERMs the group, waits, then SIGKILLs what is left;
 * - the last lines of stderr, and any stdout line that is not JSON-RPC, are kept to explain a
 *   failure;
 * - one message may be at most `maxMessageBytes`: a bigger one closes the connection.
 */

export interface StdioTransportOptions {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Largest message read from stdout, in bytes. */
  maxMessageBytes: number;
  /** How long each step of `close()` waits for the process to exit. */
  closeGraceMs: number;
  /** How many lines of stderr (and stray stdout) `log` keeps. */
  logLines: number;
}

const LOG_LINE_CHARS = 300;

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The last lines the server wrote to stderr, and stdout lines that were not JSON-RPC. */
  readonly log: string[] = [];
  /** How the process ended, once it has: `exit code 1`, `signal SIGKILL`. */
  exit?: string;
  /** Why the transport itself ended the process, when it did. */
  private fault?: string;
  private ended = false;
  /** `close()` was called: a start still loading `child_process` then starts nothing. */
  private closing = false;
  private child?: ChildProcess;
  private readonly marker = newMarker();
  private exited?: Promise<void>;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private stderrRest = "";

  constructor(
    private readonly options: StdioTransportOptions,
    private readonly parse: (line: string) => JSONRPCMessage,
  ) {}

  async start(): Promise<void> {
    const { command, args, env, cwd } = this.options;
    // Loaded when a server first starts: a run without MCP servers loads no `child_process`.
    const { spawn } = await import("node:child_process");
    if (this.closing) throw new Error("the transport was closed before its server started");
    const child = spawn(command, args, {
      env: { ...env, [RUN_VARIABLE]: this.marker },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
      ...(cwd !== undefined && { cwd }),
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once("close", () => resolve()));
    return new Promise((resolve, reject) => {
      child.once("error", reject);
      child.once("spawn", () => {
        if (child.pid !== undefined) trackCommand(this.marker, child.pid);
        resolve();
      });
      child.on("exit", (code, signal) => {
        this.exit = this.fault ?? (signal ? `signal ${signal}` : `exit code ${code}`);
      });
      child.once("close", () => {
        this.endAll();
        this.onclose?.();
      });
      child.stdin?.on("error", () => {
        // EPIPE: the server went away; its exit is reported by `close`.
      });
      child.stdout?.on("data", (chunk: Buffer) => this.read(chunk));
      child.stderr?.on("data", (chunk: Buffer) => this.readStderr(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || this.exit !== undefined) {
      return Promise.reject(new Error("the server is not running"));
    }
    return new Promise((resolve) => {
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** stdin closed; then SIGTERM to the group; then SIGKILL to the group, session and marker. */
  async close(): Promise<void> {
    this.closing = true;
    const child = this.child;
    if (!child || !this.exited) return;
    const grace = () => new Promise((resolve) => setTimeout(resolve, this.options.closeGraceMs));
    const gone = async () =>
      (await Promise.race([this.exited?.then(() => true), grace()])) === true;
    child.stdin?.end();
    if (this.exit === undefined && !(await gone())) {
      signalGroup(child, "SIGTERM");
      if (!(await gone())) signalGroup(child, "SIGKILL");
    }
    this.endAll();
    child.stdout?.destroy();
    child.stderr?.destroy();
    await this.exited;
  }

  /** SIGKILLs what is left of the server's group, session and marker, once. */
  private endAll(): void {
    if (this.ended) return;
    this.ended = true;
    endCommands([this.marker]);
  }

  private read(chunk: Buffer): void {
    let start = 0;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
      this.pending.push(chunk.subarray(start, at));
      const line = Buffer.concat(this.pending).toString("utf8").replace(/\r$/, "");
      this.pending = [];
      this.pendingBytes = 0;
      start = at + 1;
      this.deliver(line);
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > this.options.maxMessageBytes) {
        this.pending = [];
        this.pendingBytes = 0;
        const limit = `${Math.round(this.options.maxMessageBytes / 1024 / 1024)} MB`;
        this.fault = `it sent a message larger than ${limit} and was stopped`;
        this.onerror?.(new Error(this.fault));
        signalGroup(this.child, "SIGKILL");
      }
    }
  }

  private deliver(line: string): void {
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = this.parse(line);
    } catch {
      this.note(`stdout (not JSON-RPC, ignored): ${line}`);
      const id = answeredId(line);
      // An answer to a request that is no valid response (a result that is not an object, or
      // neither result nor error) fails that request now, instead of at its timeout.
      if (id !== undefined) this.onmessage?.(invalidAnswer(id));
      return;
    }
    this.onmessage?.(message);
  }

  private readStderr(chunk: Buffer): void {
    const lines = (this.stderrRest + chunk.toString("utf8")).split("\n");
    this.stderrRest = headOf(lines.pop() ?? "", LOG_LINE_CHARS * 4);
    for (const line of lines) if (line.trim() !== "") this.note(line);
  }

  private note(line: string): void {
    this.log.push(headOf(line.replace(/\r$/, ""), LOG_LINE_CHARS));
    if (this.log.length > this.options.logLines) this.log.shift();
  }
}

function signalGroup(child: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (child?.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** The id of a line that is a JSON object with an id and no method: an answer, however broken. */
function answeredId(line: string): string | number | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { id, method } = value as { id?: unknown; method?: unknown };
  if (method !== undefined) return undefined;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** The error response that stands for a broken answer to request `id`. */
function invalidAnswer(id: string | number): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id,
    error: { code: -32603, message: "the server's answer is not a valid JSON-RPC response" },
  };
}
