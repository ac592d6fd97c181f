import type { Message } from "../types.js";

/**
 * Why a history would be refused by a provider, or `undefined` when both would take it: every
 * call of an assistant message is answered by exactly one `tool` message before the next user or
 * assistant message, no result answers a call that is not open, call ids are unique, and the
 * first message is the user's. `CompactingClient` checks every request it builds with it.
 */
export function historyProblem(messages: readonly Message[]): string | undefined {
  if (messages.length === 0) return "the history is empty";
  if (messages[0]?.role !== "user") return "the first message is not the user's";
  const seen = new Set<string>();
  let open = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (message.role === "tool") {
      if (!open.delete(message.toolCallId))
        return `message ${index} answers ${message.toolCallId}, which is not an open call`;
      continue;
    }
    if (open.size > 0)
      return `message ${index} comes before the results of ${[...open].join(", ")}`;
    if (message.role === "assistant") {
      open = new Set();
      for (const call of message.toolCalls) {
        if (seen.has(call.id)) return `message ${index} repeats the call id ${call.id}`;
        seen.add(call.id);
        open.add(call.id);
      }
    }
  }
  if (open.size > 0) return `the calls ${[...open].join(", ")} have no result`;
  return undefined;
}
