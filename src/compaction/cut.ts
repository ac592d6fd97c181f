import type { Message } from "../types.js";
import { type ImageTokenRule, messageTokens } from "./size.js";

/**
 * Where a history may be cut into a covered part and a kept part: only where every call has its
 * result on its own side. `legalCuts(messages)[i]` says whether the cut before message `i` (0 to
 * `messages.length`) is one: no call before `i` is answered at or after `i` or left unanswered,
 * and no result at or after `i` answers a call before `i` or no call at all.
 */
export function legalCuts(messages: readonly Message[]): boolean[] {
  const n = messages.length;
  const forbidden = new Int32Array(n + 2);
  const forbid = (from: number, to: number) => {
    forbidden[from] = (forbidden[from] ?? 0) + 1;
    forbidden[to + 1] = (forbidden[to + 1] ?? 0) - 1;
  };
  const declared = new Map<string, number>();
  const answered = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (message.role === "assistant") {
      for (const call of message.toolCalls) declared.set(call.id, index);
    } else if (message.role === "tool") {
      const at = declared.get(message.toolCallId);
      forbid(at === undefined ? 0 : at + 1, index);
      answered.add(message.toolCallId);
    }
  }
  for (const [id, at] of declared) if (!answered.has(id)) forbid(at + 1, n);
  const legal: boolean[] = [];
  let depth = 0;
  for (let i = 0; i <= n; i++) {
    depth += forbidden[i] ?? 0;
    legal.push(depth === 0);
  }
  return legal;
}

/**
 * The cut for a compaction of `messages` whose first `from` messages are already covered: the
 * earliest legal cut after `from` that leaves at most `keepTokens` verbatim, else the latest
 * legal cut after `from` (the recent turns alone are over the budget). `undefined` when no legal
 * cut covers anything new.
 */
export function chooseCut(
  messages: readonly Message[],
  from: number,
  keepTokens: number,
  rule?: ImageTokenRule,
): number | undefined {
  const legal = legalCuts(messages);
  let kept = 0;
  let best: number | undefined;
  let latest: number | undefined;
  for (let i = messages.length; i > from; i--) {
    if (i < messages.length) kept += messageTokens(messages[i] as Message, rule);
    if (!legal[i]) continue;
    latest ??= i;
    if (kept <= keepTokens) best = i;
    else break;
  }
  return best ?? latest;
}
