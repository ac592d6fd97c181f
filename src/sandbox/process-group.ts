import type { ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { BoundedOutput, type CommandOutput } from "./bounded-output.js";
import { feedFilter } from "./bwrap.js";
import { endCommands, newMarker, RUN_VARIABLE, trackCommand } from "./reaper.js";

/** How a command ended: its exit code or the signal that ended it, or why it was stopped. */
export type CommandEnd =
  | { kind: "exit"; code: number }
  | { kind: "signal"; signal: NodeJS.Signals }
  | { kind: "timeout" }
  | { kind: "abort" };

export interface GroupOptions {
  /** Whether `argv` runs bwrap, which reads the seccomp filter on `FILTER_FD`. */
  filter: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  graceMs: number;
  /** Characters of output kept (`BoundedOutput`). */
  maxOutputChars: number;
  signal?: AbortSignal;
}

/** After bash exits, how long output still in the pipes is awaited before the group is ended. */
const DRAIN_MS = 100;

/**
 * Runs `argv` in its own process group with stdin from /dev/null. Returns once it has exited
 * (plus a short drain), or at timeout/abort plus the grace, even when a grandchild still holds
 * the pipes; the whole group is then ended, TERM first and KILL after the grace.
 */
export async function runInGroup(
  argv: string[],
  options: GroupOptions,
): Promise<{ output: CommandOutput; end: CommandEnd }> {
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
    const output = new BoundedOutput(options.maxOutputChars);
    const decoders = [new StringDecoder("utf8"), new StringDecoder("utf8")];
    child.stdout.on("data", (chunk: Buffer) => output.push(decoders[0]?.write(chunk) ?? ""));
    child.stderr.on("data", (chunk: Buffer) => output.push(decoders[1]?.write(chunk) ?? ""));

    let stopped: "timeout" | "abort" | undefined;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // The group is already gone.
      }
    };
    const finish = (exited: CommandEnd) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      endCommands([marker]);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ output: output.kept(), end: stopped ? { kind: stopped } : exited });
    };
    const stop = (reason: "timeout" | "abort") => {
      if (stopped || settled) return;
      stopped = reason;
      killGroup("SIGTERM");
      timers.push(setTimeout(() => finish({ kind: reason }), options.graceMs));
    };
    const onAbort = () => stop("abort");

    timers.push(setTimeout(() => stop("timeout"), options.timeoutMs));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) stop("abort");
    child.on("error", (error) => {
      output.push(`failed to start ${file}: ${error.message}`);
      finish({ kind: "exit", code: 127 });
    });
    child.on("exit", (code, sig) => {
      // Node gives exactly one of the two: the signal that ended the process, or else its code.
      const exited: CommandEnd =
        sig === null ? { kind: "exit", code: code ?? 1 } : { kind: "signal", signal: sig };
      // Output may still sit in the pipes; a background process may hold them open forever.
      child.on("close", () => finish(exited));
      timers.push(setTimeout(() => finish(exited), DRAIN_MS));
    });
  });
}
