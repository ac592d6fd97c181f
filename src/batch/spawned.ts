import { spawn } from "node:child_process";
import { signalGroup } from "./processes.js";

/** How a process the batch ran ended, with the end of its output. */
export interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Stopped because `signal` was aborted (the batch is stopping). */
  stopped: boolean;
  /** The last `keep` characters of stdout and stderr together. */
  output: string;
  /** The whole of stdout, when asked for. */
  stdout?: string;
}

export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL of the group at the timeout. */
  graceMs?: number;
  keep?: number;
  /** Keep the whole of stdout (git's diff), not just its end. */
  wholeStdout?: boolean;
  /** Stops the process as the timeout does (SIGTERM, then SIGKILL of its group). */
  signal?: AbortSignal;
}

/**
 * Runs `argv` in a process group of its own with stdin from /dev/null: at the timeout, or when
 * `signal` is aborted, the group gets SIGTERM, then SIGKILL after the grace. Resolves once the process has exited; a program
 * that cannot start ends with code 127 and the reason as its output.
 */
export function runProgram(argv: string[], options: SpawnOptions): Promise<Ended> {
  const [file = "sh", ...args] = argv;
  const keep = options.keep ?? 4000;
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    const stdout: Buffer[] = [];
    const add = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-keep);
    };
    child.stdout.on("data", (chunk: Buffer) => {
      if (options.wholeStdout) stdout.push(chunk);
      add(chunk);
    });
    child.stderr.on("data", add);
    let ending: "timeout" | "stop" | undefined;
    const timers: NodeJS.Timeout[] = [];
    const end = (why: "timeout" | "stop") => {
      if (ending !== undefined || child.pid === undefined) return;
      ending = why;
      const pid = child.pid;
      signalGroup(pid, "SIGTERM");
      timers.push(setTimeout(() => signalGroup(pid, "SIGKILL"), options.graceMs ?? 5000));
    };
    if (options.timeoutMs !== undefined)
      timers.push(setTimeout(() => end("timeout"), options.timeoutMs));
    const onAbort = () => end("stop");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    const settle = () => {
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      return { timedOut: ending === "timeout", stopped: ending === "stop" };
    };
    child.on("error", (error) => {
      resolve({ code: 127, signal: null, ...settle(), output: error.message });
    });
    child.on("close", (code, signal) => {
      const ended = settle();
      // Whatever the command left behind in its group ends with it.
      if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
      resolve({
        code,
        signal,
        ...ended,
        output,
        ...(options.wholeStdout && { stdout: Buffer.concat(stdout).toString("utf8") }),
      });
    });
  });
}
