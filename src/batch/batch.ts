import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { holdYoungGeneration } from "../app/young-generation.js";
import { Admission } from "./admission.js";
import { waiting } from "./agent.js";
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

/**
 * The batch's exit codes: every task scored; unscored tasks left; bad usage or task file; the
 * budget was spent and tasks were skipped (`--budget-tokens`).
 */
export const batchExit = { done: 0, unscored: 1, usage: 2, budget: 5 } as const;

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
  let recordedTokens = 0;
  const count = (line: ResultLine) => {
    const known = of(line.id);
    known.highest = Math.max(known.highest, line.attempt);
    recordedTokens += tokensOf(line);
    if (known.task !== undefined && line.taskHash === known.task.hash) {
      // A task skipped for the budget never started: that is no attempt of it.
      if (line.unscored !== "skipped_budget") known.tries++;
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
    const budgets = budgetsOf(plan, options);
    const budget =
      options.budgetTokens === undefined
        ? ""
        : `, a budget of ${options.budgetTokens} tokens (${recordedTokens} spent before)`;
    say(
      `batch: ${plan.length} attempts of ${tasks.length} tasks, ${options.workers} at once${budget}, into ${options.out}`,
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
    const admission = new Admission({
      workers: options.workers,
      budget: options.budgetTokens,
      spent: recordedTokens,
      signal,
      say,
    });
    let done = 0;
    let total = plan.length;
    let skipped = 0;
    let errors = 0;
    const queue = [...plan];
    const worker = async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const { task, attempt } = next;
        const entry = await admission.enter(budgets.get(task.id));
        if (entry.kind === "stopped") return;
        if (entry.kind === "budget") {
          record(skippedForBudget(task, attempt));
          skipped++;
          continue;
        }
        const where = `${task.id} #${attempt}`;
        let waited = false;
        const line = await runAttempt(taskOf(task, folder), attempt, context, {
          reserved: entry.reserved,
          retried: (retry) => {
            if (!waiting(retry.errorKind)) return;
            waited = true;
            admission.wait({ ...retry, errorKind: retry.errorKind ?? "rate_limited", where });
          },
        });
        record(line);
        admission.leave(entry, tokensOf(line), waited);
        done++;
        const why = line.unscored ?? line.agent ?? "";
        say(`batch: ${where} ${line.outcome}${why ? ` (${why})` : ""} [${done}/${total}]`);
        const again = line.unscored === "rate_limited" && !signal.aborted;
        if (again && (progress.get(task.id)?.tries ?? 0) < options.maxAttempts) {
          queue.push({ task, attempt: attempt + 1 });
          total++;
        }
        errors = erred(line) ? errors + 1 : ended(line) ? 0 : errors;
        const limit = options.maxConsecutiveErrors;
        if (limit !== undefined && errors >= limit && admission.stopped === undefined) {
          admission.stop(`${errors} attempts in a row ended in an error`);
          say(
            `batch: ${errors} attempts in a row ended in an error (the last: ${line.error ?? line.unscored ?? line.agent}): nothing more starts (--max-consecutive-errors ${limit}); the same command goes on`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.workers, plan.length) }, worker));
    if (skipped > 0) {
      say(
        `batch: the budget of ${options.budgetTokens} tokens is spent (${admission.spent} used): ${skipped} tasks not started (skipped_budget); a larger --budget-tokens runs them`,
      );
      return batchExit.budget;
    }
    return exitOf(scope);
  } finally {
    results.close();
    starts?.close();
  }
}

/** Input plus output tokens of an attempt, as `--token-budget` counts them. */
const tokensOf = (line: ResultLine) =>
  (line.usage?.inputTokens ?? 0) + (line.usage?.outputTokens ?? 0);

/** An attempt that ended in an error (`--max-consecutive-errors` counts them). */
const erred = (line: ResultLine) =>
  line.agent === "error" ||
  line.agent === "rate_limited" ||
  line.agent === "crashed" ||
  line.unscored === "infra_error";

/** An attempt whose agent ended by itself or by a limit: the count of errors starts again. */
const ended = (line: ResultLine) =>
  line.agent === "completed" || line.agent === "max_turns" || line.agent === "budget_exceeded";

/** The record of a task that never started: the batch's budget was spent. */
function skippedForBudget(task: TaskEntry, attempt: number): ResultLine {
  return {
    version: 1,
    id: task.id,
    attempt,
    taskHash: task.hash,
    outcome: "unscored",
    unscored: "skipped_budget",
    agent: "skipped_budget",
    durationMs: 0,
    workspace: join("work", task.id, String(attempt)),
  };
}

/**
 * With `--budget-tokens`, what each planned task may spend: its `tokenBudget`, else the
 * `--token-budget` after `--`. A task with neither would take all that is left: refused.
 */
function budgetsOf(plan: Planned[], options: BatchOptions): Map<string, number> {
  const budgets = new Map<string, number>();
  if (options.budgetTokens === undefined) return budgets;
  const without: string[] = [];
  for (const { task } of plan) {
    const own = (JSON.parse(task.text) as { tokenBudget?: number }).tokenBudget;
    const budget = own ?? options.taskBudget;
    if (budget === undefined) without.push(task.id);
    else budgets.set(task.id, budget);
  }
  if (without.length > 0) {
    const named = without.slice(0, 5).join(", ") + (without.length > 5 ? ", …" : "");
    throw new BatchUsageError(
      `--budget-tokens needs each task's token budget, and ${without.length} tasks have none (${named}): give them tokenBudget, or every task --token-budget N after --`,
    );
  }
  return budgets;
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
