import { stat } from "node:fs/promises";
import { homedir } from "node:os";
import { isatty } from "node:tty";
import { contextWindowFor } from "../app/compaction.js";
import type { RunMcp } from "../app/mcp.js";
import { mcpTurnStart } from "../app/mcp-turn.js";
import { type ModeState, withModeLine } from "../app/modes.js";
import { imageNotKeptLine } from "../app/notices.js";
import { approvedWrites, cliPolicy, type Question, type RuleBook } from "../app/policy.js";
import { imageAttachments } from "../app/prompt-images.js";
import { providerFor } from "../app/provider.js";
import { openToContinue } from "../app/resume.js";
import { allSessions, formatSessions, sessionToResume } from "../app/sessions.js";
import type { Stopper } from "../app/signals.js";
import { RunSkills } from "../app/skills.js";
import { systemPrompts } from "../app/system-prompt.js";
import { FileChanges } from "../rewind/changes.js";
import { Journal } from "../runner/journal.js";
import { SessionRunner } from "../runner/runner.js";
import {
  keepSandboxAnswers,
  resolveSandbox,
  type SandboxState,
  sandboxName,
} from "../sandbox/bwrap.js";
import { homeInSandbox } from "../sandbox/home.js";
import { sweepOrphansOnce } from "../sandbox/reaper.js";
import { listSessions, Session } from "../session/session.js";
import { SessionStore, sessionsDir, stateHome } from "../session/store.js";
import { createWorkspaceTools } from "../tools/index.js";
import { SeenFiles } from "../tools/seen.js";
import type { BeforeToolCall, ToolCall } from "../types.js";
import { visible } from "../visible.js";
import { type CliArgs, exitCodes, UsageError } from "./args.js";
import { createOutput } from "./formats.js";
import { openTerminal, type TerminalInput, taskFromStdin } from "./input.js";
import type { JsonInput } from "./json-input.js";
import { promptLoop } from "./prompt-loop.js";
import { rewindAtPrompt } from "./rewind-turn.js";
import { ruleBook, rulesFile } from "./rules-command.js";
import { streamJsonLine } from "./stream-json.js";
import { banner, recap } from "./terminal/banner.js";
import { SessionStatus } from "./terminal/status-line.js";
import { type TerminalView, terminalView } from "./terminal/view.js";
import { cliTurn, EndAfterCall, statusCode } from "./turn.js";
import { typedImages } from "./typed-images.js";

export { defaultModel } from "../app/provider.js";

/** Runs one task, or an interactive session, and returns the exit code. */
export async function runCli(args: CliArgs, workspace: string, stopper: Stopper): Promise<number> {
  const view = terminalView(args.outputFormat, process, process.env, !args.hideThinking);
  const stderr = view?.stderr ?? process.stderr;
  const dir = sessionsDir(process.env, workspace);
  if (args.sessions) {
    const state = stateHome(process.env);
    const tell = (line: string) => stderr.write(`mini-agent: ${visible(line)}\n`);
    const listed = args.allSessions ? await allSessions(state, tell) : await listSessions(dir);
    process.stdout.write(formatSessions(listed, { folders: args.allSessions }));
    return exitCodes.done;
  }
  if (args.resume === "") {
    const { chooseSession } = await import("./picker.js");
    const chosen = await chooseSession(dir);
    if (chosen === undefined) {
      stderr.write("mini-agent: no session chosen; nothing resumed\n");
      return exitCodes.done;
    }
    args = { ...args, resume: chosen };
  }
  const parts = await prepare({ args, workspace, stopper, view, stderr, dir });
  const { runner, journal, status, turn } = await wire(parts);
  const { task, json, input } = parts;
  // Why the run ends, when it ends before its input did: each user line read and not run is told.
  let ended = "the run stopped on an error";
  try {
    if (task !== undefined) return statusCode(await cliTurn(turn, task, parts.images));
    const source = json ?? input?.terminal;
    if (!source) return exitCodes.done;
    const literal = json !== undefined;
    const loop = { source, literal, runner, stopper, stderr, status, mode: parts.mode };
    return await promptLoop({
      ...loop,
      runTurn: (prompt, images) => cliTurn(turn, prompt, images),
      skillPrompt: async (name, text) => {
        await parts.skills.refresh();
        return parts.skills.message([name], text);
      },
      rewind: (intent) => {
        const write = (text: string) => stderr.write(text);
        const state = stateHome(process.env);
        return rewindAtPrompt({ runner, journal, workspace, stateDir: state, write }, intent);
      },
      baseURL: args.baseURL,
      ...(!literal && { typedImages: (text) => typedImages(text, args.cwd, homedir()) }),
      ended: (reason) => {
        ended = reason;
      },
    });
  } finally {
    json?.end(ended);
    input?.rl.close();
    await journal.close();
    await parts.mcp?.close();
    // A run that never ran bash still ends what a killed mini-agent left: once its work is done.
    sweepOrphansOnce();
    keepSandboxAnswers();
  }
}

interface RunStart {
  args: CliArgs;
  workspace: string;
  stopper: Stopper;
  view: TerminalView | undefined;
  stderr: NodeJS.WritableStream;
  /** This workspace's sessions folder. */
  dir: string;
}

/**
 * Everything a run needs before its session exists: the provider's client, the rules, the tools,
 * the sandbox's answer, the input (the task, the terminal or JSON lines) and a resumed session.
 */
async function prepare(start: RunStart) {
  const { args, workspace, stopper, view, stderr, dir } = start;
  const { env } = process;
  const connect = providerFor(args, env);
  const skills = new RunSkills(
    { workspace, home: homedir(), state: stateHome(env), folders: args.skillFolders },
    contextWindowFor(connect.model, args.contextWindow),
    (line) => stderr.write(`mini-agent: ${line}\n`),
  );
  const sandboxOptions = {
    mode: args.sandbox,
    readOnly: [stateHome(env)],
    hide: args.sandboxHide,
    limits: args.sandboxLimits,
    readable: skills.roots,
    probeCache: stateHome(env),
  };
  // Probing bwrap runs a process: started first, it runs while the rest is set up and the SDK
  // loads. Its answer matters when bash can run, or for the read-only set, which needs bwrap.
  const probing = resolveSandbox(sandboxOptions);
  const resumePath =
    args.continue || args.resume !== undefined
      ? await sessionToResume(dir, args.resume)
      : undefined;
  const json = await jsonInput(args, workspace);
  // Asked of the descriptor: Node makes `process.stdin`, a stream, when it is first asked for.
  const terminal = isatty(0);
  const interactive = args.task === undefined && terminal && !json;
  const given = args.task ?? (interactive || json ? undefined : await taskFromStdin(process.stdin));
  const rules = await ruleBook(rulesFile(env, workspace), args.rules);
  const allowRules = rules.current().some((rule) => rule.effect === "allow");
  const bashCanRun = args.allowBash || terminal || json !== undefined || allowRules;
  // The session's id, for a provider that keys its prompt cache by it, once the session exists.
  const session: { id?: () => string | undefined } = {};
  const provider = await connect.client(
    (notice) => stderr.write(`mini-agent: ${notice}\n`),
    () => session.id?.(),
  );
  const seen = new SeenFiles();
  const approvedWrite = approvedWrites(stateHome(env));
  // write and edit keep what they change, for a rewind.
  const changes = new FileChanges({ root: workspace, stateDir: stateHome(env) });
  const tools = changes.wrap(
    createWorkspaceTools(workspace, {
      bash: { sandbox: sandboxOptions },
      stateDir: stateHome(env),
      seen,
      protectedWrites: approvedWrite.allows,
      readOnlyRoots: skills.roots,
    }),
  );
  await skills.refresh();
  const { task, images } = await taskOf(args, skills, given);
  const probed = await probing;
  const sandbox = bashCanRun || probed.kind === "bwrap" ? probed : undefined;
  warnSandbox(sandbox, stderr, workspace);
  const input = await terminalInput(json, view);
  stopper.interactive = interactive;
  input?.terminal.onInterrupt(() => stopper.signal("SIGINT"));
  const connecting = mcpServers(args, workspace, input?.terminal, stderr);
  const resumed = resumePath ? await resumeSession(resumePath, stderr) : undefined;
  const mcp = await connecting;
  return {
    mcp,
    ...start,
    mode: { current: args.mode } satisfies ModeState as ModeState,
    session,
    approvedWrite,
    model: connect.model,
    provider,
    tools,
    changes,
    seen,
    rules,
    sandbox,
    json,
    input,
    task,
    images,
    resumed,
    skills,
  };
}

/**
 * The task as it is sent: the text of each `--skill` before it, each `--image` after it. Either
 * flag without a task is refused in one line.
 */
async function taskOf(args: CliArgs, skills: RunSkills, given: string | undefined) {
  if (args.skills.length > 0 && given === undefined)
    throw new UsageError("--skill needs a task; at the prompt, type /skill NAME");
  const task = args.skills.length === 0 ? given : await skills.message(args.skills, given ?? "");
  if (args.images.length > 0 && task === undefined)
    throw new UsageError('--image needs a task: mini-agent --image FILE "task"');
  return { task, images: await imageAttachments(args.images, args.cwd) };
}

/** The session, the policy, the system prompt and the runner over them; how a turn is shown. */
async function wire(parts: Awaited<ReturnType<typeof prepare>>) {
  const { args, workspace, stopper, view, stderr, dir, model, sandbox, input, json, resumed } =
    parts;
  const env = process.env;
  const create = () =>
    Session.create({
      dir,
      workspace,
      model,
      sandbox: sandboxName(sandbox),
      onImageNotKept: (note) => stderr.write(imageNotKeptLine(note)),
    });
  const journal = new Journal(new SessionStore(stateHome(env), create, resumed?.session));
  parts.session.id = () => journal.sessionId;
  const endAfter = new EndAfterCall(stopper);
  const policy = askingPolicy({ ...parts, journal, endAfter });
  const prompts = await systemPrompts(
    {
      workspace,
      bash: args.allowBash ? "allowed" : input || json ? "ask" : "denied",
      sandboxed: sandbox?.kind === "bwrap",
      platform: process.platform,
    },
    { home: homedir(), state: stateHome(env) },
    visible,
    () => parts.skills.prompt(runner.compacting.current),
  );
  if (view && input && parts.task === undefined) {
    const info = { model, provider: args.provider, sandbox: sandboxName(sandbox), workspace };
    stderr.write(banner(info, view.styles, view.fit));
  }
  if (prompts.startLine !== "") stderr.write(`mini-agent: ${prompts.startLine}\n`);
  if (view && resumed) stderr.write(recap(resumed, new Date(), view.styles, view.fit));
  const contextWindow = contextWindowFor(model, args.contextWindow);
  // The runner's tool list: the workspace's, then the MCP tools of the servers up at turn start.
  const tools = [...parts.tools];
  const runner = new SessionRunner({
    client: parts.provider,
    tools,
    beforeToolCall: policy,
    journal,
    // Each turn starts here: the MCP tools and instructions of the servers up now join it.
    system: async () => {
      const instructions = await mcpTurnStart(parts.mcp, tools, parts.tools, journal);
      const system = withModeLine(`${await prompts.next()}${instructions}`, parts.mode.current);
      const skills = parts.skills.notice();
      if (skills) await journal.record({ type: "skills", skills });
      return system;
    },
    info: { model, workspace, sandbox: sandboxName(sandbox) },
    provider: args.provider,
    ...(resumed && { history: resumed.messages, imagesRefused: resumed.imagesRefused }),
    ...(resumed?.compaction && { resume: resumed.compaction }),
    maxTurns: args.maxTurns,
    ...(args.tokenBudget !== undefined && { tokenBudget: args.tokenBudget }),
    ...(contextWindow !== undefined && { contextWindow }),
    seen: parts.seen,
    changes: parts.changes,
    retry: { env, ...(args.baseURL !== undefined && { baseURL: args.baseURL }) },
  });
  const compactions = () => runner.compacting.current?.count ?? 0;
  const status = view && new SessionStatus(model, contextWindow, runner.counter, compactions);
  const streams = { stdout: process.stdout, stderr };
  const output = (signal: AbortSignal) =>
    (status && view?.turn(signal, status)) ?? createOutput(args.outputFormat, streams);
  const turn = {
    runner,
    stopper,
    stderr,
    output,
    endAfter,
    baseURL: args.baseURL,
    debug: args.debug,
    env,
  };
  return { runner, journal, status, turn };
}

interface PolicyParts {
  args: CliArgs;
  workspace: string;
  stopper: Stopper;
  stderr: NodeJS.WritableStream;
  rules: RuleBook;
  sandbox: SandboxState | undefined;
  input: { terminal: TerminalInput } | undefined;
  json: JsonInput | undefined;
  journal: Journal;
  endAfter: EndAfterCall;
  approvedWrite: ReturnType<typeof approvedWrites>;
  mcp: RunMcp | undefined;
  mode: ModeState;
}

/** The CLI's policy, asking the terminal or the JSON input when there is one; decisions journaled. */
function askingPolicy(parts: PolicyParts): BeforeToolCall {
  const { args, stopper, input, json, endAfter } = parts;
  return cliPolicy({
    bash: args.allowBash ? "allow" : "ask",
    rules: parts.rules,
    workspace: parts.workspace,
    sandboxed: parts.sandbox?.kind === "bwrap",
    tell: (line) => parts.stderr.write(line),
    ...(input && {
      ask: async (call: ToolCall, question: Question) => {
        const answer = await input.terminal.ask(call, question, stopper.turnSignal);
        if (answer === "closed") {
          endAfter.mark(call.id);
          stopper.inputClosed();
        }
        return answer;
      },
    }),
    ...(json && { ask: (call, question) => json.ask(call, question, stopper.turnSignal) }),
    protectedFiles: parts.approvedWrite,
    record: (decision) => parts.journal.record({ type: "approval", decision }),
    mcpHints: (name) => parts.mcp?.hints(name),
    mode: () => parts.mode.current,
  });
}

/**
 * The run's MCP servers, unless `--no-mcp`: loaded by `import()`, and the SDK only when a server
 * is to start. A project server not yet trusted is asked about on a terminal, else skipped.
 */
async function mcpServers(
  args: CliArgs,
  workspace: string,
  terminal: TerminalInput | undefined,
  stderr: NodeJS.WritableStream,
): Promise<RunMcp | undefined> {
  if (args.noMcp) return undefined;
  const { startMcp } = await import("../app/mcp.js");
  return await startMcp({
    workspace,
    state: stateHome(process.env),
    flagFiles: args.mcpConfig,
    env: process.env,
    ...(terminal && { confirm: (question: string) => terminal.confirm(question) }),
    tell: (line) => stderr.write(line),
  });
}

/** `--input-format stream-json`: loaded only then, as it reads lines with `node:readline`. */
async function jsonInput(args: CliArgs, workspace: string): Promise<JsonInput | undefined> {
  if (args.inputFormat !== "stream-json") return undefined;
  const { JsonInput } = await import("./json-input.js");
  return new JsonInput(process.stdin, {
    send: (event) => streamJsonLine(process.stdout, event),
    approvalTimeoutMs: args.approvalTimeoutMs,
    workspace,
  });
}

/** The terminal's prompts and questions, when stdin is one and no JSON comes on it. */
async function terminalInput(json: JsonInput | undefined, view: TerminalView | undefined) {
  if (!isatty(0) || json) return undefined;
  return openTerminal(process.stdin, process.stderr, view?.activity);
}

/** A resumed session, with when it was last used (read before opening it writes a repair). */
async function resumeSession(path: string, stderr: NodeJS.WritableStream) {
  const updatedAt = (await stat(path)).mtime;
  const opened = await openToContinue(path, (line) => stderr.write(line));
  return { id: opened.session.id, updatedAt, ...opened };
}

function warnSandbox(
  sandbox: SandboxState | undefined,
  stderr: NodeJS.WritableStream,
  workspace: string,
): void {
  const home = sandbox?.kind === "bwrap" ? homeInSandbox(process.env, workspace) : undefined;
  if (home?.kind === "private") stderr.write(`mini-agent: note: ${home.reason}\n`);
  if (sandbox?.kind !== "unavailable") return;
  stderr.write(
    sandbox.mode === "required"
      ? `mini-agent: bash will be refused: --sandbox required, but ${sandbox.reason}\n`
      : `mini-agent: warning: bash runs without a sandbox: ${sandbox.reason}\n`,
  );
}
