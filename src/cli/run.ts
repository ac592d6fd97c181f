import type { Interface } from "node:readline";
import { setFlagsFromString } from "node:v8";
import { type AgentEvent, runAgent } from "../agent.js";
import { listSessions, Session, type SessionSummary } from "../session.js";
import { createWorkspaceTools } from "../tools/index.js";
import { resolveSandbox, type SandboxState } from "../tools/sandbox.js";
import type { Message, ModelClient, ModelEvent, ModelRequest, ToolCall, Usage } from "../types.js";
import { type CliArgs, exitCodes, UsageError } from "./args.js";
import { describeError } from "./errors.js";
import { createOutput, type TurnSummary } from "./output.js";
import { type Answer, type BashMode, cliPolicy } from "./policy.js";
import { sessionsDir, sessionToResume, stateHome } from "./store.js";

export const defaultModel = "claude-sonnet-5-5";

// Node's fetch parses HTTP with a WebAssembly module; V8 optimises it on a background thread
// that exit then waits for (~50 ms). The baseline compiler is plenty for a few responses.
setFlagsFromString("--liftoff-only");

/** Checks the provider's configuration now; loads its SDK only when the client is made. */
function providerFor(
  args: CliArgs,
  env: NodeJS.ProcessEnv,
): { model: string; client(): Promise<ModelClient> } {
  const baseURL = args.baseURL !== undefined ? { baseURL: args.baseURL } : {};
  if (args.provider === "openai") {
    const apiKey = env.OPENAI_API_KEY || undefined;
    if (!apiKey && args.baseURL === undefined) {
      throw new UsageError(
        "OPENAI_API_KEY is not set: export it, or point --base-url (OPENAI_BASE_URL) at a local server",
      );
    }
    const model = args.model ?? "";
    return {
      model,
      client: async () => {
        const { OpenAIModelClient } = await import("../providers/openai.js");
        return new OpenAIModelClient({ model, ...baseURL, ...(apiKey && { apiKey }) });
      },
    };
  }
  const apiKey = env.ANTHROPIC_API_KEY;
  if (!apiKey)
    throw new UsageError("ANTHROPIC_API_KEY is not set: export your Anthropic API key in it");
  const model = args.model ?? defaultModel;
  return {
    model,
    client: async () => {
      const { AnthropicModelClient } = await import("../providers/anthropic.js");
      return new AnthropicModelClient({ apiKey, model, ...baseURL });
    },
  };
}

/** Runs one task, or an interactive session, and returns the exit code. */
export async function runCli(args: CliArgs, workspace: string): Promise<number> {
  const { stdin, stdout, stderr, env } = process;
  const dir = sessionsDir(env, workspace);
  if (args.sessions) {
    stdout.write(formatSessions(await listSessions(dir)));
    return exitCodes.done;
  }
  const resumePath =
    args.continue || args.resume !== undefined
      ? await sessionToResume(dir, args.resume)
      : undefined;
  const connect = providerFor(args, env);
  const interactive = args.task === undefined && stdin.isTTY === true;
  const task = args.task ?? (interactive ? undefined : await taskFromStdin());
  const model = connect.model;
  const bash: BashMode = args.allowBash ? "allow" : "ask";
  const bashCanRun = args.allowBash || stdin.isTTY === true;
  const sandboxOptions = { mode: args.sandbox, readOnly: [stateHome(env)] };
  // Probing bwrap spawns a process: only when bash can run, and while the SDK loads.
  const probing = bashCanRun ? resolveSandbox(sandboxOptions) : undefined;
  const client = new CountingClient(await connect.client());
  const sandbox = await probing;
  if (sandbox?.kind === "unavailable") {
    stderr.write(
      sandbox.mode === "required"
        ? `mini-agent: bash will be refused: --sandbox required, but ${sandbox.reason}\n`
        : `mini-agent: warning: bash runs without a sandbox: ${sandbox.reason}\n`,
    );
  }
  const rl = stdin.isTTY
    ? (await import("node:readline")).createInterface({
        input: stdin,
        output: stderr,
        terminal: true,
      })
    : undefined;

  let session: Session | undefined;
  let history: Message[] = [];
  if (resumePath) {
    const loaded = await Session.open(resumePath);
    session = loaded.session;
    history = loaded.messages;
    if (loaded.repaired > 0) {
      stderr.write(
        `mini-agent: ${loaded.repaired} tool call(s) had no result; recorded as outcome unknown\n`,
      );
    }
  }
  const ensureSession = async () => {
    session ??= await Session.create({ dir, workspace, model, sandbox: sandboxName(sandbox) });
    return session;
  };

  let running: AbortController | undefined;
  let idleInterrupts = 0;
  const onInterrupt = () => {
    if (running && !running.signal.aborted) {
      running.abort();
      stderr.write("\nmini-agent: interrupting (Ctrl-C again to quit)\n");
    } else if (running || interactive === false || ++idleInterrupts > 1) {
      process.exit(exitCodes.interrupted);
    } else stderr.write("\n(Ctrl-C again, /exit or Ctrl-D to quit)\n");
  };
  process.on("SIGINT", onInterrupt);
  rl?.on("SIGINT", onInterrupt);

  const policy = cliPolicy({
    bash,
    ...(rl && { ask: (call: ToolCall) => ask(rl, call, running?.signal) }),
    record: async (decision) => (await ensureSession()).appendApproval(decision),
  });
  const tools = createWorkspaceTools(workspace, { bash: { sandbox: sandboxOptions } });
  const system = systemPrompt(
    workspace,
    args.allowBash ? "allowed" : rl ? "ask" : "denied",
    sandbox?.kind === "bwrap",
  );

  const runTurn = async (prompt: string): Promise<TurnSummary["status"]> => {
    const current = await ensureSession();
    const output = createOutput(args.outputFormat, { stdout, stderr });
    const userMessage: Message = { role: "user", content: prompt };
    await current.append(userMessage);
    history.push(userMessage);
    running = new AbortController();
    const base = { sessionId: current.id, usage: client.usage };
    try {
      const result = await runAgent({
        client,
        tools,
        system,
        messages: history,
        beforeToolCall: policy,
        signal: running.signal,
        maxTurns: args.maxTurns,
        onEvent: async (event: AgentEvent) => {
          if (event.type === "message") {
            history.push(event.message);
            await current.append(event.message);
          }
          output.event(event);
        },
      });
      output.finish({ status: result.status, text: result.text, ...base });
      return result.status;
    } catch (error) {
      const message = describeError(error, args.baseURL);
      if (args.outputFormat !== "text")
        output.finish({ status: "error", text: "", ...base, error: message });
      stderr.write(`mini-agent: ${message}\n`);
      if (args.debug && error instanceof Error && error.stack) stderr.write(`${error.stack}\n`);
      return "error";
    } finally {
      running = undefined;
    }
  };

  try {
    if (task !== undefined) return statusCode(await runTurn(task));
    if (!rl) return exitCodes.done;
    for await (const line of prompts(rl)) {
      idleInterrupts = 0;
      if (line === "/exit") break;
      if (line.trim() !== "") await runTurn(line);
    }
    return exitCodes.done;
  } finally {
    process.off("SIGINT", onInterrupt);
    rl?.close();
    await session?.close();
  }
}

function statusCode(status: TurnSummary["status"]): number {
  switch (status) {
    case "completed":
      return exitCodes.done;
    case "aborted":
      return exitCodes.interrupted;
    case "max_turns":
      return exitCodes.maxTurns;
    case "error":
      return exitCodes.error;
  }
}

function sandboxName(state: SandboxState | undefined): string {
  if (state === undefined) return "unused (bash denied)";
  if (state.kind !== "unavailable") return state.kind;
  return state.mode === "required" ? "required-unavailable" : "unavailable";
}

function systemPrompt(
  workspace: string,
  bash: "allowed" | "ask" | "denied",
  sandboxed: boolean,
): string {
  const bashRule = {
    allowed: "bash is allowed.",
    ask: "bash asks the user before each command.",
    denied: "bash is denied unless the user restarts with --allow-bash; use the other tools.",
  }[bash];
  return [
    `You are mini-agent, a coding agent in a terminal, working in ${workspace}.`,
    "Tool paths are relative to that folder and cannot leave it.",
    `Look before you change anything; prefer edit to write for existing files. ${bashRule}`,
    ...(sandboxed && bash !== "denied"
      ? ["bash runs sandboxed: only the workspace is writable, no network."]
      : []),
    "Answer briefly and say what you changed.",
  ].join("\n");
}

/** Lines typed at the prompt until Ctrl-D. */
async function* prompts(rl: Interface): AsyncGenerator<string> {
  const lines = rl[Symbol.asyncIterator]();
  for (;;) {
    rl.setPrompt("› ");
    rl.prompt();
    const next = await lines.next();
    if (next.done) return;
    yield next.value;
  }
}

function ask(rl: Interface, call: ToolCall, signal: AbortSignal | undefined): Promise<Answer> {
  const command = String(call.input.command ?? JSON.stringify(call.input));
  return new Promise((resolve, reject) => {
    signal?.addEventListener("abort", () => reject(new Error("approval interrupted")), {
      once: true,
    });
    rl.question(
      `Allow ${call.name}: ${command}\n[y]es, [n]o, [a]lways for this session? `,
      (answer) => {
        const key = answer.trim().toLowerCase()[0];
        resolve(key === "y" ? "yes" : key === "a" ? "always" : "no");
      },
    );
  });
}

async function taskFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const task = Buffer.concat(chunks).toString("utf8").trim();
  if (task === "")
    throw new UsageError("no task: give one as an argument, with --print, or on stdin");
  return task;
}

function formatSessions(sessions: SessionSummary[]): string {
  if (sessions.length === 0) return "no sessions for this folder\n";
  const rows = sessions.map((s) => {
    const prompt = s.firstPrompt.replace(/\s+/g, " ");
    return `${s.id}  ${s.updatedAt.slice(0, 16).replace("T", " ")}  ${String(s.turns).padStart(3)} turn(s)  ${prompt.length > 60 ? `${prompt.slice(0, 59)}…` : prompt}`;
  });
  return `${rows.join("\n")}\n`;
}

/** Adds up the usage each round reports, for `--output-format json`. */
class CountingClient implements ModelClient {
  readonly usage: Usage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };

  constructor(private readonly inner: ModelClient) {}

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    for await (const event of this.inner.stream(request)) {
      if (event.type === "done" && event.usage) {
        this.usage.inputTokens += event.usage.inputTokens;
        this.usage.outputTokens += event.usage.outputTokens;
        this.usage.cacheReadTokens =
          (this.usage.cacheReadTokens ?? 0) + (event.usage.cacheReadTokens ?? 0);
        this.usage.cacheWriteTokens =
          (this.usage.cacheWriteTokens ?? 0) + (event.usage.cacheWriteTokens ?? 0);
      }
      yield event;
    }
  }
}
