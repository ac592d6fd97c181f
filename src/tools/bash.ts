import type { ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { Type } from "@sinclair/typebox";
import {
  CLOSE_INHERITED,
  feedFilter,
  resolveSandbox,
  type SandboxOptions,
  sandboxedArgv,
  sandboxHint,
  sandboxLimits,
  settleKeptAnswer,
  staleSandbox,
} from "../sandbox/bwrap.js";
import { createPidsGroup } from "../sandbox/pids-cgroup.js";
import { removeMountPoints } from "../sandbox/project-files.js";
import {
  endCommands,
  newMarker,
  RUN_VARIABLE,
  sweepOrphansOnce,
  trackCommand,
} from "../sandbox/reaper.js";
import { withoutSecrets } from "../secrets.js";
import { headOf, tailOf } from "../text.js";
import type { Tool } from "../types.js";
import { defineTool, failure } from "./define.js";
import { limits, truncated } from "./limits.js";
import { workspacePath } from "./path.js";

export interface BashOptions {
  /** Seconds a command may run when the call gives no timeout. Default 120. */
  defaultTimeout?: number;
  /** Seconds between TERM and KILL when a command is stopped. Default 2. */
  killGrace?: number;
  /** Environment the command starts from (secrets are removed); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Default `{ mode: "auto" }`: in bubblewrap when it works here, else plain bash. */
  sandbox?: SandboxOptions;
}

const MAX_TIMEOUT = 600;
/** After bash exits, how long output still in the pipes is awaited before the group is ended. */
const DRAIN_MS = 100;

export function bashTool(root: string, options: BashOptions = {}): Tool {
  const { defaultTimeout = 120, killGrace = 2 } = options;
  return defineTool({
    name: "bash",
    description: `Run a bash command in the workspace folder. No stdin; background processes end with the command. Timeout ${defaultTimeout} s unless set (max ${MAX_TIMEOUT}).`,
    input: Type.Object({
      command: Type.String({ minLength: 1 }),
      timeout: Type.Optional(
        Type.Number({ exclusiveMinimum: 0, maximum: MAX_TIMEOUT, description: "Seconds" }),
      ),
    }),
    async run({ command, timeout = defaultTimeout }, signal) {
      // What a killed mini-agent left running ends before the first command starts.
      sweepOrphansOnce();
      const cwd = await workspacePath(root, ".");
      const env = options.env ?? process.env;
      const sandbox = await resolveSandbox(options.sandbox ?? { mode: "auto" });
      if (sandbox.kind === "unavailable" && sandbox.mode === "required") {
        return failure(`bash refused: the sandbox is required but unavailable: ${sandbox.reason}`);
      }
      const stale = sandbox.kind === "bwrap" ? await staleSandbox(sandbox.bwrap) : undefined;
      if (stale) return failure(`bash refused: ${stale}`);
      const cgroup =
        sandbox.kind === "bwrap"
          ? createPidsGroup(sandboxLimits(options.sandbox).processes)
          : undefined;
      const { argv, made } =
        sandbox.kind === "bwrap"
          ? sandboxedArgv(sandbox.bwrap, cwd, command, options.sandbox ?? {}, env, cgroup?.procs)
          : {
              argv: ["bash", "-c", `${CLOSE_INHERITED}exec bash -c "$1"`, "bash", command],
              made: [],
            };
      const outcome = await runCommand(argv, {
        filter: sandbox.kind === "bwrap",
        cwd,
        env: commandEnv(env),
        timeoutMs: timeout * 1000,
        graceMs: killGrace * 1000,
        ...(signal && { signal }),
      });
      cgroup?.kill();
      await cgroup?.remove();
      removeMountPoints(made);
      const status =
        outcome.stopped === "timeout"
          ? `[timed out after ${timeout} s: the command and its processes were killed]`
          : outcome.stopped === "abort"
            ? "[aborted: the command and its processes were killed]"
            : outcome.code === 0
              ? "[exit code 0]"
              : `[exit code ${outcome.code ?? `signal ${outcome.signal}`}]`;
      const output = outcome.output === "" ? "" : `${outcome.output}\n`;
      const failed = outcome.stopped !== undefined || outcome.code !== 0;
      // A sandbox taken to work from the state folder is tested by the first command that ends.
      const broken =
        sandbox.kind === "bwrap" && outcome.stopped === undefined
          ? await settleKeptAnswer(sandbox.bwrap, failed)
          : undefined;
      if (broken) return failure(`${output}${status}\nbash failed: ${broken}`);
      const hint = failed && sandbox.kind === "bwrap" ? sandboxHint(outcome.output) : undefined;
      return { content: `${output}${status}${hint ? `\n${hint}` : ""}`, isError: failed };
    },
  });
}

/** The parent's environment without secrets, set up for a command nobody can answer. */
function commandEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean = withoutSecrets(env);
  return {
    ...clean,
    PAGER: "cat",
    GIT_PAGER: "cat",
    GIT_TERMINAL_PROMPT: "0",
    NO_COLOR: "1",
    TERM: "dumb",
  };
}

interface RunOptions {
  /** Whether `argv` runs bwrap, which reads the seccomp filter on `FILTER_FD`. */
  filter: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  graceMs: number;
  signal?: AbortSignal;
}

interface RunOutcome {
  output: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stopped?: "timeout" | "abort";
}

/**
 * Runs `argv` in its own process group with stdin from /dev/null. Returns once it has exited
 * (plus a short drain), or at timeout/abort plus the grace, even when a grandchild still holds
 * the pipes; the whole group is then ended, TERM first and KILL after the grace.
 */
async function runCommand(argv: string[], options: RunOptions): Promise<RunOutcome> {
  // Loaded when a command runs: most sessions never start a process.
  const { spawn } = await import("node:child_process");
  return new Promise((resolve) => {
    const [file = "bash", ...args] = argv;
    const marker = newMarker();
    // Stdout and stderr are pipes; a fourth pipe carries bwrap's seccomp filter.
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: { ...options.env, [RUN_VARIABLE]: marker },
      stdio: ["ignore", "pipe", "pipe", options.filter ? "pipe" : "ignore"],
      detached: true,
    }) as ChildProcessByStdio<null, Readable, Readable>;
    if (options.filter) feedFilter(child);
    if (child.pid !== undefined) trackCommand(marker, child.pid);
    const output = new BoundedOutput(limits.outputChars);
    const decoders = [new StringDecoder("utf8"), new StringDecoder("utf8")];
    child.stdout.on("data", (chunk: Buffer) => output.push(decoders[0]?.write(chunk) ?? ""));
    child.stderr.on("data", (chunk: Buffer) => output.push(decoders[1]?.write(chunk) ?? ""));

    let stopped: RunOutcome["stopped"];
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // The group is already gone.
      }
    };
    const finish = (code: number | null, sig: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      endCommands([marker]);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ output: output.text(), code, signal: sig, ...(stopped && { stopped }) });
    };
    const stop = (reason: NonNullable<RunOutcome["stopped"]>) => {
      if (stopped || settled) return;
      stopped = reason;
      killGroup("SIGTERM");
      timers.push(setTimeout(() => finish(child.exitCode, child.signalCode), options.graceMs));
    };
    const onAbort = () => stop("abort");

    timers.push(setTimeout(() => stop("timeout"), options.timeoutMs));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) stop("abort");
    child.on("error", (error) => {
      output.push(`failed to start ${file}: ${error.message}`);
      finish(127, null);
    });
    child.on("exit", (code, sig) => {
      // Output may still sit in the pipes; a background process may hold them open forever.
      child.on("close", () => finish(code, sig));
      timers.push(setTimeout(() => finish(code, sig), DRAIN_MS));
    });
  });
}

/**
 * Keeps the first and last halves of a stream of text, counting what fell in between. Cuts only
 * between code points (`headOf`, `tailOf`); the decoder never splits one across chunks. Holds at
 * most about `max` characters whatever the volume.
 */
class BoundedOutput {
  private head = "";
  private headFull = false;
  private tail = "";
  private dropped = 0;

  constructor(private readonly max: number) {}

  push(text: string): void {
    const half = this.max / 2;
    if (!this.headFull) {
      const take = headOf(text, half - this.head.length);
      this.head += take;
      text = text.slice(take.length);
      // Once something is left over, the head is done, even a unit short of `half`.
      if (text !== "") this.headFull = true;
    }
    this.tail += text;
    if (this.tail.length > half * 2) this.trimTail();
  }

  text(): string {
    this.trimTail();
    const body =
      this.dropped === 0
        ? this.head + this.tail
        : `${this.head}\n${truncated(this.dropped)}\n${this.tail}`;
    return body.replace(/\n$/, "");
  }

  private trimTail(): void {
    const kept = tailOf(this.tail, this.max / 2);
    this.dropped += this.tail.length - kept.length;
    this.tail = kept;
  }
}
