import { isValidCallId, newCallId, safeToolName } from "../call-ids.js";
import type { Message, ToolCall } from "../types.js";

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
 * kept. Valid, unique ids and names pass unchanged, in order.
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
    return { id, name: safeToolName(call.name), input: call.input };
  });
}
