import { homedir } from "node:os";
import { isatty } from "node:tty";
import { builtInCommands } from "../app/commands.js";
import { imageAttachments } from "../app/prompt-images.js";
import { type AgentSession, type FrontEnd, openAgentSession } from "../app/session.js";
import { allSessions, sessionToResume } from "../app/sessions.js";
import type { Stopper } from "../app/signals.js";
import { keepSandboxAnswers, sandboxName } from "../sandbox/bwrap.js";
import { sweepOrphansOnce } from "../sandbox/reaper.js";
import { listSessions } from "../session/session.js";
import { sessionsDir, stateHome } from "../session/store.js";
import { visible } from "../visible.js";
import { type CliArgs, exitCodes, UsageError } from "./args.js";
import { createOutput } from "./formats.js";
import { openTerminal, type TerminalInput, taskFromStdin } from "./input.js";
import type { JsonInput } from "./json-input.js";
import { promptLoop } from "./prompt-loop.js";
import { rewindAtPrompt } from "./rewind-turn.js";
import { formatSessions } from "./session-list.js";
import { agentSettings } from "./settings.js";
import { commandsHelp, completeCommand } from "./slash-commands.js";
import { streamJsonLine } from "./stream-json.js";
import { banner, recap } from "./terminal/banner.js";
import { SessionStatus } from "./terminal/status-line.js";
import { planLines } from "./terminal/tool-lines.js";
import { type TerminalView, terminalView } from "./terminal/view.js";
import { cliTurn, EndAfterCall, statusCode } from "./turn.js";
import { typedImages } from "./typed-images.js";

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
  const resume =
    args.continue || args.resume !== undefined
      ? await sessionToResume(dir, args.resume)
      : undefined;
  const json = await jsonInput(args, workspace);
  // Asked of the descriptor: Node makes `process.stdin`, a stream, when it is first asked for.
  const terminal = isatty(0);
  const interactive = args.task === undefined && terminal && !json;
  const given = args.task ?? (interactive || json ? undefined : await taskFromStdin(process.stdin));
  if (args.skills.length > 0 && given === undefined)
    throw new UsageError("--skill needs a task; at the prompt, type /skill NAME");
  if (args.images.length > 0 && given === undefined)
    throw new UsageError('--image needs a task: mini-agent --image FILE "task"');
  const images = await imageAttachments(args.images, args.cwd);
  // Tab completes the built-in commands' names, and the user's once the session has found them.
  const names = { user: (): readonly string[] => [] };
  const input = await terminalInput(json, view, (line) =>
    completeCommand(line, [...builtInCommands, ...names.user()]),
  );
  stopper.interactive = interactive;
  input?.terminal.onInterrupt(() => stopper.signal("SIGINT"));
  const endAfter = new EndAfterCall(stopper);
  const settings = {
    ...agentSettings(args, process.env),
    workspace,
    file: "first-record" as const,
  };
  const session = await openAgentSession(
    { ...settings, ...(resume !== undefined && { resume }) },
    cliFrontEnd({ stderr, stopper, endAfter, input, json }),
  );
  names.user = () => session.commands.commands.map((command) => command.name);
  // Why the run ends, when it ends before its input did: each user line read and not run is told.
  let ended = "the run stopped on an error";
  try {
    // A task `/NAME args` naming one of the user's commands is its prompt.
    const asked =
      given === undefined ? undefined : ((await session.commands.prompt(given)) ?? given);
    const task =
      args.skills.length === 0 ? asked : await session.skills.message(args.skills, asked ?? "");
    const { runner, journal } = session;
    const greet = input !== undefined && task === undefined;
    const parts = { args, view, stderr, stopper, endAfter, workspace, greet };
    const { status, turn } = shown(session, parts);
    if (task !== undefined) return statusCode(await cliTurn(turn, task, images));
    const source = json ?? input?.terminal;
    if (!source) return exitCodes.done;
    const literal = json !== undefined;
    const loop = { source, literal, runner, stopper, stderr, status, mode: session.mode };
    return await promptLoop({
      ...loop,
      runTurn: (prompt, images) => cliTurn(turn, prompt, images),
      userCommand: (text) => session.commands.prompt(text),
      commandsHelp: async () => {
        await session.commands.refresh();
        return commandsHelp(session.commands.listed());
      },
      skillPrompt: async (name, text) => {
        await session.skills.refresh();
        return session.skills.message([name], text);
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
    await session.close();
    // A run that never ran bash still ends what a killed mini-agent left: once its work is done.
    sweepOrphansOnce();
    keepSandboxAnswers();
  }
}

/** What the terminal or the JSON input does for the session: questions, lines, the notices. */
function cliFrontEnd(parts: {
  stderr: NodeJS.WritableStream;
  stopper: Stopper;
  endAfter: EndAfterCall;
  input: { terminal: TerminalInput } | undefined;
  json: JsonInput | undefined;
}): FrontEnd {
  const { stderr, stopper, endAfter, input, json } = parts;
  const tell = (line: string) => void stderr.write(line);
  const terminal = input?.terminal;
  if (terminal)
    return {
      tell,
      notice: (text) => tell(`mini-agent: ${text}\n`),
      confirm: (question) => terminal.confirm(question),
      ask: async (call, question) => {
        const answer = await terminal.ask(call, question, stopper.turnSignal);
        if (answer === "closed") {
          endAfter.mark(call.id);
          stopper.inputClosed();
        }
        return answer;
      },
    };
  return {
    tell,
    notice: (text) => tell(`mini-agent: ${text}\n`),
    ...(json && { ask: (call, question) => json.ask(call, question, stopper.turnSignal) }),
  };
}

/** How the session and its turns are shown: the banner, the status line, the output format. */
function shown(
  session: AgentSession,
  parts: {
    args: CliArgs;
    view: TerminalView | undefined;
    stderr: NodeJS.WritableStream;
    stopper: Stopper;
    endAfter: EndAfterCall;
    workspace: string;
    /** An interactive session: the banner first. */
    greet: boolean;
  },
) {
  const { args, view, stderr, stopper, endAfter, workspace } = parts;
  const { runner, model, sandbox, resumed, contextWindow } = session;
  if (view && parts.greet) {
    const boundary = sandbox?.kind === "bwrap" && session.mode.current === "code";
    const info = {
      model,
      provider: args.provider,
      sandbox: sandboxName(sandbox),
      workspace,
      boundary,
    };
    stderr.write(banner(info, view.styles, view.fit));
  }
  if (session.startLine !== "") stderr.write(`mini-agent: ${session.startLine}\n`);
  if (view && resumed) stderr.write(recap(resumed, new Date(), view.styles, view.fit));
  const plan = resumed && args.outputFormat === "text" ? runner.plan : undefined;
  if (plan) stderr.write(`mini-agent: the plan so far:\n${planLines(plan)}`);
  const compactions = () => runner.compacting.current?.count ?? 0;
  const status = view && new SessionStatus(model, contextWindow, runner.counter, compactions);
  const streams = { stdout: process.stdout, stderr };
  const output = (signal: AbortSignal) =>
    (status && view?.turn(signal, status)) ?? createOutput(args.outputFormat, streams);
  const { baseURL, debug } = args;
  const turn = { runner, stopper, stderr, output, endAfter, baseURL, debug, env: process.env };
  return { status, turn };
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
async function terminalInput(
  json: JsonInput | undefined,
  view: TerminalView | undefined,
  complete: (line: string) => [string[], string],
) {
  if (!isatty(0) || json) return undefined;
  return openTerminal(process.stdin, process.stderr, view?.activity, complete);
}
