import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { type AttemptContext, runAttempt } from "./attempt.js";
import type { BatchOptions } from "./options.js";
import { endLeftover } from "./processes.js";
import {
  LinesFile,
  type ResultLine,
  ResultLineSchema,
  type StartLine,
  StartLineSchema,
  scored,
} from "./results.js";
import { readTasks, type Task } from "./tasks.js";
import { Workspaces } from "./workspace.js";

/** The batch's exit codes: every task scored; unscored tasks left; bad usage or task file. */
export const batchExit = { done: 0, unscored: 1, usage: 2 } as const;

/** A bad invocation or state of DIR: one line (or one per problem) on stderr, exit 2. */
export class BatchUsageError extends Error {}

/** One attempt to run: the task and its attempt number. */
interface Planned {
  task: Task;
  attempt: number;
}

/**
 * Runs a batch: resume is the same command again. Reads the task file whole, ends what a killed
 * batch left running, decides from `results.jsonl` alone what is left, runs it on `workers`
 * children at once, and says what became of each task.
 */
export async function runBatch(
  options: BatchOptions,
  say: (line: string) => void,
  signal: AbortSignal,
): Promise<number> {
  const tasks = readTasks(options.tasks);
  const dir = resolve(options.out);
  mkdirSync(dir, { recursive: true });
  const results = LinesFile.open<ResultLine>(join(dir, "results.jsonl"), ResultLineSchema);
  const starts = LinesFile.open<StartLine>(join(dir, "starts.jsonl"), StartLineSchema);
  // Made now: a hidden path must exist (and be known by its real path) to be hidden.
  for (const folder of ["work", "logs", "diffs"]) mkdirSync(join(dir, folder), { recursive: true });
  try {
    closeLeftovers(results, starts, tasks, say);
    const plan = planOf(tasks, results.lines, options);
    if (plan.length === 0) {
      say(`batch: already complete: ${tasks.length} tasks scored in ${options.out}`);
      return exitOf(tasks, results.lines);
    }
    say(
      `batch: ${plan.length} attempts of ${tasks.length} tasks, ${options.workers} at once, into ${options.out}`,
    );
    const context: AttemptContext = {
      dir,
      workspaces: new Workspaces(dir),
      command: options.command,
      agentFlags: options.agentFlags,
      sandbox: options.sandbox,
      hidden: [
        join(dir, "work"),
        join(dir, "results.jsonl"),
        join(dir, "starts.jsonl"),
        join(dir, "logs"),
        join(dir, "diffs"),
        dirname(resolve(options.tasks)),
      ],
      timeoutUnscored: options.timeoutUnscored,
      graceMs: options.graceMs,
      started: (line) => starts.append(line),
      signal,
    };
    for (const hidden of ["work", "logs", "diffs"])
      mkdirSync(join(dir, hidden), { recursive: true });
    let done = 0;
    const queue = plan.values();
    const worker = async () => {
      for (let next = queue.next(); !next.done && !signal.aborted; next = queue.next()) {
        const { task, attempt } = next.value;
        const line = await runAttempt(task, attempt, context);
        results.append(line);
        done++;
        const why = line.unscored ?? line.agent ?? "";
        say(
          `batch: ${line.id} #${attempt} ${line.outcome}${why ? ` (${why})` : ""} [${done}/${plan.length}]`,
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.workers, plan.length) }, worker));
    return exitOf(tasks, results.lines);
  } finally {
    results.close();
    starts.close();
  }
}

/**
 * An attempt started and never recorded belongs to a batch that was killed: what is left of its
 * child's group is ended, and the attempt is recorded as `crashed` (unscored, so it runs again).
 */
function closeLeftovers(
  results: LinesFile<ResultLine>,
  starts: LinesFile<StartLine>,
  tasks: Task[],
  say: (line: string) => void,
): void {
  const recorded = new Set(results.lines.map((line) => `${line.id}\n${line.attempt}`));
  const hashes = new Map(tasks.map((task) => [task.line.id, task.hash]));
  for (const start of starts.lines) {
    const key = `${start.id}\n${start.attempt}`;
    if (recorded.has(key)) continue;
    recorded.add(key);
    if (endLeftover(start))
      say(`batch: ended the leftover process group ${start.pid} of ${start.id} #${start.attempt}`);
    results.append({
      version: 1,
      id: start.id,
      attempt: start.attempt,
      taskHash: hashes.get(start.id) ?? "",
      outcome: "unscored",
      unscored: "crashed",
      agent: "crashed",
      durationMs: 0,
      workspace: join("work", start.id, String(start.attempt)),
      error: "the batch ended before this attempt finished",
    });
  }
}

/** What to run, from the results alone: tasks with no scored record, within the attempts allowed. */
function planOf(tasks: Task[], lines: ResultLine[], options: BatchOptions): Planned[] {
  const byId = new Map<string, ResultLine[]>();
  for (const line of lines) byId.set(line.id, [...(byId.get(line.id) ?? []), line]);
  const only = options.only.length > 0 ? new Set(options.only) : undefined;
  const unknown = options.only.filter((id) => !tasks.some((task) => task.line.id === id));
  if (unknown.length > 0)
    throw new BatchUsageError(`--only names no task of the file: ${unknown.join(", ")}`);
  const changed: string[] = [];
  const plan: Planned[] = [];
  for (const task of tasks) {
    const records = byId.get(task.line.id) ?? [];
    const attempts = records.reduce((most, line) => Math.max(most, line.attempt), 0);
    const others = records.filter((line) => line.taskHash !== task.hash && line.taskHash !== "");
    const current = records.filter((line) => line.taskHash === task.hash);
    if (others.length > 0 && current.length === 0 && !options.rerunChanged) {
      changed.push(task.line.id);
      continue;
    }
    const next = { task, attempt: attempts + 1 };
    const last = current.filter(scored).at(-1);
    if (only !== undefined) {
      if (only.has(task.line.id)) plan.push(next);
    } else if (last !== undefined) {
      if (options.retryFailed && last.outcome === "failed") plan.push(next);
    } else if (current.length < options.maxAttempts) plan.push(next);
  }
  if (changed.length > 0) {
    throw new BatchUsageError(
      `the line of ${changed.join(", ")} changed since its results were recorded (its taskHash differs): restore it, or give --rerun-changed to run it again`,
    );
  }
  return plan;
}

/** 0 when every task has a scored record of its current line, else 1. */
function exitOf(tasks: Task[], lines: ResultLine[]): number {
  const done = new Set(lines.filter(scored).map((line) => `${line.id}\n${line.taskHash}`));
  const left = tasks.filter((task) => !done.has(`${task.line.id}\n${task.hash}`));
  return left.length === 0 ? batchExit.done : batchExit.unscored;
}
