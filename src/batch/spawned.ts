import { spawn } from "node:child_process";
import { signalGroup } from "./processes.js";

/** How a process the batch ran ended, with the end of its output. */
export interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
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
}

/**
 * Runs `argv` in a process group of its own with stdin from /dev/null: at the timeout the group
 * gets SIGTERM, then SIGKILL after the grace. Resolves once the process has exited; a program
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
    let timedOut = false;
    const timers: NodeJS.Timeout[] = [];
    if (options.timeoutMs !== undefined && child.pid !== undefined) {
      const pid = child.pid;
      timers.push(
        setTimeout(() => {
          timedOut = true;
          signalGroup(pid, "SIGTERM");
          timers.push(setTimeout(() => signalGroup(pid, "SIGKILL"), options.graceMs ?? 5000));
        }, options.timeoutMs),
      );
    }
    child.on("error", (error) => {
      for (const timer of timers) clearTimeout(timer);
      resolve({ code: 127, signal: null, timedOut, output: error.message });
    });
    child.on("close", (code, signal) => {
      for (const timer of timers) clearTimeout(timer);
      // Whatever the command left behind in its group ends with it.
      if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
      resolve({
        code,
        signal,
        timedOut,
        output,
        ...(options.wholeStdout && { stdout: Buffer.concat(stdout).toString("utf8") }),
      });
    });
  });
}
