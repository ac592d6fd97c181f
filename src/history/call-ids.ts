import { randomHex } from "../crypto.js";

/**
 * One rule for the ids and names of tool calls, used by both adapters as a call arrives and by
 * the history repair on load and before every request. Anthropic takes `^[a-zA-Z0-9_-]+$` for
 * ids and names; OpenAI caps ids at 40 characters and names at 64. A call outside the rule
 * would make the provider refuse that request and every later one, so it never enters the
 * history as it came.
 */
const VALID_ID = /^[A-Za-z0-9_-]{1,40}$/;
const VALID_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * How deep a call's input may nest: deeper input is cut as the call arrives (the adapters) and
 * refused by the tools, so no recursive walk of it can overflow the stack.
 */
export const MAX_INPUT_DEPTH = 64;

export function isValidCallId(id: string): boolean {
  return VALID_ID.test(id);
}

/** A fresh id within the rule: `call_` and 24 hex digits. */
export function newCallId(): string {
  return `call_${randomHex(12)}`;
}

/** `name` if the provider takes it, else the same with every other character as `_` (at most 64). */
export function safeToolName(name: string): string {
  if (VALID_NAME.test(name)) return name;
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  return cleaned === "" ? "unnamed_tool" : cleaned;
}
