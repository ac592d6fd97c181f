import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { createInterface } from "node:readline";
import type { ErrorKind } from "../error-kind.js";
import { signalGroup } from "./processes.js";
import type { AgentStatus, ResultLine } from "./results.js";

/**
 * One headless `mini-agent` child: `-p PROMPT --output-format stream-json --end-with-stdin` in
 * its own process group, its stdin a pipe the batch never writes (when the batch dies, the pipe
 * closes and the child ends its group). Its stream goes to a log file, never to stdout; the
 * batch reads only the published stream-json lines it needs (`session`, `retry`, `result`).
 */

export interface AgentRun {
  /** The command that starts mini-agent: `node .../main.js`. */
  command: string[];
  /** Flags for the child: the batch's own, then those after `--`, then the task's overrides. */
  flags: string[];
  prompt: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  graceMs: number;
  log: string;
  /** Every value that must not reach the log (the task's `env`). */
  redact: (text: string) => string;
  /** Told the child's pid once it runs (recorded, to end a leftover group on resume). */
  started: (pid: number) => void;
  /** Aborts the run as a timeout would, when the batch stops. */
  signal: AbortSignal;
  /** Told each round the child runs again (its `retry` line), as it comes: the batch may pause its starts. */
  retried: (retry: Retry) => void;
}

/** A child's `retry` line, as the batch reads it. */
export interface Retry {
  errorKind: ErrorKind | undefined;
  retryAfterMs: number | undefined;
  delayMs: number;
  reason: string;
}

export interface AgentEnd {
  status: AgentStatus;
  exitCode: number | null;
  durationMs: number;
  sessionId?: string;
  sandbox?: string;
  /** The `result`'s totals; without one (a child killed), the sum of its `usage` lines. */
  usage?: ResultLine["usage"];
  error?: string;
  errorKind?: ErrorKind;
  /** With `errorKind` `rate_limited` or `overloaded`: the wait the provider asked for. */
  retryAfterMs?: number;
  retries?: NonNullable<ResultLine["retries"]>;
  /** The child never reached its first event: it could not start (or its sandbox could not). */
  infra?: string;
  stopped: boolean;
}

/** The stream-json `result` statuses and exit codes, in the batch's words. */
const byExitCode: Record<number, AgentStatus> = {
  0: "completed",
  3: "max_turns",
  4: "compaction_failed",
  5: "budget_exceeded",
};

export function runAgent(run: AgentRun): Promise<AgentEnd> {
  const began = Date.now();
  const [file = process.execPath, ...args] = run.command;
  return new Promise((resolve) => {
    const child = spawn(file, [...args, `--print=${run.prompt}`, ...run.flags], {
      cwd: run.cwd,
      env: run.env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    const log = createWriteStream(run.log);
    let sessionId: string | undefined;
    let sandbox: string | undefined;
    let result: ResultOfChild | undefined;
    let requests = 0;
    const summed = { inputTokens: 0, outputTokens: 0 };
    const retries = { count: 0, rateLimited: 0, overloaded: 0, waitedMs: 0 };
    let stderr = "";
    const lines = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on("line", (raw) => {
      log.write(`${run.redact(raw)}\n`);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return;
      }
      if (line.type === "session") {
        sessionId = String(line.id);
        sandbox = String(line.sandbox);
      } else if (line.type === "usage") {
        requests++;
        summed.inputTokens += countOf(line.usage, "inputTokens");
        summed.outputTokens += countOf(line.usage, "outputTokens");
      } else if (line.type === "retry") {
        const retry = retryOf(line);
        retries.count++;
        if (retry.errorKind === "rate_limited") retries.rateLimited++;
        if (retry.errorKind === "overloaded") retries.overloaded++;
        retries.waitedMs += retry.delayMs;
        run.retried(retry);
      } else if (line.type === "result") result = line as unknown as ResultOfChild;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-4000);
    });
    // The child ends its group when this pipe closes; an error on it (the child gone) is no news.
    child.stdin.on("error", () => {});
    let stopped: "timeout" | "abort" | undefined;
    const timers: NodeJS.Timeout[] = [];
    const stop = (why: "timeout" | "abort") => {
      if (stopped || child.pid === undefined) return;
      stopped = why;
      const pid = child.pid;
      signalGroup(pid, "SIGTERM");
      timers.push(setTimeout(() => signalGroup(pid, "SIGKILL"), run.graceMs));
    };
    timers.push(setTimeout(() => stop("timeout"), run.timeoutMs));
    const onAbort = () => stop("abort");
    run.signal.addEventListener("abort", onAbort);
    if (run.signal.aborted) onAbort();
    if (child.pid !== undefined) run.started(child.pid);
    let spawnError: string | undefined;
    child.on("error", (error) => {
      spawnError = error.message;
    });
    child.on("close", (code) => {
      for (const timer of timers) clearTimeout(timer);
      run.signal.removeEventListener("abort", onAbort);
      if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
      log.end();
      const error = run.redact(result?.error ?? lastLine(stderr) ?? spawnError ?? "");
      const status = statusOf(code, result, stopped);
      const end: AgentEnd = {
        status,
        exitCode: code,
        durationMs: Date.now() - began,
        stopped: stopped === "abort",
        ...(sessionId !== undefined && { sessionId }),
        ...(sandbox !== undefined && { sandbox }),
        ...(result?.usage !== undefined
          ? { usage: result.usage }
          : requests > 0 && { usage: summed }),
        ...(error !== "" && status !== "completed" && { error }),
        ...(result?.errorKind !== undefined && { errorKind: result.errorKind }),
        ...(typeof result?.retryAfterMs === "number" && { retryAfterMs: result.retryAfterMs }),
        ...(retries.count > 0 && { retries }),
      };
      if (spawnError !== undefined) end.infra = `mini-agent could not start: ${spawnError}`;
      else if (sandbox === "required-unavailable")
        end.infra = `the sandbox could not start: ${error}`;
      log.on("close", () => resolve(end));
    });
  });
}

/** The child's `result` line, as far as the batch reads it. */
interface ResultOfChild {
  status: string;
  usage?: ResultLine["usage"];
  error?: string;
  errorKind?: ErrorKind;
  retryAfterMs?: number;
}

function statusOf(
  code: number | null,
  result: ResultOfChild | undefined,
  stopped: "timeout" | "abort" | undefined,
): AgentStatus {
  if (stopped === "timeout") return "timeout";
  // The batch stopped it (SIGINT or SIGTERM of the batch): stream-json's word for its end.
  if (stopped === "abort") return "aborted";
  const known = code === null ? undefined : byExitCode[code];
  if (known !== undefined && result !== undefined) return known;
  if (code === 1 && result !== undefined)
    return waiting(result.errorKind) ? "rate_limited" : "error";
  // No result line: the child was killed, or failed before its turn (a usage error: exit 2).
  return code === 2 ? "error" : "crashed";
}

/** A 429 or an overload: the provider asks the caller to wait. */
export const waiting = (kind: ErrorKind | undefined) =>
  kind === "rate_limited" || kind === "overloaded";

/** One count of a `usage` line's object; a missing or odd one is 0. */
function countOf(usage: unknown, name: "inputTokens" | "outputTokens"): number {
  const value = (usage as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

function retryOf(line: Record<string, unknown>): Retry {
  const kind = line.errorKind;
  return {
    errorKind: typeof kind === "string" ? (kind as ErrorKind) : undefined,
    retryAfterMs: typeof line.retryAfterMs === "number" ? line.retryAfterMs : undefined,
    delayMs: typeof line.delayMs === "number" ? line.delayMs : 0,
    reason: String(line.reason ?? ""),
  };
}

function lastLine(text: string): string | undefined {
  const lines = text.trim().split("\n");
  return lines.at(-1) || undefined;
}
