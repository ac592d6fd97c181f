import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, writeSync } from "node:fs";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ErrorKindSchema } from "../error-kind.js";
import { fileLines } from "../session/lines.js";

/**
 * `DIR/results.jsonl`: one line per attempt, appended and synced, never rewritten. The build
 * writes this schema out as `mini-agent/batch-result.schema.json`. Beside it, `DIR/starts.jsonl`
 * holds one line per attempt started (its process, to end a leftover one on resume).
 */

/** How the agent ended, in the stream-json words where they exist. */
export const AgentStatusSchema = Type.Union([
  Type.Literal("completed"),
  Type.Literal("max_turns"),
  Type.Literal("budget_exceeded"),
  Type.Literal("error"),
  Type.Literal("compaction_failed"),
  Type.Literal("timeout"),
  Type.Literal("rate_limited"),
  Type.Literal("crashed"),
  Type.Literal("aborted"),
  Type.Literal("skipped_budget"),
]);
export type AgentStatus = Static<typeof AgentStatusSchema>;

export const OutcomeSchema = Type.Union([
  Type.Literal("passed"),
  Type.Literal("failed"),
  Type.Literal("no_check"),
  Type.Literal("unscored"),
]);
export type Outcome = Static<typeof OutcomeSchema>;

/** Why an attempt is unscored: it runs again on resume, up to `--max-attempts`. */
export const UnscoredSchema = Type.Union([
  Type.Literal("infra_error"),
  Type.Literal("setup_timeout"),
  Type.Literal("rate_limited"),
  Type.Literal("crashed"),
  Type.Literal("timeout"),
  Type.Literal("interrupted"),
  Type.Literal("provider_error"),
  Type.Literal("skipped_budget"),
]);
export type Unscored = Static<typeof UnscoredSchema>;

const Count = Type.Integer({ minimum: 0 });
const ExitCode = Type.Union([Type.Integer(), Type.Null()], {
  description: "The exit code, or null when a signal ended the process.",
});

export const ResultLineSchema = Type.Object(
  {
    version: Type.Literal(1),
    id: Type.String(),
    attempt: Type.Integer({ minimum: 1 }),
    taskHash: Type.String(),
    outcome: OutcomeSchema,
    /** Absent when the agent never ran (the workspace or `setup` failed). */
    agent: Type.Optional(AgentStatusSchema),
    unscored: Type.Optional(UnscoredSchema),
    agentExitCode: Type.Optional(ExitCode),
    setupExitCode: Type.Optional(ExitCode),
    checkExitCode: Type.Optional(ExitCode),
    /** The last part of the check's output, secrets and `env` values redacted. */
    checkOutput: Type.Optional(Type.String()),
    usage: Type.Optional(
      Type.Object(
        {
          inputTokens: Count,
          outputTokens: Count,
          cacheReadTokens: Type.Optional(Count),
          cacheWriteTokens: Type.Optional(Count),
          reasoningTokens: Type.Optional(Count),
        },
        { additionalProperties: false },
      ),
    ),
    durationMs: Count,
    agentDurationMs: Type.Optional(Count),
    sessionId: Type.Optional(Type.String()),
    sessionPath: Type.Optional(Type.String()),
    sandbox: Type.Optional(Type.String()),
    /** The workspace, the agent's stream (`logs/ID.N.jsonl`) and the diff, relative to DIR. */
    workspace: Type.String(),
    log: Type.Optional(Type.String()),
    diff: Type.Optional(Type.String()),
    diffStat: Type.Optional(
      Type.Object(
        { files: Count, insertions: Count, deletions: Count },
        { additionalProperties: false },
      ),
    ),
    error: Type.Optional(Type.String()),
    /** With `error`, from the agent's `result`: what failed, in one word (`rate_limited`, `auth`, …). */
    errorKind: Type.Optional(ErrorKindSchema),
    /**
     * The rounds the agent ran again (its stream-json `retry` events): how many, how many of them
     * after a 429 and after an overload, and the milliseconds it waited in all.
     */
    retries: Type.Optional(
      Type.Object(
        { count: Count, rateLimited: Count, overloaded: Count, waitedMs: Count },
        { additionalProperties: false },
      ),
    ),
    /** With `--budget-tokens`: the tokens of the batch's budget this attempt was given (its `--token-budget`). */
    reservedTokens: Type.Optional(Count),
  },
  { additionalProperties: false, description: "One attempt of one task of `mini-agent batch`." },
);
export type ResultLine = Static<typeof ResultLineSchema>;

/** An attempt started: its child's process, known by pid, start time and boot. */
export const StartLineSchema = Type.Object(
  {
    id: Type.String(),
    attempt: Type.Integer({ minimum: 1 }),
    pid: Type.Integer(),
    startTime: Type.String(),
    bootId: Type.String(),
  },
  { additionalProperties: false },
);
export type StartLine = Static<typeof StartLineSchema>;

/** Whether an attempt counts: a scored one is done, an unscored one may run again. */
export const scored = (line: ResultLine) => line.outcome !== "unscored";

/**
 * An append-only JSON-lines file. Opening it streams the lines already there that a schema
 * accepts to a callback, in order, and keeps none of them: the batch keeps only what resume
 * needs. A torn last line (a batch killed mid-write) is cut off before the first append; each
 * line is written whole with one `write` and synced.
 */
export class LinesFile<T> {
  private constructor(private readonly fd: number) {}

  /** Opens (or creates) `path`, giving `each` every line already there that `schema` accepts. */
  static async open<T>(
    path: string,
    schema: Parameters<typeof Value.Check>[0],
    each: (line: T) => void,
  ): Promise<LinesFile<T>> {
    const fd = openSync(path, "a");
    try {
      let torn = 0;
      for await (const { bytes, ended } of fileLines(path)) {
        // Bytes after the last newline are a line torn by a kill: dropped, so the next append starts clean.
        if (!ended) torn = bytes?.length ?? 0;
        else if (bytes !== undefined) {
          let value: unknown;
          try {
            value = JSON.parse(bytes.toString("utf8"));
          } catch {
            continue; // A line that is not JSON is no record; the others stand.
          }
          if (Value.Check(schema, value)) each(value as T);
        }
      }
      if (torn > 0) ftruncateSync(fd, fstatSync(fd).size - torn);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return new LinesFile<T>(fd);
  }

  append(line: T): void {
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
    fsyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}
