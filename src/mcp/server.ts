import { resolve } from "node:path";
import type { Client, Transport } from "@modelcontextprotocol/client";
import { secretRedactor, withoutSecrets } from "../secrets.js";
import { headOf, wellFormed } from "../text.js";
import { failure } from "../tools/define.js";
import type { ToolResult } from "../types.js";
import { expandServer, type McpServerConfig, type McpServerEntry } from "./config.js";
import { boundedFetch } from "./http-fetch.js";
import { checkListedTools } from "./listed.js";
import { bounded, receiptOf } from "./result.js";
import type { Sdk } from "./sdk.js";
import { StdioTransport } from "./stdio-transport.js";
import {
  adaptTools,
  type CallServerTool,
  type ListedTool,
  type McpTool,
  usableTools,
} from "./tools.js";

/**
 * The client side of one configured server: its transport and its lifecycle. It starts the
 * server (each with its own start timeout; a late one keeps starting and comes up later), lists
 * its tools, calls them (with a per-call timeout that progress extends, and cancellation on
 * abort), notices a crash, restarts lazily a bounded number of times, and closes it.
 */

export type McpServerState = "starting" | "up" | "failed" | "closed";

/** What the caller shows about one server; every change is also passed to `onStatus`. */
export interface McpServerStatus {
  name: string;
  state: McpServerState;
  /** Still starting after its start timeout: its tools are added when it comes up. */
  late: boolean;
  /** Why it failed or is late, in one line. */
  reason?: string;
  /** The last lines it wrote to stderr (and stdout lines that were not JSON-RPC). */
  stderr: string[];
  /** How many tools it offers now. */
  tools: number;
  /** What of its list is not offered, a phrase each (`"dup" (listed twice)`). */
  leftOut?: string[];
  /** How many times it was restarted after a crash. */
  restarts: number;
  /** Set when it was up and went away (`failed`): it restarts at its next call, if any are left. */
  exited?: true;
}

export interface ServerOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  startTimeoutMs: number;
  /** After this long a start that is still going fails. */
  lateLimitMs: number;
  callTimeoutMs: number;
  maxCallMs: number;
  maxRestarts: number;
  maxMessageBytes: number;
  closeGraceMs: number;
  instructionChars: number;
  /**
   * Before every start and restart: why `server` must not start now (its program changed since
   * it was trusted), or `undefined`. A reason fails the start; the server is not run.
   */
  checkStart?: (server: McpServerConfig) => Promise<string | undefined>;
  /** `2026-07-28` pins the stateless revision; absent, the SDK's default (2025-11-25). */
  protocolVersion?: "2025-11-25" | "2026-07-28";
  onStatus: (status: McpServerStatus) => void;
  onProgress?: (progress: {
    server: string;
    tool: string;
    progress: number;
    total?: number;
  }) => void;
}

export class McpServerConnection {
  tools: McpTool[] = [];
  private leftOut: string[] = [];
  /** Tools of the lists received since the last `adapt` that the SDK would refuse, a phrase each. */
  private screened: string[] = [];
  instructions = "";
  private state: McpServerState = "starting";
  private late = false;
  private reason: string | undefined;
  private restarts = 0;
  private crashed = false;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private log: readonly string[] = [];
  private starting: Promise<void> | undefined;
  /** The HTTP connection was ended for a message over `maxMessageBytes`. */
  private tooLarge = false;
  private redact: (text: string) => string;

  constructor(
    private readonly config: McpServerConfig,
    private readonly sdk: Sdk,
    private readonly options: ServerOptions,
  ) {
    this.redact = secretRedactor(options.env);
  }

  get name(): string {
    return this.config.name;
  }

  status(): McpServerStatus {
    return {
      name: this.name,
      state: this.state,
      late: this.late,
      ...(this.reason !== undefined && { reason: this.redact(this.reason) }),
      stderr: [...this.log].map((line) => this.redact(line)),
      tools: this.tools.length,
      ...(this.leftOut.length > 0 && { leftOut: this.leftOut.map((item) => this.redact(item)) }),
      restarts: this.restarts,
      ...(this.crashed && this.state === "failed" && { exited: true as const }),
    };
  }

  /** Starts the server; resolves when it is up, has failed, or its start timeout has passed. */
  start(): Promise<void> {
    this.starting ??= this.connect().finally(() => {
      this.starting = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((done) => {
      timer = setTimeout(() => {
        if (this.state === "starting") {
          this.late = true;
          this.reason = `not started within ${seconds(this.options.startTimeoutMs)}; its tools are added when it comes up`;
          this.changed();
        }
        done();
      }, this.options.startTimeoutMs);
    });
    return Promise.race([this.starting, timeout]).finally(() => clearTimeout(timer));
  }

  private async connect(): Promise<void> {
    this.set("starting", undefined);
    const refused = await this.options.checkStart?.(this.config);
    if (refused !== undefined) {
      // Nothing ran: the lines of an earlier process are not this start's.
      this.log = [];
      return this.fail(refused);
    }
    const expanded = this.config.literal
      ? { ok: true as const, entry: this.config.entry }
      : expandServer(this.config.entry, this.options.env);
    if (!expanded.ok) return this.fail(expanded.reason);
    this.redact = secretRedactor({ ...this.options.env, ...envOf(expanded.entry) });
    const transport = this.transportFor(expanded.entry);
    const client = new this.sdk.Client(
      { name: "mini-agent", version: "0.1.0" },
      {
        capabilities: {},
        ...(this.options.protocolVersion === "2026-07-28" && {
          versionNegotiation: { mode: { pin: "2026-07-28" } },
        }),
        // A server that says its tools changed is listed again; callers see it at the next turn.
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (error || !tools || client !== this.client || this.state !== "up") return;
              this.tools = this.adapt(tools as ListedTool[]);
              this.changed();
            },
          },
        },
      },
    );
    this.transport = transport;
    this.client = client;
    // Set before connecting, this handler sees each message before the SDK does (the SDK chains
    // to a handler it finds), and takes out of a tool list the tools that would fail it whole.
    this.screened = [];
    transport.onmessage = (message) => this.screen(message);
    try {
      await client.connect(transport, { timeout: this.options.lateLimitMs });
      const { tools } = await client.listTools(undefined, { timeout: this.options.lateLimitMs });
      if (this.state === "closed") return;
      this.tools = this.adapt(tools as ListedTool[]);
      this.instructions = this.capped(client.getInstructions() ?? "");
      client.onclose = () => this.closedByServer(client);
      this.late = false;
      this.set("up", undefined);
    } catch (error) {
      if (this.state === "closed") return;
      await client.close().catch(() => {});
      // A closed connection already says how the process exited; other failures gain it.
      const why = this.failureOf(error);
      this.fail(why.endsWith(this.exitOf()) ? why : `${why}${this.exitOf()}`);
    }
  }

  private transportFor(entry: McpServerEntry): Transport {
    if (entry.type === "http") {
      const init = entry.headers ? { requestInit: { headers: entry.headers } } : {};
      this.tooLarge = false;
      // A message over the bound ends the connection, as stdio's does (it restarts at its next call).
      const fetch = boundedFetch(this.options.maxMessageBytes, () => {
        this.tooLarge = true;
        void transport.close().catch(() => {});
      });
      const transport = new this.sdk.StreamableHTTPClientTransport(new URL(entry.url), {
        ...init,
        fetch,
      });
      return transport;
    }
    const transport = new StdioTransport(
      {
        command: entry.command,
        args: entry.args ?? [],
        env: { ...withoutSecrets(this.options.env), ...entry.env },
        cwd: resolve(this.options.cwd, entry.cwd ?? "."),
        maxMessageBytes: this.options.maxMessageBytes,
        closeGraceMs: this.options.closeGraceMs,
        logLines: 20,
      },
      this.sdk.deserializeMessage,
    );
    this.log = transport.log;
    return transport;
  }

  /** A `tools/list` result, checked tool by tool (`checkListedTools`) and kept to the good ones. */
  private screen(message: unknown): void {
    const result = (message as { result?: unknown }).result;
    if (typeof result !== "object" || result === null) return;
    const listed = (result as { tools?: unknown }).tools;
    if (!Array.isArray(listed)) return;
    const { tools, leftOut } = checkListedTools(listed);
    (result as { tools: unknown[] }).tools = tools;
    this.screened.push(...leftOut);
  }

  private adapt(listed: ListedTool[]): McpTool[] {
    const { tools, leftOut } = usableTools(listed);
    this.leftOut = [...this.screened, ...leftOut];
    this.screened = [];
    return adaptTools(this.name, tools, (call, signal) => this.call(call, signal));
  }

  /** Calls `tool`; a crashed server is restarted first (a bounded number of times). */
  async call(
    { tool, label, args }: Parameters<CallServerTool>[0],
    signal?: AbortSignal,
  ): Promise<ToolResult> {
    if (this.state === "closed") return failure(`${label} failed: the MCP servers were closed`);
    if (this.crashed) {
      if (this.restarts >= this.options.maxRestarts) {
        return failure(
          `${label} failed: server ${this.name} crashed and was restarted ${this.restarts} times; it is not restarted again`,
        );
      }
      this.restarts++;
      this.crashed = false;
      await this.start();
    }
    const client = this.client;
    if (this.state !== "up" || client === undefined) {
      return failure(
        `${label} failed: server ${this.name} is not running (${this.reason ?? this.state})`,
      );
    }
    try {
      const result = await client.callTool(
        { name: tool, arguments: args },
        {
          ...(signal && { signal }),
          timeout: this.config.entry.timeout ?? this.options.callTimeoutMs,
          resetTimeoutOnProgress: true,
          maxTotalTimeout: this.options.maxCallMs,
          onprogress: ({ progress, total }) =>
            this.options.onProgress?.({
              server: this.name,
              tool,
              progress,
              ...(total !== undefined && { total }),
            }),
        },
      );
      return receiptOf(result, this.redact);
    } catch (error) {
      if (signal?.aborted)
        return failure(`${label} aborted: the server was asked to cancel the call`);
      if (this.closed()) return failure(`${label} failed: the MCP servers were closed`);
      const why = this.failureOf(error);
      if (this.lostConnection(error)) this.connectionLost(client, `lost the connection: ${why}`);
      return failure(bounded(`${label} failed: ${why}`, this.redact));
    }
  }

  /** Read through a method: the narrowing of `state` before an `await` does not hold after it. */
  private closed(): boolean {
    return this.state === "closed";
  }

  async close(): Promise<void> {
    this.tools = [];
    this.set("closed", undefined);
    await this.client?.close().catch(() => {});
    await this.transport?.close().catch(() => {});
  }

  private closedByServer(client: Client): void {
    this.connectionLost(client, `the server closed the connection${this.exitOf()}`);
  }

  /** The server went away (it exited, or an HTTP server stopped answering): restart it lazily. */
  private connectionLost(client: Client, why: string): void {
    if (client !== this.client || this.state !== "up") return;
    this.crashed = true;
    const restart =
      this.restarts < this.options.maxRestarts ? "; it restarts at the next call" : "";
    this.set("failed", `${why}${restart}`);
  }

  /**
   * Over HTTP, a call that failed without the server's answer (a refused connection, a session
   * the server no longer knows) means the server went away; its JSON-RPC errors and timeouts do
   * not. (Over stdio the transport's close says it.)
   */
  private lostConnection(error: unknown): boolean {
    if (this.transport instanceof StdioTransport || error instanceof this.sdk.ProtocolError) {
      return false;
    }
    return (error as { code?: unknown }).code !== "REQUEST_TIMEOUT";
  }

  private failureOf(error: unknown): string {
    if (!(error instanceof Error)) return "unknown error";
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT") return `command not found: ${commandOf(this.config.entry)}`;
    if (code === "REQUEST_TIMEOUT" && error.message.includes("Maximum total timeout")) {
      return `took longer than the limit of ${seconds(this.options.maxCallMs)} for one call`;
    }
    if (code === "REQUEST_TIMEOUT") return "timed out without progress";
    if (code === "CONNECTION_CLOSED") return `the server closed the connection${this.exitOf()}`;
    const cause = (error.cause as { code?: unknown } | undefined)?.code;
    const why = typeof cause === "string" ? ` (${cause})` : "";
    return headOf(`${error.message}${why}`.replace(/\s+/g, " "), 500);
  }

  private exitOf(): string {
    if (this.tooLarge) {
      const mb = Math.round(this.options.maxMessageBytes / 1024 / 1024);
      return ` (it sent a message larger than ${mb} MB and was disconnected)`;
    }
    const exit = this.transport instanceof StdioTransport ? this.transport.exit : undefined;
    return exit !== undefined ? ` (${exit})` : "";
  }

  private capped(text: string): string {
    const clean = wellFormed(this.redact(text)).trim();
    const kept = headOf(clean, this.options.instructionChars);
    return kept.length < clean.length
      ? `${kept}\n[instructions cut at ${kept.length} characters]`
      : kept;
  }

  /** A start that failed: the server offers no tools until a later start succeeds. */
  private fail(reason: string): void {
    this.tools = [];
    this.instructions = "";
    this.set("failed", reason);
  }

  private set(state: McpServerState, reason: string | undefined): void {
    if (this.state === "closed" && state !== "closed") return;
    this.state = state;
    this.reason = reason;
    if (state === "failed") this.late = false;
    this.changed();
  }

  private changed(): void {
    this.options.onStatus(this.status());
  }
}

function commandOf(entry: McpServerEntry): string {
  return entry.type === "http" ? entry.url : entry.command;
}

/**
 * An entry's values as variables for the redactor: a stdio entry's `env`, judged by the secrets
 * rule like the agent's own; every value of an HTTP entry's `headers`, as a secret, since headers
 * are how HTTP servers take credentials (`Authorization: Bearer …` has no secret word).
 */
function envOf(entry: McpServerEntry): Record<string, string> {
  if (entry.type !== "http") return entry.env ?? {};
  const values = Object.values(entry.headers ?? {});
  return Object.fromEntries(values.map((value, index) => [`MCP_HEADER_${index}_SECRET`, value]));
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
