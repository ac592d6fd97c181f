import { sha256Hex } from "../crypto.js";
import { mapStrings } from "../map-strings.js";
import { receipts, toolError } from "../receipts.js";
import { wellFormed } from "../text.js";
import type { Message, Reasoning, ToolCall } from "../types.js";
import { isValidCallId, safeToolName } from "./call-ids.js";

export interface NormalizeOptions {
  /**
   * Makes an id for a call whose id is invalid or already taken, from a seed naming the call's
   * place in the history. The default hashes the seed (`call_` and 24 hex digits), so one
   * history always gets the same ids: on every load and before every request.
   */
  newId?: (seed: string) => string;
  /**
   * Whether the history must start with a user message, as providers require of what they are
   * sent: when its first record was torn, the `firstMessageLost` placeholder goes first. Off for
   * a history that continues a compacted one, which may start mid-turn (the compaction's own note
   * goes before it in what is sent). The adapters and loading without a compaction set it.
   */
  startWithUser?: boolean;
}

/** A call of the round still waiting for its result: the id it came with and the one it has. */
interface OpenCall {
  asked: string;
  id: string;
}

/**
 * The one place a history is made valid for both providers, on load and before every request:
 * - every call has a valid id (`isValidCallId`) that no earlier call has; a call that needed a
 *   new one keeps its results: a `tool` message answers the first open call of its round that
 *   came with, or now has, its id;
 * - a call without a result gets an `outcome unknown` receipt right after its round; a result
 *   without an open call is dropped;
 * - tool names follow `safeToolName`; every string (texts, results, inputs at any depth) has its
 *   lone surrogates replaced by U+FFFD;
 * - with `startWithUser`, a history that does not start with a user message (its first record
 *   was torn) starts with the `firstMessageLost` placeholder: providers refuse any other.
 * A valid history comes back as the same message objects.
 */
export function normalizeHistory(
  history: Message[],
  options: NormalizeOptions = {},
): {
  messages: Message[];
  trailingRepairs: Message[];
  repaired: number;
} {
  const newId = options.newId ?? hashedId;
  const messages: Message[] = [];
  const taken = new Set<string>();
  let open: OpenCall[] = [];
  let repaired = 0;
  const closeRound = () => {
    const receiptsFor = open.map((call) => toolError(call.id, receipts.outcomeUnknown));
    repaired += receiptsFor.length;
    messages.push(...receiptsFor);
    open = [];
    return receiptsFor;
  };
  const idFor = (asked: string, seed: string) => {
    let id = asked;
    for (let attempt = 0; !isValidCallId(id) || taken.has(id); attempt++) {
      if (attempt === 100) throw new Error(`no fresh tool call id for ${JSON.stringify(seed)}`);
      id = newId(`${seed}:${attempt}`);
    }
    taken.add(id);
    return id;
  };

  for (const [index, message] of history.entries()) {
    if (message.role === "tool") {
      const at = openIndex(open, message.toolCallId);
      const answered = open[at];
      if (!answered) continue;
      open.splice(at, 1);
      const content = wellFormed(message.content);
      const same = answered.id === message.toolCallId && content === message.content;
      messages.push(same ? message : { ...message, toolCallId: answered.id, content });
      continue;
    }
    closeRound();
    if (message.role === "user") {
      const content = wellFormed(message.content);
      messages.push(content === message.content ? message : { ...message, content });
      continue;
    }
    const toolCalls = message.toolCalls.map((call, callIndex): ToolCall => {
      const id = idFor(call.id, `${index}:${callIndex}:${call.id}`);
      open.push({ asked: call.id, id });
      const name = safeToolName(call.name);
      const input = mapStrings(call.input, wellFormed, { keys: true });
      const same = id === call.id && name === call.name && input === call.input;
      return same ? call : { ...call, id, name, input };
    });
    const content = wellFormed(message.content);
    const reasoning = message.reasoning?.map((part) => cleanReasoning(part, wellFormed));
    const same =
      content === message.content &&
      toolCalls.every((call, at) => call === message.toolCalls[at]) &&
      (reasoning ?? []).every((part, at) => part === message.reasoning?.[at]);
    messages.push(
      same ? message : { ...message, content, toolCalls, ...(reasoning && { reasoning }) },
    );
  }
  const trailingRepairs = closeRound();
  if (options.startWithUser && messages.length > 0 && messages[0]?.role !== "user") {
    messages.unshift({ role: "user", content: receipts.firstMessageLost });
  }
  return { messages, trailingRepairs, repaired };
}

/** The open call a result answers: the first that came with its id, else the first that has it. */
function openIndex(open: OpenCall[], toolCallId: string): number {
  const asked = open.findIndex((call) => call.asked === toolCallId);
  return asked !== -1 ? asked : open.findIndex((call) => call.id === toolCallId);
}

function hashedId(seed: string): string {
  return `call_${sha256Hex(seed).slice(0, 24)}`;
}

/**
 * A reasoning part with its text cleaned (made well formed, or its secrets redacted). A signature
 * proves the provider wrote that exact text, so when cleaning changes the text the signature no
 * longer holds for it and is dropped: the cleaned text stays for the reader, and a provider is
 * never sent a signature for a text it did not write (a tool loop whose thinking cannot go back
 * goes on without thinking, see `anthropic-thinking.ts`). Redacted data is opaque and kept.
 */
export function cleanReasoning(part: Reasoning, clean: (text: string) => string): Reasoning {
  if (part.type !== "thinking") return part;
  const text = clean(part.text);
  if (text === part.text) return part;
  const { signature: _dropped, ...unsigned } = part;
  return { ...unsigned, text };
}
