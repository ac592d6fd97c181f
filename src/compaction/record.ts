import { type Static, Type } from "@sinclair/typebox";
import { PlanItemSchema } from "../tools/plan.js";

/**
 * What the tool results of a covered part of the conversation establish, read from the calls and
 * their results (never written by the model). Each list is in the order things happened (a path
 * at its latest place) and keeps at most `factLimits` entries, the most recent; `omitted` counts
 * what was left out.
 */
export const FactsSchema = Type.Object({
  /** Paths `read` returned successfully. */
  filesRead: Type.Array(Type.String()),
  /** Paths `write` or `edit` changed successfully. */
  filesChanged: Type.Array(Type.String()),
  /** Commands `bash` ran, each with how it ended: `exit 0`, `exit 1`, `timed out`, `aborted`. */
  commands: Type.Array(Type.Object({ command: Type.String(), outcome: Type.String() })),
  /** Calls that did not run or failed before running: denied, unknown tool, invalid input, aborted. */
  refused: Type.Array(
    Type.Object({ tool: Type.String(), argument: Type.String(), reason: Type.String() }),
  ),
  /** Entries dropped from the lists above to keep them bounded. */
  omitted: Type.Integer({ minimum: 0 }),
  /** The plan as of the end of the covered part (its last `plan` call); absent without one. */
  plan: Type.Optional(Type.Array(PlanItemSchema)),
});

/**
 * One compaction, as the session file keeps it (`type: "compaction"`) and as `CompactingClient`
 * reports and resumes it. Everything before the first kept message is covered: earlier
 * compactions' contents are carried forward, so the last record alone is enough to resume.
 */
export const CompactionSchema = Type.Object({
  /**
   * The first message kept verbatim, counted among the user and assistant messages of the whole
   * conversation from 0 (tool results are not counted: they follow their call). Every message
   * before it is covered by this record.
   */
  firstKept: Type.Integer({ minimum: 0 }),
  /** Compactions in this conversation so far, this one included. */
  count: Type.Integer({ minimum: 1 }),
  /** `size`: the request reached the limit; `overflow`: the provider refused it; `manual`: asked for. */
  trigger: Type.Union([Type.Literal("size"), Type.Literal("overflow"), Type.Literal("manual")]),
  /** Every covered user message, in order, each verbatim up to the cap (head and tail beyond it). */
  userMessages: Type.Array(Type.String()),
  facts: FactsSchema,
  /** The model's structured summary: goal, decisions, done, in progress, next. */
  summary: Type.String(),
  /** Estimated tokens of the request before and after. */
  tokensBefore: Type.Integer({ minimum: 0 }),
  tokensAfter: Type.Integer({ minimum: 0 }),
});

export type Facts = Static<typeof FactsSchema>;
export type Compaction = Static<typeof CompactionSchema>;

/**
 * A compaction that could not do its job: the summary request failed, or the result did not
 * shrink the request enough to go on. The conversation is left as it was; retrying the same
 * request would fail the same way, so callers stop (the CLI exits 4).
 */
export class CompactionError extends Error {
  override readonly name = "CompactionError";
}
