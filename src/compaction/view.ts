import { headOf, tailOf } from "../text.js";
import type { Message } from "../types.js";
import { renderFacts } from "./facts.js";
import { fence, fenced } from "./fence.js";
import type { Compaction } from "./record.js";

/** Characters of a covered user message the model sees verbatim; beyond it, its head and tail. */
export const userMessageCap = 4000;

/** `text` whole when it fits `cap`, else its head and tail with the number of characters cut. */
export function capped(text: string, cap = userMessageCap): string {
  if (text.length <= cap) return text;
  const head = headOf(text, Math.ceil(cap / 2));
  const tail = tailOf(text, Math.floor(cap / 2));
  const cut = text.length - head.length - tail.length;
  return `${head}\n[… ${cut} characters of this message left out …]\n${tail}`;
}

/**
 * The user message that stands in for everything a compaction covers: a note saying what
 * happened, the user's messages verbatim, the facts from the receipts, then the model's summary.
 * Nothing the model wrote can pass for one of the note's sections: the summary stands between
 * fence lines it cannot close, and the facts quote every path and command (`renderFacts`).
 */
export function compactionMessage(compaction: Compaction): Message {
  const requests = compaction.userMessages.map((text, i) => `### Message ${i + 1}\n${text}`);
  const content = [
    "[This conversation was compacted to fit the model's context window" +
      ` (compaction ${compaction.count}).]`,
    "What came before the messages that follow is replaced by this note: the user's messages, " +
      "facts taken from the tool results, and a summary. The earlier tool outputs are gone: " +
      "read a file again before you edit it, and do not rely on remembered file contents.",
    "",
    "## The user's earlier messages, verbatim",
    requests.length > 0 ? requests.join("\n\n") : "(none)",
    "",
    "## Facts from the tool results (recorded, not summarised)",
    renderFacts(compaction.facts),
    "",
    `## Summary of the work so far (written by the model, between the ${fence(compaction.summary)} lines)`,
    fenced(compaction.summary),
  ].join("\n");
  return { role: "user", content };
}

/**
 * What the model sees: the compaction's message, then the messages from `keptFrom` verbatim,
 * except the signed thinking (a signature or redacted data) of turns already finished (before
 * the last user message): providers that sign thinking check it against everything before it,
 * which the compaction replaced, and need only the unfinished tool loop's thinking back, which
 * is kept whole. Unsigned reasoning stays: nothing checks it, and some servers want it back.
 */
export function projectedMessages(
  compaction: Compaction | undefined,
  messages: readonly Message[],
  keptFrom: number,
): Message[] {
  if (!compaction) return [...messages];
  const kept = messages.slice(keptFrom);
  const loopStart = kept.map((message) => message.role).lastIndexOf("user");
  return [
    compactionMessage(compaction),
    ...kept.map((message, i) => (i < loopStart ? withoutSignedReasoning(message) : message)),
  ];
}

function withoutSignedReasoning(message: Message): Message {
  if (message.role !== "assistant" || message.reasoning === undefined) return message;
  const { reasoning, ...rest } = message;
  const unsigned = reasoning.filter((part) => part.type === "thinking" && !part.signature);
  if (unsigned.length === reasoning.length) return message;
  return unsigned.length > 0 ? { ...rest, reasoning: unsigned } : rest;
}
