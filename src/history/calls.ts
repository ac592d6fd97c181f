import type { Message, ToolCall } from "../types.js";
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

/**
 * A streamed call's arguments as the object the call carries: the JSON text the provider sent,
 * or `given` when it sent none (empty means `{}`). Invalid JSON and anything but an object end
 * the round with an error naming the call: such a call is never run.
 */
export function callInput(
  args: string,
  index: number,
  given: unknown = {},
): Record<string, unknown> {
  let input: unknown = given;
  if (args.trim() !== "") {
    try {
      input = JSON.parse(args);
    } catch {
      throw new Error(`tool call ${index} returned invalid JSON arguments`);
    }
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new Error(`tool call ${index} returned non-object arguments`);
  }
  return input as Record<string, unknown>;
}
