import { receipts } from "../receipts.js";
import type { Message, ModelEvent, ToolCall } from "../types.js";
import { isValidCallId, MAX_INPUT_DEPTH, newCallId, safeToolName } from "./call-ids.js";

/**
 * What a round's calls must not collide with, and where fresh ids come from (injected by tests;
 * default `newCallId`).
 */
export interface RoundIds {
  /** Every call id the history sent with this request already holds. */
  taken?: ReadonlySet<string>;
  newId?: () => string;
}

/** Every call id in `messages`, declared or answered. */
export function callIdsIn(messages: readonly Message[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role === "assistant") for (const call of message.toolCalls) ids.add(call.id);
    else if (message.role === "tool") ids.add(message.toolCallId);
  }
  return ids;
}

/**
 * A round's calls as they may enter the history, for both adapters. An id that is missing,
 * outside the rule, repeated within the round or already in the history is replaced by a fresh
 * one (the provider would refuse the next request, and every one after it); a name outside the
 * rule becomes `safeToolName(name)`, so the loop answers it as an unknown tool and the round is
 * kept; an input nested deeper than the tools take is cut (`withinInputDepth`), so the tool
 * answers it with its own error and the round is kept. Valid, unique ids and names and inputs
 * within the depth pass unchanged, in order.
 */
export function admitCalls(calls: readonly ToolCall[], ids: RoundIds = {}): ToolCall[] {
  const taken = ids.taken ?? new Set<string>();
  const newId = ids.newId ?? newCallId;
  const used = new Set<string>();
  const isFree = (id: string) => isValidCallId(id) && !used.has(id) && !taken.has(id);
  return calls.map((call) => {
    let id = call.id;
    while (!isFree(id)) id = newId();
    used.add(id);
    return { id, name: safeToolName(call.name), input: withinInputDepth(call.input) };
  });
}

/**
 * `input` if it is nested at most `MAX_INPUT_DEPTH` levels deep, else a copy in which every
 * array or object one level past the limit is empty: still too deep, so the tool refuses it with
 * `nested more than 64 levels deep`, but small enough to serialise and send back. An input a
 * thousand times deeper would overflow the stack of every recursive walk after it (the session
 * record's `JSON.stringify`, the provider's request).
 */
export function withinInputDepth(input: Record<string, unknown>): Record<string, unknown> {
  if (!isDeeperThan(input, MAX_INPUT_DEPTH)) return input;
  return copyTo(input, 0) as Record<string, unknown>;
}

/** Whether some array or object in `value` sits at depth `max` or more (the root is depth 0). */
function isDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** `value` copied down to depth `MAX_INPUT_DEPTH`, where containers are left empty. */
function copyTo(value: unknown, depth: number): unknown {
  if (typeof value !== "object" || value === null) return value;
  const cut = depth >= MAX_INPUT_DEPTH;
  if (Array.isArray(value)) return cut ? [] : value.map((item) => copyTo(item, depth + 1));
  if (cut) return {};
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, copyTo(item, depth + 1)]),
  );
}

/** A call as adapters yield it: with why its input could not be used, when it could not. */
export type CallEvent = Extract<ModelEvent, { type: "tool_call" }>;

/**
 * The call with the model's input, when it is an object, or else with `{}` and why not (see
 * `ModelEvent`'s `invalidInput`): such a call is answered with a receipt and never run.
 */
export function callWithInput(id: string, name: string, input: unknown): CallEvent {
  if (typeof input === "object" && input !== null && !Array.isArray(input))
    return { type: "tool_call", call: { id, name, input: input as Record<string, unknown> } };
  return unusable(id, name, receipts.notAnObject(input));
}

/**
 * A streamed call's arguments: the JSON text the provider sent, or `given` when it sent none
 * (empty means `{}`). Text that is not JSON, or JSON that is not an object, gives the call `{}`
 * and why (`callWithInput`).
 */
export function callFromArguments(
  id: string,
  name: string,
  args: string,
  given: unknown = {},
): CallEvent {
  if (args.trim() === "") return callWithInput(id, name, given);
  try {
    return callWithInput(id, name, JSON.parse(args));
  } catch {
    return unusable(id, name, receipts.notJson);
  }
}

function unusable(id: string, name: string, why: string): CallEvent {
  return { type: "tool_call", call: { id, name, input: {} }, invalidInput: why };
}

/**
 * The round's calls, in order, with ids, names and inputs the provider takes (`admitCalls`),
 * each still with why its input could not be used when it could not.
 */
export function admitCallEvents(calls: readonly CallEvent[], ids: RoundIds = {}): CallEvent[] {
  const admitted = admitCalls(
    calls.map(({ call }) => call),
    ids,
  );
  return admitted.map((call, i) => ({ ...(calls[i] as CallEvent), call }));
}
