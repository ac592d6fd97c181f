import { realpath } from "node:fs/promises";
import type { MoreProtected } from "../protected/files.js";
import { guardProtected } from "../protected/guard.js";
import { withoutSecrets } from "../secrets.js";
import type { CommandOutput } from "./bounded-output.js";
import {
  CLOSE_INHERITED,
  resolveSandbox,
  type SandboxOptions,
  type SandboxState,
  sandboxedArgv,
  sandboxHint,
  sandboxLimits,
  settleKeptAnswer,
  staleSandbox,
} from "./bwrap.js";
import type { KeptReadOnly } from "./kept-read-only.js";
import { createPidsGroup } from "./pids-cgroup.js";
import { type CommandEnd, type GroupOptions, runInGroup } from "./process-group.js";
import { removeMountPoints } from "./project-files.js";
import { sweepOrphansOnce } from "./reaper.js";

export interface RunOptions {
  /** The folder the command starts in: the workspace, which the sandbox makes writable. */
  cwd: string;
  /**
   * The environment the command starts from. Secrets are removed and pagers and prompts turned
   * off; in the sandbox its `HOME` and `MINI_AGENT_HOME` also say what to hide.
   */
  env: NodeJS.ProcessEnv;
  /** Default `{ mode: "auto" }`: in bubblewrap when it works here, else plain bash. */
  sandbox?: SandboxOptions;
  timeoutMs: number;
  /** Between TERM and KILL when the command is stopped. */
  graceMs: number;
  /** Characters of output kept: the first and last halves. */
  maxOutputChars: number;
  signal?: AbortSignal;
  /**
   * What a caller keeps read-only for this command in the sandbox (what the rewind's snapshot
   * could not keep); outside the sandbox nothing stops a write.
   */
  keptReadOnly?: KeptReadOnly;
  /**
   * The session's own protected files (`MoreProtected`: the files its hooks run): in the
   * sandbox, read-only and checked after the command like the rest of the protected set.
   */
  moreProtected?: MoreProtected;
  /**
   * Run plainly though the sandbox works: the way out, which the caller's policy had a person
   * (or the person's explicit rule) approve. Never with `--sandbox required`: refused.
   */
  outside?: boolean;
}

/**
 * What became of a command: refused before it started (`reason` says why, in a sentence), or
 * run, in the sandbox or plainly, and ended.
 */
export type CommandOutcome =
  | { kind: "refused"; reason: string }
  | {
      kind: "ran";
      sandboxed: boolean;
      output: CommandOutput;
      end: CommandEnd;
      /** For a sandboxed command that failed: the sandbox as the likely cause, in a sentence. */
      hint?: string;
      /**
       * For a sandboxed command: each protected file it created, changed or removed, and what was
       * done about it (`guardProtected`), one line each; absent when it touched none.
       */
      undone?: string[];
      /**
       * The sandbox was taken to work from the state folder and this command found it cannot be
       * made here any more: the sentence saying that bash will not run again in this process.
       */
      lost?: string;
    };

/**
 * The sandbox's one entry: runs `command` with bash in `options.cwd`, in bubblewrap or plainly as
 * `options.sandbox` and this machine decide, in its own process group that ends with it.
 */
export async function runCommand(command: string, options: RunOptions): Promise<CommandOutcome> {
  // Before the command: what a killed mini-agent left running ends before the first command
  // starts; the sandbox is decided, and may refuse it.
  sweepOrphansOnce();
  const sandbox = await resolveSandbox(options.sandbox ?? { mode: "auto" });
  const refused = await refusal(sandbox);
  if (refused !== undefined) return { kind: "refused", reason: refused };
  if (options.outside && options.sandbox?.mode === "required")
    return { kind: "refused", reason: "--sandbox required: no command runs outside the sandbox" };
  const outcome =
    sandbox.kind === "bwrap" && !options.outside
      ? await inSandbox(sandbox.bwrap, command, options)
      : await plainly(command, options);
  // After the command: its processes have ended, and the sandbox's mount points are removed.
  return outcome;
}

/** Why a command may not run at all, or undefined when it may. */
async function refusal(sandbox: SandboxState): Promise<string | undefined> {
  if (sandbox.kind === "unavailable" && sandbox.mode === "required") {
    return `the sandbox is required but unavailable: ${sandbox.reason}`;
  }
  return sandbox.kind === "bwrap" ? await staleSandbox(sandbox.bwrap) : undefined;
}

async function plainly(command: string, options: RunOptions): Promise<CommandOutcome> {
  const argv = ["bash", "-c", `${CLOSE_INHERITED}exec bash -c "$1"`, "bash", command];
  const { output, end } = await runInGroup(argv, groupOptions(options, false));
  return { kind: "ran", sandboxed: false, output, end };
}

/** The part of `RunOptions` that says where and how a command is put in the sandbox. */
type Placed = Pick<RunOptions, "cwd" | "env" | "sandbox" | "keptReadOnly" | "moreProtected">;

/**
 * `command` made ready to run with bash in the sandbox: the argv to spawn in a process group of
 * its own, with a pipe as stdio `FILTER_FD` for `feedFilter`, and `after`, called once it has
 * ended, which ends what it left, removes bwrap's mount points and settles the protected files
 * (one line each for what it changed of them, `guardProtected`).
 */
async function placeInSandbox(
  bwrap: string,
  command: string,
  options: Placed,
): Promise<{ argv: string[]; after: () => Promise<string[]> }> {
  // Protected files below the read-only mounts (a nested repository, one the command makes) are
  // looked at before and settled after: the sandbox's writable workspace is not a way around them.
  const guard = await guardProtected(await realpath(options.cwd), options.moreProtected);
  const cgroup = createPidsGroup(sandboxLimits(options.sandbox).processes);
  const { argv, made } = sandboxedArgv(
    bwrap,
    options.cwd,
    command,
    options.sandbox ?? {},
    options.env,
    {
      cgroupProcs: cgroup?.procs,
      ...(options.keptReadOnly && { kept: options.keptReadOnly }),
      ...(options.moreProtected && { more: options.moreProtected }),
    },
  );
  return {
    argv,
    after: async () => {
      cgroup?.kill();
      await cgroup?.remove();
      removeMountPoints(made);
      return await guard.settle();
    },
  };
}

/**
 * The sandbox's entry for a program its caller runs itself, because it needs its stdin and its
 * two streams apart (a hook): `sh -c COMMAND` in `options.cwd`, placed as `runCommand` places a
 * command: in bubblewrap when `options.sandbox` and this machine say so (`sandboxed`, whose
 * `after` must be called once it has ended), plainly where the sandbox is off or does not work
 * in `auto` mode, refused where it is required and does not work. Spawn the argv in a process
 * group of its own, with the reaper's marker, and feed the filter (`feedFilter`) when sandboxed.
 */
export async function placeCommand(
  command: string,
  options: Pick<RunOptions, "cwd" | "env" | "sandbox" | "moreProtected">,
): Promise<
  | { kind: "refused"; reason: string }
  | { kind: "plain"; argv: string[] }
  | { kind: "sandboxed"; argv: string[]; after: () => Promise<string[]> }
> {
  sweepOrphansOnce();
  const sandbox = await resolveSandbox(options.sandbox ?? { mode: "auto" });
  const refused = await refusal(sandbox);
  if (refused !== undefined) return { kind: "refused", reason: refused };
  if (sandbox.kind !== "bwrap") return { kind: "plain", argv: ["sh", "-c", command] };
  const quoted = `'${command.replaceAll("'", "'\\''")}'`;
  const placed = await placeInSandbox(sandbox.bwrap, `exec sh -c ${quoted}`, options);
  return { kind: "sandboxed", ...placed };
}

async function inSandbox(
  bwrap: string,
  command: string,
  options: RunOptions,
): Promise<CommandOutcome> {
  const { argv, after } = await placeInSandbox(bwrap, command, options);
  const { output, end } = await runInGroup(argv, groupOptions(options, true));
  const undone = await after();
  const ended = end.kind === "exit" || end.kind === "signal";
  const failed = !(end.kind === "exit" && end.code === 0);
  // A sandbox taken to work from the state folder is tested by the first command that ends.
  const lost = ended ? await settleKeptAnswer(bwrap, failed) : undefined;
  // The hint reads the output as shown: the cut marker matches none of its phrases.
  const hint = failed
    ? sandboxHint(output.cut === 0 ? output.head + output.tail : `${output.head}\n${output.tail}`)
    : undefined;
  return {
    kind: "ran",
    sandboxed: true,
    output,
    end,
    ...(hint && { hint }),
    ...(lost && { lost }),
    ...(undone.length > 0 && { undone }),
  };
}

function groupOptions(options: RunOptions, filter: boolean): GroupOptions {
  return {
    filter,
    cwd: options.cwd,
    env: commandEnv(options.env),
    timeoutMs: options.timeoutMs,
    graceMs: options.graceMs,
    maxOutputChars: options.maxOutputChars,
    ...(options.signal && { signal: options.signal }),
  };
}

/**
 * The parent's environment without secrets, set up for a command nobody can answer. Without
 * `CDPATH`: with it, `cd src` may land outside the workspace, where the rules placed it inside.
 */
function commandEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean = withoutSecrets(env);
  delete clean.CDPATH;
  return {
    ...clean,
    PAGER: "cat",
    GIT_PAGER: "cat",
    GIT_TERMINAL_PROMPT: "0",
    NO_COLOR: "1",
    TERM: "dumb",
  };
}
