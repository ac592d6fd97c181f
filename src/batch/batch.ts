import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { holdYoungGeneration } from "../app/young-generation.js";
import { type AttemptContext, runAttempt } from "./attempt.js";
import type { BatchOptions } from "./options.js";
import { endLeftover } from "./processes.js";
import {
  LinesFile,
  type Outcome,
  type ResultLine,
  ResultLineSchema,
  type StartLine,
  StartLineSchema,
  scored,
} from "./results.js";
import { readTasks, type TaskEntry, taskOf } from "./tasks.js";
import { Workspaces } from "./workspace.js";

/** The batch's exit codes: every task scored; unscored tasks left; bad usage or task file. */
export const batchExit = { done: 0, unscored: 1, usage: 2 } as const;

/** A bad invocation or state of DIR: one line (or one per problem) on stderr, exit 2. */
export class BatchUsageError extends Error {}

/**
 * What resume needs to know of one task's records, and nothing of their text: its highest
 * attempt (any line), the attempts of its current line, the outcome of the last of them that was
 * scored, and whether records of another line exist.
 */
interface Progress {
  task: TaskEntry | undefined;
  highest: number;
  tries: number;
  scored: Outcome | undefined;
  changed: boolean;
}

/** One attempt to run: the task and its attempt number. */
interface Planned {
  task: TaskEntry;
  attempt: number;
}

/**
 * Runs a batch: resume is the same command again. Reads the task file a line at a time, keeps of
 * `results.jsonl` only what each task's record says (`Progress`), ends what a killed batch left
 * running, decides from the results alone what is left, runs it on `workers` children at once,
 * and says what became of each task.
 */
export async function runBatch(
  options: BatchOptions,
  say: (line: string) => void,
  signal: AbortSignal,
): Promise<number> {
  holdYoungGeneration();
  const { folder, tasks } = await readTasks(options.tasks);
  const dir = resolve(options.out);
  mkdirSync(dir, { recursive: true });
  const progress = new Map<string, Progress>();
  const of = (id: string) => {
    let found = progress.get(id);
    if (found === undefined) {
      found = { task: undefined, highest: 0, tries: 0, scored: undefined, changed: false };
      progress.set(id, found);
    }
    return found;
  };
  for (const task of tasks) of(task.id).task = task;
  const count = (line: ResultLine) => {
    const known = of(line.id);
    known.highest = Math.max(known.highest, line.attempt);
    if (known.task !== undefined && line.taskHash === known.task.hash) {
      known.tries++;
      if (scored(line)) known.scored = line.outcome;
    } else if (line.taskHash !== "") known.changed = true;
  };
  const results = await LinesFile.open<ResultLine>(
    join(dir, "results.jsonl"),
    ResultLineSchema,
    count,
  );
  const record = (line: ResultLine) => {
    results.append(line);
    count(line);
  };
  let starts: LinesFile<StartLine> | undefined;
  try {
    const leftovers: StartLine[] = [];
    starts = await LinesFile.open<StartLine>(
      join(dir, "starts.jsonl"),
      StartLineSchema,
      (start) => {
        // Attempts of a task run one after another: one above its highest record never ended.
        if (start.attempt > of(start.id).highest) leftovers.push(start);
      },
    );
    closeLeftovers(leftovers, progress, record, say);
    // Made now: a hidden path must exist (and be known by its real path) to be hidden.
    for (const hidden of ["work", "logs", "diffs"])
      mkdirSync(join(dir, hidden), { recursive: true });
    const scope = inScope(tasks, progress, options.only);
    const plan = planOf(scope, options);
    if (plan.length === 0) {
      const exit = exitOf(scope);
      say(
        exit === batchExit.done
          ? `batch: already complete: ${scope.length} tasks scored in ${options.out}`
          : `batch: nothing left to run: ${scope.filter((known) => known.scored === undefined).length} tasks unscored after their last attempt (--max-attempts ${options.maxAttempts})`,
      );
      return exit;
    }
    say(
      `batch: ${plan.length} attempts of ${tasks.length} tasks, ${options.workers} at once, into ${options.out}`,
    );
    const startsFile = starts;
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
        folder,
      ],
      timeoutUnscored: options.timeoutUnscored,
      graceMs: options.graceMs,
      started: (line) => startsFile.append(line),
      signal,
    };
    let done = 0;
    const queue = plan.values();
    const worker = async () => {
      for (let next = queue.next(); !next.done && !signal.aborted; next = queue.next()) {
        const { task, attempt } = next.value;
        const line = await runAttempt(taskOf(task, folder), attempt, context);
        record(line);
        done++;
        const why = line.unscored ?? line.agent ?? "";
        say(
          `batch: ${line.id} #${attempt} ${line.outcome}${why ? ` (${why})` : ""} [${done}/${plan.length}]`,
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.workers, plan.length) }, worker));
    return exitOf(scope);
  } finally {
    results.close();
    starts?.close();
  }
}

/**
 * An attempt started and never recorded belongs to a batch that was killed: what is left of its
 * child's group is ended, and the attempt is recorded as `crashed` (unscored, so it runs again).
 */
function closeLeftovers(
  leftovers: StartLine[],
  progress: Map<string, Progress>,
  record: (line: ResultLine) => void,
  say: (line: string) => void,
): void {
  for (const start of leftovers) {
    // The same attempt started twice (never, but a file is a file): recorded once.
    if (start.attempt <= (progress.get(start.id)?.highest ?? 0)) continue;
    if (endLeftover(start))
      say(`batch: ended the leftover process group ${start.pid} of ${start.id} #${start.attempt}`);
    record({
      version: 1,
      id: start.id,
      attempt: start.attempt,
      taskHash: progress.get(start.id)?.task?.hash ?? "",
      outcome: "unscored",
      unscored: "crashed",
      agent: "crashed",
      durationMs: 0,
      workspace: join("work", start.id, String(start.attempt)),
      error: "the batch ended before this attempt finished",
    });
  }
}

/** The tasks this run is about: those `--only` names, or all; an id the file lacks is refused. */
function inScope(tasks: TaskEntry[], progress: Map<string, Progress>, only: string[]): Progress[] {
  const all = tasks.map((task) => progress.get(task.id) as Progress);
  if (only.length === 0) return all;
  const unknown = only.filter((id) => progress.get(id)?.task === undefined);
  if (unknown.length > 0)
    throw new BatchUsageError(`--only names no task of the file: ${unknown.join(", ")}`);
  const named = new Set(only);
  return all.filter((known) => named.has(known.task?.id ?? ""));
}

/**
 * What to run, from the results alone: tasks with no scored record, within the attempts allowed;
 * with `--only`, the tasks named, whatever their record.
 */
function planOf(scope: Progress[], options: BatchOptions): Planned[] {
  const changed: string[] = [];
  const plan: Planned[] = [];
  for (const { task, highest, tries, scored, changed: other } of scope) {
    if (task === undefined) continue;
    if (other && tries === 0 && !options.rerunChanged) {
      changed.push(task.id);
      continue;
    }
    const next = { task, attempt: highest + 1 };
    if (options.only.length > 0) plan.push(next);
    else if (scored !== undefined) {
      if (options.retryFailed && scored === "failed") plan.push(next);
    } else if (tries < options.maxAttempts) plan.push(next);
  }
  if (changed.length > 0) {
    throw new BatchUsageError(
      `the line of ${changed.join(", ")} changed since its results were recorded (its taskHash differs): restore it, or give --rerun-changed to run it again`,
    );
  }
  return plan;
}

/** 0 when every task in scope has a scored record of its current line, else 1. */
function exitOf(scope: Progress[]): number {
  return scope.every((known) => known.scored !== undefined) ? batchExit.done : batchExit.unscored;
}
