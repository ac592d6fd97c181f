import { homedir } from "node:os";
import { type AgentEvent, runAgent } from "../agent.js";
import type { Compaction } from "../compaction/record.js";
import { normalizeHistory } from "../history.js";
import { httpFetch } from "../providers/http-transport.js";
import { listSessions, Session } from "../session.js";
import { createWorkspaceTools } from "../tools/index.js";
import { resolveSandbox, type SandboxState } from "../tools/sandbox.js";
import { SeenFiles } from "../tools/seen.js";
import type { Message, ModelClient, ToolCall } from "../types.js";
import { type CliArgs, exitCodes, UsageError } from "./args.js";
import { CliCompaction, CompactionError, compactCommand, contextWindowFor } from "./compaction.js";
import { describeError } from "./errors.js";
import { createOutput } from "./formats.js";
import { TerminalInput, taskFromStdin } from "./input.js";
import type { TurnSummary } from "./output.js";
import { type BashMode, cliPolicy, type Question } from "./policy.js";
import { retryLostRound } from "./retry.js";
import { ruleBook, rulesFile } from "./rules-command.js";
import type { Stopper } from "./signals.js";
import { formatSessions, SessionStore, sessionsDir, sessionToResume, stateHome } from "./store.js";
import { systemPrompts } from "./system-prompt.js";
import { visible } from "./terminal.js";
import { scrubURLs } from "./url.js";
import { CountingClient } from "./usage.js";

export const defaultModel = "claude-sonnet-5-5";

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
        return new OpenAIModelClient({
          model,
          fetch: httpFetch,
          ...baseURL,
          ...(apiKey && { apiKey }),
        });
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
      return new AnthropicModelClient({ apiKey, model, fetch: httpFetch, ...baseURL });
    },
  };
}

/** Runs one task, or an interactive session, and returns the exit code. */
export async function runCli(args: CliArgs, workspace: string, stopper: Stopper): Promise<number> {
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
  const task = args.task ?? (interactive ? undefined : await taskFromStdin(stdin));
  const model = connect.model;
  const bash: BashMode = args.allowBash ? "allow" : "ask";
  const rules = await ruleBook(rulesFile(env, workspace), args.rules);
  const allowRules = rules.current().some((rule) => rule.effect === "allow");
  const bashCanRun = args.allowBash || stdin.isTTY === true || allowRules;
  const sandboxOptions = {
    mode: args.sandbox,
    readOnly: [stateHome(env)],
    hide: args.sandboxHide,
    limits: args.sandboxLimits,
  };
  // Probing bwrap spawns a process, while the SDK loads: when bash can run, or the read-only set.
  const probing = bashCanRun || args.sandbox !== "off" ? resolveSandbox(sandboxOptions) : undefined;
  const client = new CountingClient(await connect.client());
  const probed = await probing;
  const sandbox = bashCanRun || probed?.kind === "bwrap" ? probed : undefined;
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
  const input = rl && new TerminalInput(rl, stderr);
  stopper.interactive = interactive;
  rl?.on("SIGINT", () => stopper.signal("SIGINT"));

  let history: Message[] = [];
  let resumed: Session | undefined;
  let lastCompaction: Compaction | undefined;
  if (resumePath) {
    const loaded = await Session.open(resumePath);
    resumed = loaded.session;
    history = loaded.messages;
    lastCompaction = loaded.compaction;
    if (loaded.repaired > 0) {
      stderr.write(
        `mini-agent: ${loaded.repaired} tool call(s) had no result; recorded as outcome unknown\n`,
      );
    }
  }
  const create = () => Session.create({ dir, workspace, model, sandbox: sandboxName(sandbox) });
  const store = new SessionStore(stateHome(env), create, resumed);
  const seen = new SeenFiles();
  const compaction = new CliCompaction({
    inner: client,
    contextWindow: contextWindowFor(model, args.contextWindow),
    resume: lastCompaction,
    // The model's memory was cut: what it saw of each file is gone, so edits need a fresh read.
    record: async (record) => {
      await store.appendCompaction(record);
      seen.clear();
    },
    stderr,
    baseURL: args.baseURL,
  });

  // A call denied because the input was closed ends its turn once its result is recorded.
  let endTurnAfter: string | undefined;
  const policy = cliPolicy({
    bash,
    rules,
    workspace,
    sandboxed: sandbox?.kind === "bwrap",
    tell: (line) => stderr.write(line),
    ...(input && {
      ask: async (call: ToolCall, question: Question) => {
        const answer = await input.ask(call, question, stopper.turnSignal);
        if (answer === "closed") endTurnAfter = call.id;
        return answer;
      },
    }),
    record: (decision) => store.appendApproval(decision),
  });
  const tools = createWorkspaceTools(workspace, {
    bash: { sandbox: sandboxOptions },
    stateDir: stateHome(env),
    seen,
  });
  const prompts = await systemPrompts(
    {
      workspace,
      bash: args.allowBash ? "allowed" : rl ? "ask" : "denied",
      sandboxed: sandbox?.kind === "bwrap",
      platform: process.platform,
    },
    { home: homedir(), state: stateHome(env) },
    visible,
  );
  if (prompts.startLine !== "") stderr.write(`mini-agent: ${prompts.startLine}\n`);

  const runTurn = async (prompt: string): Promise<TurnStatus> => {
    const output = createOutput(args.outputFormat, { stdout, stderr });
    const onEvent = async (event: AgentEvent) => {
      if (event.type === "message") {
        await store.append(event.message);
        history.push(event.message);
        if (event.message.role === "tool" && event.message.toolCallId === endTurnAfter)
          stopper.abortTurn();
      }
      output.event(event);
    };
    compaction.showIn(output);
    const signal = stopper.beginTurn();
    endTurnAfter = undefined;
    const summary = (status: TurnSummary["status"], text: string) => ({
      status,
      text,
      sessionId: store.id ?? "",
      usage: client.usage,
    });
    try {
      // A turn that failed may have left a call without its result: repair it before sending.
      history = normalizeHistory(history).messages;
      const userMessage: Message = { role: "user", content: prompt };
      await store.append(userMessage);
      history.push(userMessage);
      const system = await prompts.next();
      const turnStart = history.length;
      const result = await retryLostRound({
        client: compaction.client,
        signal,
        baseURL: args.baseURL,
        historyLength: () => history.length,
        notify: (notice) => output.retry(notice),
        run: (client) =>
          runAgent({
            client,
            tools,
            system,
            messages: history,
            beforeToolCall: policy,
            signal,
            maxTurns: args.maxTurns - history.slice(turnStart).filter(isRound).length,
            onEvent,
          }),
      });
      output.finish(summary(result.status, result.text));
      return result.status;
    } catch (error) {
      const message = describeError(error, args.baseURL);
      output.finish({ ...summary("error", ""), error: message });
      stderr.write(`mini-agent: ${message}\n`);
      if (args.debug && error instanceof Error && error.stack)
        stderr.write(`${scrubURLs(error.stack, args.baseURL)}\n`);
      return error instanceof CompactionError ? "compaction_failed" : "error";
    } finally {
      stopper.endTurn();
    }
  };

  try {
    if (task !== undefined) return statusCode(await runTurn(task));
    if (!input) return exitCodes.done;
    for (let line = await input.nextPrompt(); line !== undefined; line = await input.nextPrompt()) {
      stopper.resetIdle();
      if (line === "/exit") break;
      const compact = compactCommand(line);
      if (compact) {
        const system = await prompts.next();
        const request = { system, messages: history, tools: tools.map((tool) => tool.spec) };
        await compaction.command(compact.instructions, request, stopper);
      } else if (line.trim() !== "" && (await runTurn(line)) === "compaction_failed")
        return exitCodes.compactionFailed;
      if (stopper.exitCode !== undefined) break;
    }
    return exitCodes.done;
  } finally {
    rl?.close();
    await store.close();
  }
}

/** How a turn ended; a failed compaction ends the run (exit 4), as retrying it would fail again. */
type TurnStatus = TurnSummary["status"] | "compaction_failed";

function statusCode(status: TurnStatus): number {
  switch (status) {
    case "completed":
      return exitCodes.done;
    case "aborted":
      return exitCodes.interrupted;
    case "max_turns":
      return exitCodes.maxTurns;
    case "error":
      return exitCodes.error;
    case "compaction_failed":
      return exitCodes.compactionFailed;
  }
}

function sandboxName(state: SandboxState | undefined): string {
  if (state === undefined) return "unused (bash denied)";
  if (state.kind !== "unavailable") return state.kind;
  return state.mode === "required" ? "required-unavailable" : "unavailable";
}

const isRound = (message: Message) => message.role === "assistant";
