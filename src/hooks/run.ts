import type { ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { MoreProtected } from "../protected/files.js";
import { feedFilter, type SandboxOptions } from "../sandbox/bwrap.js";
import { endCommands, newMarker, RUN_VARIABLE, trackCommand } from "../sandbox/reaper.js";
import { placeCommand } from "../sandbox/run.js";
import { headOf } from "../text.js";

/**
 * Runs one hook command: `sh -c COMMAND` in the workspace, placed by the sandbox's entry
 * (`placeCommand`): in the sandbox when `sandbox` is given and it works there (a project's
 * hook), else plainly; in a process group and session of its own (the reaper's marker in its
 * environment), with its JSON input on stdin. When it exits, times out or the call is aborted,
 * every process it started is ended with it (`endCommands`; in the sandbox, bwrap's PID namespace
 * ends with it too): a hook leaves nothing running. What it prints is kept up to a bound on each
 * stream. A sandboxed hook's changes to protected files are undone after it, as a command's are.
 */

/** How a hook run ended. */
export type HookRun =
  | { kind: "exited"; code: number; stdout: string; stderr: string; cut: boolean }
  | { kind: "signal"; signal: string; stderr: string }
  | { kind: "timeout"; seconds: number }
  | { kind: "aborted" }
  | { kind: "failed"; reason: string };

export interface RunHookOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutSeconds: number;
  signal?: AbortSignal;
  /** Run it in the sandbox these options describe (absent: plainly, outside it). */
  sandbox?: SandboxOptions;
  /** The session's own protected files, kept in the sandbox as a command's are. */
  moreProtected?: MoreProtected;
}

/** How a hook ran, and what the check after a sandboxed hook undid (one line each). */
export interface HookOutcome {
  run: HookRun;
  undone: string[];
}

/** Characters of each of stdout and stderr kept: more than any answer or message needs. */
export const KEPT_CHARS = 64 * 1024;

export async function runHook(
  command: string,
  input: string,
  options: RunHookOptions,
): Promise<HookOutcome> {
  const placed = await placeCommand(command, {
    cwd: options.cwd,
    env: options.env,
    sandbox: options.sandbox ?? { mode: "off" },
    ...(options.moreProtected && { moreProtected: options.moreProtected }),
  });
  if (placed.kind === "refused")
    return { run: { kind: "failed", reason: placed.reason }, undone: [] };
  const run = await spawnHook(placed.argv, placed.kind === "sandboxed", input, options);
  return { run, undone: placed.kind === "sandboxed" ? await placed.after() : [] };
}

async function spawnHook(
  argv: string[],
  filter: boolean,
  input: string,
  options: RunHookOptions,
): Promise<HookRun> {
  // Loaded when a hook runs: most sessions have none.
  const { spawn } = await import("node:child_process");
  return new Promise((resolve) => {
    const marker = newMarker();
    const [file = "sh", ...args] = argv;
    // A fourth pipe carries bwrap's seccomp filter.
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: { ...options.env, [RUN_VARIABLE]: marker },
      stdio: ["pipe", "pipe", "pipe", filter ? "pipe" : "ignore"],
      detached: true,
    }) as ChildProcessByStdio<Writable, Readable, Readable>;
    if (filter) feedFilter(child);
    if (child.pid !== undefined) trackCommand(marker, child.pid);
    const out = new Kept();
    const err = new Kept();
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    // A hook need not read its input: a closed pipe is no failure.
    child.stdin.on("error", () => {});
    child.stdin.end(input);

    let settled = false;
    let stopped: HookRun | undefined;
    const finish = (run: HookRun) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      endCommands([marker]);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve(stopped ?? run);
    };
    const stop = (run: HookRun) => {
      if (stopped || settled) return;
      stopped = run;
      // Everything it started, now: a hook that hangs gets no grace.
      endCommands([marker]);
      finish(run);
    };
    const onAbort = () => stop({ kind: "aborted" });
    const timer = setTimeout(
      () => stop({ kind: "timeout", seconds: options.timeoutSeconds }),
      options.timeoutSeconds * 1000,
    );
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    child.on("error", (error) => finish({ kind: "failed", reason: error.message }));
    child.on("exit", (code, signal) => {
      // What it left running may hold the pipes: ended with it, so they close.
      endCommands([marker]);
      child.on("close", () =>
        finish(
          signal !== null
            ? { kind: "signal", signal, stderr: err.text() }
            : {
                kind: "exited",
                code: code ?? 1,
                stdout: out.text(),
                stderr: err.text(),
                cut: out.cut || err.cut,
              },
        ),
      );
    });
  });
}

/** The first `KEPT_CHARS` characters of a stream, decoded as UTF-8, and whether more came. */
class Kept {
  private readonly decoder = new StringDecoder("utf8");
  private kept = "";
  cut = false;

  push(chunk: Buffer): void {
    if (this.cut) return;
    const text = this.kept + this.decoder.write(chunk);
    this.kept = headOf(text, KEPT_CHARS);
    if (this.kept.length < text.length) this.cut = true;
  }

  text(): string {
    return this.cut ? this.kept : this.kept + this.decoder.end();
  }
}
