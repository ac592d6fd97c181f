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
  -h, --help              print this help

Exit codes: 0 every task scored (or already complete); 1 tasks left unscored after their last
attempt; 2 bad usage or task file.`;

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
    agentFlags: sandbox.given ? agentFlags : ["--sandbox", "required", ...agentFlags],
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
