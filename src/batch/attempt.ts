import { realpathSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { ErrorKind } from "../error-kind.js";
import { runCommand } from "../sandbox/run.js";
import { sessionsDir } from "../session/store.js";
import { type AgentEnd, type Retry, runAgent } from "./agent.js";
import { identify } from "./processes.js";
import type { Outcome, ResultLine, StartLine, Unscored } from "./results.js";
import { runProgram } from "./spawned.js";
import type { Task } from "./tasks.js";
import { type Base, restoreFiles, type Workspaces } from "./workspace.js";

/** What every attempt of a batch shares. */
export interface AttemptContext {
  dir: string;
  workspaces: Workspaces;
  /** `node .../main.js`: the mini-agent that runs the batch runs its tasks. */
  command: string[];
  /** The flags after `--`, with `--sandbox required` added unless they name a sandbox mode. */
  agentFlags: string[];
  sandbox: "auto" | "required" | "off";
  /** Hidden from every task: the batch's own files and the task file's folder. */
  hidden: string[];
  timeoutUnscored: boolean;
  graceMs: number;
  started: (line: StartLine) => void;
  signal: AbortSignal;
}

/** A task's `timeoutS` when it gives none: half an hour. */
export const DEFAULT_TIMEOUT_S = 1800;

/** What the batch gives one attempt: its share of the budget, and an ear for its retries. */
export interface AttemptTerms {
  /** The tokens reserved for it (`--budget-tokens`): its `--token-budget`, over the task's own. */
  reserved: number | undefined;
  /**
   * Told each round its agent runs again, as it comes, and the 429 or overload it gave up on, if
   * it did (with `delayMs` 0): the batch pauses its starts.
   */
  retried: (retry: Retry) => void;
}

/**
 * A failure of the provider rather than of the task (a refused key, a server error, no
 * connection): the attempt is unscored, never failed.
 */
const providerKinds = new Set<ErrorKind>(["auth", "server", "network"]);

/** Runs one attempt from a fresh workspace to its record: setup, the agent, the files restored, the check. */
export async function runAttempt(
  task: Task,
  attempt: number,
  context: AttemptContext,
  terms: AttemptTerms,
): Promise<ResultLine> {
  const began = Date.now();
  const { line } = task;
  const name = `${line.id}.${attempt}`;
  const redact = redactor(Object.values(line.env ?? {}));
  const env = { ...process.env, ...line.env };
  const record = (outcome: Outcome, fields: Partial<ResultLine>): ResultLine => ({
    version: 1,
    id: line.id,
    attempt,
    taskHash: task.hash,
    outcome,
    durationMs: Date.now() - began,
    workspace: join("work", line.id, String(attempt)),
    ...fields,
  });
  const unscored = (why: Unscored, fields: Partial<ResultLine>) =>
    record("unscored", { unscored: why, ...fields });
  const timeoutMs = (line.timeoutS ?? DEFAULT_TIMEOUT_S) * 1000;

  let made: { path: string; base: Base };
  try {
    await mkdir(join(context.dir, "logs"), { recursive: true });
    await mkdir(join(context.dir, "diffs"), { recursive: true });
    made = await context.workspaces.make(task, attempt);
  } catch (error) {
    return unscored("infra_error", {
      error: redact(`the workspace could not be made: ${(error as Error).message}`),
    });
  }
  const workspace = made.path;
  if (line.setup !== undefined) {
    const setup = await runProgram(["sh", "-c", line.setup], {
      cwd: workspace,
      env,
      timeoutMs,
      graceMs: context.graceMs,
      signal: context.signal,
    });
    if (setup.stopped)
      return unscored("interrupted", { setupExitCode: setup.code, error: "the batch was stopped" });
    if (setup.timedOut)
      return unscored("setup_timeout", { setupExitCode: setup.code, error: redact(setup.output) });
    if (setup.code !== 0) {
      return unscored("infra_error", {
        setupExitCode: setup.code,
        error: redact(`setup failed: ${setup.output}`),
      });
    }
  }
  const prompt = line.prompt ?? (await readFile(task.promptFile ?? "", "utf8"));
  const log = join(context.dir, "logs", `${name}.jsonl`);
  const agent = await runAgent({
    command: context.command,
    flags: [
      ...agentFlags(context, workspace),
      ...overrides(task),
      ...(terms.reserved !== undefined ? [`--token-budget=${terms.reserved}`] : []),
    ],
    prompt,
    cwd: workspace,
    env,
    timeoutMs,
    graceMs: context.graceMs,
    log,
    redact,
    signal: context.signal,
    retried: terms.retried,
    started: (pid) => context.started({ id: line.id, attempt, ...identify(pid) }),
  });
  const diff = join("diffs", `${name}.diff`);
  const diffStat = await context.workspaces
    .diff(workspace, made.base, join(context.dir, diff))
    .catch(() => undefined);
  const ran: Partial<ResultLine> = {
    agent: agent.status,
    agentExitCode: agent.exitCode,
    agentDurationMs: agent.durationMs,
    log: relative(context.dir, log),
    ...(diffStat && { diff, diffStat }),
    ...agentFields(agent, workspace, env),
    ...(terms.reserved !== undefined && { reservedTokens: terms.reserved }),
  };
  if (agent.status === "rate_limited") {
    terms.retried({
      errorKind: agent.errorKind,
      retryAfterMs: agent.retryAfterMs,
      delayMs: 0,
      reason: agent.error ?? "rate limited",
    });
  }
  if (agent.stopped) return unscored("interrupted", ran);
  if (agent.infra !== undefined) return unscored("infra_error", { ...ran, error: agent.infra });
  if (agent.status === "rate_limited" || agent.status === "crashed")
    return unscored(agent.status, ran);
  if (
    agent.status === "error" &&
    agent.errorKind !== undefined &&
    providerKinds.has(agent.errorKind)
  )
    return unscored("provider_error", ran);
  if (agent.status === "timeout")
    return context.timeoutUnscored ? unscored("timeout", ran) : record("failed", ran);
  if (agent.status === "error" || agent.status === "compaction_failed")
    return record("failed", ran);
  if (line.check === undefined) return record("no_check", ran);
  try {
    if (task.checkFiles !== undefined) await restoreFiles(task.checkFiles, workspace);
  } catch (error) {
    return unscored("infra_error", {
      ...ran,
      error: `the check's files could not be put back: ${(error as Error).message}`,
    });
  }
  const check = await runCommand(`exec sh -c ${quoted(line.check)}`, {
    cwd: workspace,
    env,
    sandbox: { mode: context.sandbox, hide: context.hidden },
    timeoutMs,
    graceMs: context.graceMs,
    maxOutputChars: 4000,
    signal: context.signal,
  });
  if (check.kind === "refused")
    return unscored("infra_error", { ...ran, error: `the check could not run: ${check.reason}` });
  const { end, output } = check;
  if (end.kind === "abort") return unscored("interrupted", ran);
  const text = redact(
    output.cut === 0 ? output.head + output.tail : `${output.head}\n…\n${output.tail}`,
  );
  const checkExitCode = end.kind === "exit" ? end.code : null;
  return record(checkExitCode === 0 ? "passed" : "failed", {
    ...ran,
    checkExitCode,
    checkOutput: text,
  });
}

/**
 * The batch's flags for a child, then the user's (after `--`). With `--sandbox off` there is
 * nothing to hide paths in (the child refuses `--sandbox-hide` then): the user chose no boundary.
 */
function agentFlags(context: AttemptContext, workspace: string): string[] {
  const hidden = context.sandbox === "off" ? [] : context.hidden;
  return [
    "--output-format",
    "stream-json",
    "--end-with-stdin",
    `--cwd=${workspace}`,
    ...hidden.map((path) => `--sandbox-hide=${path}`),
    ...context.agentFlags,
  ];
}

/** A task line's overrides, last, so they win over the flags after `--`. */
function overrides(task: Task): string[] {
  const { model, maxTurns, tokenBudget } = task.line;
  return [
    ...(model !== undefined ? [`--model=${model}`] : []),
    ...(maxTurns !== undefined ? [`--max-turns=${maxTurns}`] : []),
    ...(tokenBudget !== undefined ? [`--token-budget=${tokenBudget}`] : []),
  ];
}

/** What the agent's end says for the record; its session file is where the child's env put it. */
function agentFields(
  agent: AgentEnd,
  workspace: string,
  env: NodeJS.ProcessEnv,
): Partial<ResultLine> {
  let sessionPath: string | undefined;
  if (agent.sessionId !== undefined) {
    try {
      sessionPath = join(sessionsDir(env, realpathSync(workspace)), `${agent.sessionId}.jsonl`);
    } catch {
      sessionPath = undefined;
    }
  }
  return {
    ...(agent.sessionId !== undefined && { sessionId: agent.sessionId }),
    ...(sessionPath !== undefined && { sessionPath }),
    ...(agent.sandbox !== undefined && { sandbox: agent.sandbox }),
    ...(agent.usage !== undefined && { usage: agent.usage }),
    ...(agent.error !== undefined && { error: agent.error }),
    ...(agent.errorKind !== undefined && { errorKind: agent.errorKind }),
    ...(agent.retries !== undefined && { retries: agent.retries }),
  };
}

const quoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** Replaces each of `values` (and its JSON-escaped form) (the task's `env`) wherever it appears. */
export function redactor(values: string[]): (text: string) => string {
  // As written, and as a JSON string holds it (a log line is JSON).
  const forms = values.flatMap((value) => [value, JSON.stringify(value).slice(1, -1)]);
  const secrets = [...new Set(forms.filter((form) => form.length > 0))].sort(
    (a, b) => b.length - a.length,
  );
  if (secrets.length === 0) return (text) => text;
  return (text) => secrets.reduce((out, secret) => out.replaceAll(secret, "[redacted]"), text);
}
