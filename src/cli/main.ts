#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { isAbsolute } from "node:path";
import { describeError } from "../app/errors.js";
import { endWithStdin, Stopper } from "../app/signals.js";
import { stateHome } from "../state-home.js";
import { scrubURLs } from "../url.js";
import { exitCodes } from "./args.js";
import { commandWords, type ParsedFlags, parseFlags } from "./flags.js";
import { usage } from "./help.js";
import { agentSettings } from "./settings.js";

/**
 * The `mini-agent` command. This file stays light: `--version` and `--help` load nothing else,
 * and the provider SDK is loaded only when a turn runs. Every way out goes through
 * `process.exit` with a documented code, so exit hooks (killing the commands bash started) run:
 * the end of the work, a signal, a closed stdout, and an error nothing else caught.
 */
let baseURL: string | undefined;

async function main(argv: string[], stopper: Stopper): Promise<number> {
  let debug = argv.includes("--debug");
  // The version alone is answered before the arguments are parsed (which loads Node's parser).
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    process.stdout.write(`${version()}\n`);
    return exitCodes.done;
  }
  // `batch` is a front end of its own, with its own flags (and the agent's after `--`).
  if (argv[0] === "batch") {
    const { batchCommand } = await import("../batch/command.js");
    return await batchCommand(argv.slice(1));
  }
  try {
    const flags = parseFlags(argv);
    debug = flags.values.debug ?? false;
    if (flags.values.help) {
      process.stdout.write(`${usage}\n`);
      return exitCodes.done;
    }
    if (flags.values.version) {
      process.stdout.write(`${version()}\n`);
      return exitCodes.done;
    }
    if (flags.values["end-with-stdin"]) endWithStdin(stopper);
    if (asksSandbox(flags)) {
      // Whether bwrap works here is known only by running it, or from the answer kept in the
      // state folder (named as `stateHome` does; a relative one is refused later, with the
      // arguments). Started now, a probe runs while the turn loads, and the turn awaits this
      // same answer (one per bwrap binary).
      const { resolveSandbox } = await import("../sandbox/bwrap.js");
      const state = stateHome(process.env);
      void resolveSandbox({ mode: "auto", ...(isAbsolute(state) && { probeCache: state }) });
    }
    const { configuredArgs } = await import("./configured.js");
    const configured = await configuredArgs(flags, process.env, process.stderr);
    const { args, workspace } = configured;
    baseURL = args.baseURL;
    if (args.configCommand) {
      const { configCommand } = await import("./config-command.js");
      return configCommand(configured, process.env, (text) => process.stdout.write(text));
    }
    if (args.trustCommand) {
      const { trustCommand } = await import("./config-command.js");
      return await trustCommand(configured, (text) => process.stdout.write(text));
    }
    if (args.acpCommand) {
      // The editor names each session's folder; the protocol owns stdout from here on.
      const { acpCommand } = await import("../acp/agent.js");
      const settings = agentSettings(args, process.env);
      const { approvalTimeoutMs } = args;
      return await acpCommand({ settings, approvalTimeoutMs }, version(), stopper);
    }
    if (args.exportCommand) {
      const { exportCommand } = await import("./export-command.js");
      return await exportCommand(args.exportCommand, workspace);
    }
    if (args.rewindCommand) {
      const { rewindCommand } = await import("./rewind-command.js");
      return await rewindCommand(args.rewindCommand, workspace, stopper);
    }
    if (args.skillsCommand) {
      const { skillsCommand } = await import("./skills-command.js");
      return await skillsCommand(args, workspace);
    }
    if (args.rulesCommand) {
      const { rulesCommand } = await import("./rules-command.js");
      // A line of `rules explain --stdin` may name another folder: the same flags, read there.
      const inFolder = (cwd: string) =>
        configuredArgs({ ...flags, values: { ...flags.values, cwd } }, process.env, process.stderr);
      return await rulesCommand(configured, inFolder);
    }
    if (args.mcpCommand) {
      const { mcpCommand } = await import("./mcp-command.js");
      return await mcpCommand(args, workspace);
    }
    const { runCli } = await import("./run.js");
    return await runCli(args, workspace, stopper);
  } catch (error) {
    report(error, baseURL, debug);
    return isUsageError(error) ? exitCodes.usage : exitCodes.error;
  }
}

/**
 * Whether the command will likely need to know if bwrap works here: a turn, or `rules explain`,
 * unless a flag turns the sandbox off (a configuration file may too, later: the probe is then
 * only wasted).
 */
function asksSandbox(parsed: ParsedFlags): boolean {
  const { values } = parsed;
  if (values.sandbox === "off" || values.sessions) return false;
  const [first, second] = commandWords(parsed);
  if (first === "rules") return second === "explain";
  return !["export", "rewind", "config", "trust", "skills", "mcp", "acp"].includes(first ?? "");
}

/**
 * Known by name: in the bundle the turn is a separate file (loaded with V8's code cache) with its
 * own copy of the class, so `instanceof` would miss the errors it throws.
 */
function isUsageError(error: unknown): boolean {
  return error instanceof Error && error.name === "UsageError";
}

/** One line on stderr; the stack only with --debug. Never a credential of the base URL. */
function report(error: unknown, baseURL: string | undefined, debug: boolean): void {
  process.stderr.write(`mini-agent: ${describeError(error, baseURL)}\n`);
  if (debug && error instanceof Error && error.stack)
    process.stderr.write(`${scrubURLs(error.stack, baseURL)}\n`);
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

const stopper = new Stopper({
  write: (text) => process.stderr.write(text),
  exit: (code) => process.exit(code),
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
  process.on(signal, () => stopper.signal(signal));
process.stdout.on("error", (error) => stopper.stdoutFailed(error));
// Nothing on stderr is worth ending a run for: a closed stderr only loses the notices.
process.stderr.on("error", () => {});
process.on("uncaughtException", (error) => {
  report(error, baseURL, process.argv.includes("--debug"));
  process.exit(exitCodes.error);
});

// Exit as soon as the work is done: nothing left (an idle keep-alive socket, a pool) deserves the
// wait, except stdout: a pipe to a slow reader still holds the end of the answer, so the exit
// waits until everything written has left (or failed, which then decides the exit code).
main(process.argv.slice(2), stopper).then((code) =>
  process.stdout.write("", () => setImmediate(() => process.exit(stopper.exitCode ?? code))),
);
