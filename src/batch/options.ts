import { parseArgs } from "node:util";

/** `mini-agent batch TASKS.jsonl --out DIR [--workers N] [...] [-- AGENT FLAGS…]`, parsed. */
export interface BatchOptions {
  tasks: string;
  out: string;
  workers: number;
  maxAttempts: number;
  retryFailed: boolean;
  only: string[];
  rerunChanged: boolean;
  timeoutUnscored: boolean;
  /** Between SIGTERM and SIGKILL of a child's group at its timeout. */
  graceMs: number;
  /** `--budget-tokens N`: input plus output tokens of the whole batch (DIR, resumes included). */
  budgetTokens: number | undefined;
  /** The `--token-budget` the flags after `--` give every task, when they do. */
  taskBudget: number | undefined;
  /** `--max-consecutive-errors N`: after N attempts in a row that end in an error, nothing more starts. */
  maxConsecutiveErrors: number | undefined;
  /** The flags after `--`, with `--sandbox required` added unless they choose a mode. */
  agentFlags: string[];
  sandbox: "auto" | "required" | "off";
  /** How to start mini-agent itself: this same program. */
  command: string[];
}

export const batchUsage = `usage: mini-agent batch TASKS.jsonl --out DIR [--workers N] [--max-attempts N]
                       [--retry-failed] [--only ID]... [--rerun-changed] [--timeout-unscored]
                       [-- AGENT FLAGS...]

Runs each task of TASKS.jsonl (one JSON object a line: docs/batch.md) in a fresh workspace under
DIR/work, by a headless mini-agent of its own (--sandbox required unless the agent flags say
otherwise), then its check; one line per attempt is appended to DIR/results.jsonl. Running the
same command again resumes: scored tasks are done, unscored ones run again. A task file is code:
run only task files you trust.

Options:
  --out DIR               where workspaces, logs, diffs and results go (required)
  --workers N             tasks at once (default 2)
  --max-attempts N        attempts of a task that stays unscored (default 3)
  --retry-failed          run the tasks whose last scored attempt failed again
  --only ID               run only this task, whatever its record (repeatable)
  --rerun-changed         run a task whose line changed since its results, instead of refusing
  --timeout-unscored      leave a task whose agent timed out unscored (default: failed)
  --budget-tokens N       input plus output tokens for the whole batch: each start reserves
                          its task's token budget (tokenBudget, or --token-budget after --,
                          one of which each task then needs); with none left, nothing more
                          starts (skipped_budget). May be passed by one request per task running
  --max-consecutive-errors N
                          start nothing more after N attempts in a row end in an error (a
                          refused key, a provider down)
  -h, --help              print this help

A 429 or an overload that a task meets pauses every new start for the time the provider asks
(retry-after), halves how many run at once, and each attempt without one adds one back.

Exit codes: 0 every task scored (or already complete); 1 tasks left unscored after their last
attempt; 2 bad usage or task file; 5 the budget was spent: tasks were skipped (skipped_budget).`;

/** How many times a child runs a lost round again before its attempt ends rate_limited. */
const CHILD_RETRIES = 3;

/** The flags a batch sets for each child itself: given after `--`, they are refused. */
const ownFlags = [
  "-p",
  "--print",
  "--cwd",
  "--output-format",
  "--input-format",
  "--continue",
  "-c",
  "--resume",
  "-r",
];

export function batchOptions(
  argv: string[],
  usageError: (message: string) => Error,
): BatchOptions | "help" {
  const dashes = argv.indexOf("--");
  const own = dashes === -1 ? argv : argv.slice(0, dashes);
  const agentFlags = dashes === -1 ? [] : argv.slice(dashes + 1);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(own);
  } catch (error) {
    throw usageError(`${(error as Error).message} (mini-agent batch --help lists the options)`);
  }
  const { values, positionals } = parsed;
  if (values.help) return "help";
  if (positionals.length !== 1)
    throw usageError("batch needs one task file: mini-agent batch TASKS.jsonl --out DIR");
  if (values.out === undefined || values.out === "") throw usageError("batch needs --out DIR");
  const refused = agentFlags.find((flag) => ownFlags.includes(flag.split("=")[0] ?? ""));
  if (refused !== undefined)
    throw usageError(`${refused} is set by batch for each task; it cannot be given after --`);
  const sandbox = sandboxOf(agentFlags, usageError);
  const taskBudget = lastValue(agentFlags, "--token-budget");
  if (taskBudget !== undefined && !/^\d{1,15}$/.test(taskBudget))
    throw usageError(
      `--token-budget after -- must be a whole number of tokens, not ${JSON.stringify(taskBudget)}`,
    );
  const budget = values["budget-tokens"];
  const errors = values["max-consecutive-errors"];
  return {
    tasks: positionals[0] ?? "",
    out: values.out,
    workers: count(values.workers ?? "2", "--workers", usageError),
    maxAttempts: count(values["max-attempts"] ?? "3", "--max-attempts", usageError),
    retryFailed: values["retry-failed"] ?? false,
    only: values.only ?? [],
    rerunChanged: values["rerun-changed"] ?? false,
    timeoutUnscored: values["timeout-unscored"] ?? false,
    graceMs: 5000,
    budgetTokens: budget === undefined ? undefined : tokens(budget, usageError),
    taskBudget: taskBudget === undefined ? undefined : Number(taskBudget),
    maxConsecutiveErrors:
      errors === undefined ? undefined : count(errors, "--max-consecutive-errors", usageError),
    // Each retry the child's own and told, so the batch sees every 429 (the task may say otherwise).
    agentFlags: [
      `--max-retries=${CHILD_RETRIES}`,
      ...(sandbox.given ? [] : ["--sandbox", "required"]),
      ...agentFlags,
    ],
    sandbox: sandbox.mode,
    command: [process.execPath, process.argv[1] ?? ""],
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      out: { type: "string" },
      workers: { type: "string" },
      "max-attempts": { type: "string" },
      "retry-failed": { type: "boolean" },
      only: { type: "string", multiple: true },
      "rerun-changed": { type: "boolean" },
      "timeout-unscored": { type: "boolean" },
      "budget-tokens": { type: "string" },
      "max-consecutive-errors": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

function count(value: string, flag: string, usageError: (message: string) => Error): number {
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1) {
    throw usageError(`${flag} must be a whole number from 1, not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

function tokens(value: string, usageError: (message: string) => Error): number {
  if (!/^\d{1,15}$/.test(value) || Number(value) < 1) {
    throw usageError(
      `--budget-tokens must be a whole number of tokens, at least 1, not ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}

/** The value of the last `flag` among `flags` (`--flag V` or `--flag=V`). */
function lastValue(flags: string[], flag: string): string | undefined {
  let value: string | undefined;
  flags.forEach((word, at) => {
    if (word === flag) value = flags[at + 1] ?? "";
    else if (word.startsWith(`${flag}=`)) value = word.slice(flag.length + 1);
  });
  return value;
}

/** The sandbox mode the agent flags choose (the last `--sandbox`), else `required`. */
function sandboxOf(
  flags: string[],
  usageError: (message: string) => Error,
): { mode: BatchOptions["sandbox"]; given: boolean } {
  let mode: string | undefined;
  flags.forEach((flag, at) => {
    if (flag === "--sandbox") mode = flags[at + 1];
    else if (flag.startsWith("--sandbox=")) mode = flag.slice("--sandbox=".length);
  });
  if (mode === undefined) return { mode: "required", given: false };
  if (mode !== "auto" && mode !== "required" && mode !== "off") {
    throw usageError(`--sandbox must be auto, required or off, not ${JSON.stringify(mode)}`);
  }
  return { mode, given: true };
}
