import { receipts, toolError } from "./receipts.js";
import type { Message } from "./types.js";

/**
 * The one place a history is made valid: a call without a result gets an `outcome unknown`
 * receipt right after its round; a result without an open call is dropped.
 */
export function normalizeHistory(history: Message[]): {
  messages: Message[];
  trailingRepairs: Message[];
  repaired: number;
} {
  const messages: Message[] = [];
  let pending: string[] = [];
  let repaired = 0;
  const closeRound = () => {
    const receiptsFor = pending.map((id) => toolError(id, receipts.outcomeUnknown));
    repaired += receiptsFor.length;
    messages.push(...receiptsFor);
    pending = [];
    return receiptsFor;
  };
  for (const message of history) {
    if (message.role === "tool") {
      if (!pending.includes(message.toolCallId)) continue;
      pending = pending.filter((id) => id !== message.toolCallId);
      messages.push(message);
      continue;
    }
    closeRound();
    messages.push(message);
    if (message.role === "assistant") {
      pending = message.toolCalls.map((call) => call.id);
    }
  }
  const trailingRepairs = closeRound();
  return { messages, trailingRepairs, repaired };
}
