import type { Message } from "./types.js";

/**
 * Every fixed text the loop and the session store write in place of a tool result (or of a
 * message lost from the session file). They are
 * fixed on purpose: a thrown error's message may carry a secret, so it reaches the caller and
 * never the history.
 */
export const receipts = {
  abortedBeforeExecution: "aborted before execution",
  abortedDuringExecution: "aborted during execution",
  approvalFailed: "tool approval failed",
  executionFailed: "tool execution failed",
  /** Stands first in a history whose first message was lost (a torn first record). */
  firstMessageLost:
    "[the first message of this session could not be recovered from the session file]",
  notExecutedAfterFailure: "not executed after an earlier failure",
  rejected: "tool call rejected",
  outcomeUnknown:
    "outcome unknown: the session ended before this call reported a result; it may or may not have run",
  unknownTool: (name: string) => `unknown tool: ${name}`,
  /**
   * A call whose input the tool refuses, or that could not be read at all (`ModelEvent`'s
   * `invalidInput`): `invalid read input: path must be a string`.
   */
  invalidInput: (name: string, why: string) => `invalid ${name} input: ${why}`,
  /** Why a call's input could not be read: its arguments do not parse as JSON. */
  notJson: "input is not valid JSON",
  /** Why a call's input could not be read: it is JSON, but not an object. */
  notAnObject: (value: unknown) => `input must be an object, not ${kindOf(value)}`,
} as const;

/** What a JSON value is, in words: `a string`, `an array`, `null`. */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** The one way a failed, denied or skipped call becomes a history entry. */
export function toolError(toolCallId: string, content: string): Message {
  return { role: "tool", toolCallId, content, isError: true };
}
