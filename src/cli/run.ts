import { homedir } from "node:os";
import { type AgentEvent, runAgent } from "../agent.js";
import type { Compaction } from "../compaction/record.js";
import { normalizeHistory } from "../history/normalize.js";
import { httpFetch } from "../providers/http-transport.js";
import { resolveSandbox, type SandboxState } from "../sandbox/bwrap.js";
import { sweepOrphansOnce } from "../sandbox/reaper.js";
import { secretRedactor } from "../secrets.js";
import { listSessions, Session } from "../session/session.js";
import { createWorkspaceTools } from "../tools/index.js";
import { SeenFiles } from "../tools/seen.js";
import type { Message, ModelClient, ToolCall } from "../types.js";
import { visible } from "../visible.js";
import { type CliArgs, exitCodes, UsageError } from "./args.js";
import { BudgetClient, budgetStop } from "./budget.js";
import { CliCompaction, CompactionError, contextWindowFor } from "./compaction.js";
import { describeError } from "./errors.js";
import { createOutput } from "./formats.js";
import { TerminalInput, taskFromStdin } from "./input.js";
import type { JsonInput } from "./json-input.js";
import type { Output, TurnSummary } from "./output.js";
import { type BashMode, cliPolicy, type Question } from "./policy.js";
import { retryLostRound } from "./retry.js";
import { ruleBook, rulesFile } from "./rules-command.js";
import type { Stopper } from "./signals.js";
import { helpText, type LineIntent, lineIntent, unknownCommand } from "./slash-commands.js";
import { formatSessions, SessionStore, sessionsDir, sessionToResume, stateHome } from "./store.js";
import { streamJsonLine } from "./stream-json.js";
import { systemPrompts } from "./system-prompt.js";
import { SessionStatus } from "./terminal/status-line.js";
import { terminalView } from "./terminal/view.js";
import { scrubURLs } from "./url.js";
import { CountingClient } from "./usage.js";

export const defaultModel = "claude-sonnet-5-5";

/** Checks the provider's configuration now; loads its SDK only when the client is made. */
function providerFor(
  args: CliArgs,
  env: NodeJS.ProcessEnv,
): { model: string; client(): Promise<ModelClient> } {
  /** What both clients take from the flags. */
  const common = {
    fetch: httpFetch,
    ...(args.baseURL !== undefined && { baseURL: args.baseURL }),
    ...(args.thinking !== undefined && { thinking: args.thinking }),
  };
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
        return new OpenAIModelClient({ model, ...common, ...(apiKey && { apiKey }) });
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
      return new AnthropicModelClient({ apiKey, model, ...common });
    },
  };
}

/** Runs one task, or an interactive session, and returns the exit code. */
export async function runCli(args: CliArgs, workspace: string, stopper: Stopper): Promise<number> {
  const { stdin, stdout, env } = process;
  const view = terminalView(args.outputFormat, process, env, !args.hideThinking);
  const stderr = view?.stderr ?? process.stderr;
  const dir = sessionsDir(env, workspace);
  if (args.sessions) {
    stdout.write(formatSessions(await listSessions(dir)));
    return exitCodes.done;
  }
  const connect = providerFor(args, env);
  const sandboxOptions = {
    mode: args.sandbox,
    readOnly: [stateHome(env)],
    hide: args.sandboxHide,
    limits: args.sandboxLimits,
  };
  // Probing bwrap runs a process: started first, it runs while the rest is set up and the SDK
  // loads. Its answer matters when bash can run, or for the read-only set, which needs bwrap.
  const probing = resolveSandbox(sandboxOptions);
  const resumePath =
    args.continue || args.resume !== undefined
      ? await sessionToResume(dir, args.resume)
      : undefined;
  // Loaded only for JSON input: it reads lines with `node:readline`.
  const json: JsonInput | undefined =
    args.inputFormat === "stream-json"
      ? new (await import("./json-input.js")).JsonInput(stdin, {
          send: (event) => streamJsonLine(stdout, event),
          approvalTimeoutMs: args.approvalTimeoutMs,
        })
      : undefined;
  const interactive = args.task === undefined && stdin.isTTY === true && !json;
  const task = args.task ?? (interactive || json ? undefined : await taskFromStdin(stdin));
  const model = connect.model;
  const bash: BashMode = args.allowBash ? "allow" : "ask";
  const rules = await ruleBook(rulesFile(env, workspace), args.rules);
  const allowRules = rules.current().some((rule) => rule.effect === "allow");
  const bashCanRun = args.allowBash || stdin.isTTY === true || json !== undefined || allowRules;
  // The output of the running turn: approvals and each request's usage are reported to it.
  let output: Output | undefined;
  const provider = await connect.client();
  // Each request's usage goes to the session, which exists by then: the prompt comes first.
  const client = new CountingClient(
    args.tokenBudget === undefined ? provider : new BudgetClient(provider, args.tokenBudget),
    async (usage) => {
      await store.appendUsage(usage);
      output?.usage?.(usage);
    },
  );
  const seen = new SeenFiles();
  // The one protected file the policy's last decision approved (see cliPolicy's protectedFiles).
  let approvedFile: string | undefined;
  const tools = createWorkspaceTools(workspace, {
    bash: { sandbox: sandboxOptions },
    stateDir: stateHome(env),
    seen,
    protectedWrites: (realPath) => realPath === approvedFile,
  });
  const probed = await probing;
  const sandbox = bashCanRun || probed.kind === "bwrap" ? probed : undefined;
  if (sandbox?.kind === "unavailable") {
    stderr.write(
      sandbox.mode === "required"
        ? `mini-agent: bash will be refused: --sandbox required, but ${sandbox.reason}\n`
        : `mini-agent: warning: bash runs without a sandbox: ${sandbox.reason}\n`,
    );
  }
  const rl =
    stdin.isTTY && !json
      ? (await import("node:readline")).createInterface({
          input: stdin,
          output: process.stderr,
          terminal: true,
        })
      : undefined;
  const input = rl && new TerminalInput(rl, process.stderr, view?.activity);
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
  const contextWindow = contextWindowFor(model, args.contextWindow);
  const compaction = new CliCompaction({
    inner: client,
    contextWindow,
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
    ...(json && { ask: (call, question) => json.ask(call, question, stopper.turnSignal) }),
    protectedFiles: { stateDir: stateHome(env), approved: (path) => (approvedFile = path) },
    record: async (decision) => {
      await store.appendApproval(decision);
      output?.approval?.(decision);
    },
  });
  const prompts = await systemPrompts(
    {
      workspace,
      bash: args.allowBash ? "allowed" : rl || json ? "ask" : "denied",
      sandboxed: sandbox?.kind === "bwrap",
      platform: process.platform,
    },
    { home: homedir(), state: stateHome(env) },
    visible,
  );
  if (prompts.startLine !== "") stderr.write(`mini-agent: ${prompts.startLine}\n`);

  const sessionStatus = new SessionStatus(
    model,
    contextWindow,
    client,
    () => compaction.client.current?.count ?? 0,
  );
  let announced = false;
  const runTurn = async (prompt: string): Promise<TurnStatus> => {
    const signal = stopper.beginTurn();
    const turnOutput =
      view?.turn(signal, sessionStatus) ?? createOutput(args.outputFormat, { stdout, stderr });
    output = turnOutput;
    const onEvent = async (event: AgentEvent) => {
      if (event.type === "message") {
        await store.append(event.message);
        history.push(event.message);
        if (event.message.role === "tool" && event.message.toolCallId === endTurnAfter)
          stopper.abortTurn();
      }
      turnOutput.event(event);
    };
    compaction.showIn(turnOutput);
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
      if (!announced) {
        announced = true;
        const sandboxUsed = sandboxName(sandbox);
        turnOutput.session?.({ id: store.id ?? "", model, workspace, sandbox: sandboxUsed });
      }
      const system = await prompts.next();
      const turnStart = history.length;
      const result = await retryLostRound({
        client: compaction.client,
        signal,
        baseURL: args.baseURL,
        env,
        historyLength: () => history.length,
        notify: async (notice) => {
          await store.appendRetry(notice);
          turnOutput.retry(notice);
        },
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
      turnOutput.finish(summary(result.status, result.text));
      return result.status;
    } catch (error) {
      const message = describeError(error, args.baseURL);
      const budget = budgetStop(error);
      if (budget) {
        turnOutput.finish({ ...summary("budget_exceeded", ""), error: budget.message });
        stderr.write(`mini-agent: ${budget.message}\n`);
        return "budget_exceeded";
      }
      turnOutput.finish({ ...summary("error", ""), error: message });
      stderr.write(`mini-agent: ${message}\n`);
      if (args.debug && error instanceof Error && error.stack)
        stderr.write(`${secretRedactor(env)(scrubURLs(error.stack, args.baseURL))}\n`);
      return error instanceof CompactionError ? "compaction_failed" : "error";
    } finally {
      stopper.endTurn();
    }
  };

  // Why the run ends, when it ends before its input did: each user line read and not run is told.
  let ended = "the run stopped on an error";
  try {
    if (task !== undefined) return statusCode(await runTurn(task));
    const typed = json ?? input;
    if (!typed) return exitCodes.done;
    // A session of many turns sweeps at its start, while its first prompt is awaited.
    sweepOrphansOnce();
    for (let line = await typed.nextPrompt(); line !== undefined; line = await typed.nextPrompt()) {
      stopper.resetIdle();
      // A program's user line is its prompt, as it is; commands are for a person at the prompt.
      const intent: LineIntent = json ? { kind: "prompt", text: line } : lineIntent(line);
      if (intent.kind === "exit") break;
      if (intent.kind === "help") stderr.write(`${helpText}\n`);
      else if (intent.kind === "unknown") stderr.write(`${unknownCommand(intent.name)}\n`);
      else if (intent.kind === "compact") {
        const system = await prompts.next();
        const request = { system, messages: history, tools: tools.map((tool) => tool.spec) };
        await compaction.command(intent.instructions, request, stopper);
      } else if (intent.text.trim() !== "") {
        const status = await runTurn(intent.text);
        const end = runEnds[status];
        if (end !== undefined) {
          ended = end;
          return statusCode(status);
        }
      }
      if (stopper.exitCode !== undefined) {
        ended = stopper.stopReason ?? "the run was stopped";
        break;
      }
    }
    return exitCodes.done;
  } finally {
    json?.end(ended);
    rl?.close();
    await store.close();
    // A run that never ran bash still ends what a killed mini-agent left: once its work is done.
    sweepOrphansOnce();
  }
}

/** How a turn ended; a failed compaction ends the run (exit 4), as retrying it would fail again. */
type TurnStatus = TurnSummary["status"] | "compaction_failed";

/** The outcomes of a turn that end the run, as each user line then not run is told. */
const runEnds: Partial<Record<TurnStatus, string>> = {
  compaction_failed: "the compaction failed",
  budget_exceeded: "the token budget was reached",
};

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
    case "budget_exceeded":
      return exitCodes.budgetExceeded;
  }
}

function sandboxName(state: SandboxState | undefined): string {
  if (state === undefined) return "unused (bash denied)";
  if (state.kind !== "unavailable") return state.kind;
  return state.mode === "required" ? "required-unavailable" : "unavailable";
}

const isRound = (message: Message) => message.role === "assistant";
