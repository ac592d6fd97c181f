import { headOf, tailOf } from "../text.js";
import type { Message, ModelClient, ToolCall } from "../types.js";
import { fenced } from "./fence.js";
import { CompactionError } from "./record.js";

/** A tool output longer than this is replaced in the summary's input by a stub saying what it was. */
export const prunedOutputChars = 2000;

/** The system prompt of the summary request. */
export const summaryPrompt = [
  "You write the working notes that replace the earlier part of a coding agent's conversation",
  "with a user. The agent will continue from your notes and the most recent messages only.",
  "The user's messages and the files and commands are kept separately; do not repeat them.",
  "Write these five sections, with these headings, in plain Markdown:",
  "## Goal",
  "## Decisions",
  "## Done",
  "## In progress",
  "## Next",
  "Be specific: names of files, functions, errors and values. Keep it under 600 words.",
].join("\n");

export interface SummaryInput {
  /** The summary of an earlier compaction, which the new one replaces. */
  previous?: string;
  /** The messages to summarise, a part of the history cut where every call has its result. */
  covered: readonly Message[];
  /** What the user asked to keep or stress (`/compact keep the API notes`). */
  instructions?: string;
  /** At most this many characters of transcript; beyond it the middle is left out, and said so. */
  maxChars: number;
}

/**
 * The text of the one user message the summary request sends. The covered messages travel as a
 * transcript inside it, never as messages: the summary request has no calls to pair, so it can
 * never be refused for a call cut from its result.
 */
export function summaryRequestText(input: SummaryInput): string {
  const transcript = boundedText(transcriptOf(input.covered), input.maxChars);
  return [
    ...(input.previous ? ["Notes from an earlier compaction:", fenced(input.previous), ""] : []),
    "The conversation to summarise:",
    transcript,
    "",
    ...(input.instructions
      ? [`The user asks the notes to keep this in view: ${input.instructions}`, ""]
      : []),
    "Write the notes now, in the five sections.",
  ].join("\n");
}

/**
 * The messages as a plain transcript; long tool outputs pruned to a stub naming their call and
 * size. Every text stands between fence lines it cannot close (`fenced`), so a tool output (a
 * file the model read) cannot fake the `[assistant]` or `[result of …]` markers.
 */
export function transcriptOf(messages: readonly Message[]): string {
  const calls = new Map<string, ToolCall>();
  const lines: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
        lines.push(`[user]\n${fenced(message.content)}`);
        break;
      case "assistant":
        if (message.content.trim() !== "") lines.push(`[assistant]\n${fenced(message.content)}`);
        for (const call of message.toolCalls) {
          calls.set(call.id, call);
          lines.push(`[tool call ${call.name} ${JSON.stringify(call.input)}]`);
        }
        break;
      case "tool": {
        const call = calls.get(message.toolCallId);
        const what = `${call?.name ?? "tool"}${message.isError ? " (error)" : ""}`;
        const body =
          message.content.length > prunedOutputChars
            ? `[pruned: the ${message.isError ? "error " : ""}output of ${call ? `${call.name} ${JSON.stringify(call.input)}` : "a tool call"}, ${message.content.length} characters, is not shown]`
            : message.content;
        lines.push(`[result of ${what}]\n${fenced(body)}`);
        break;
      }
    }
  }
  return lines.join("\n\n");
}

/** `text` when it fits `max` characters, else its head and tail around a note of what was cut. */
function boundedText(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = headOf(text, Math.ceil(max / 2));
  const tail = tailOf(text, Math.floor(max / 2));
  return `${head}\n\n[… ${text.length - head.length - tail.length} characters of the conversation left out here …]\n\n${tail}`;
}

/**
 * Asks `client` for the summary: the summary prompt, one user message, no tools. Any failure (an
 * error, no text) is a `CompactionError`; an abort passes through as it is.
 */
export async function requestSummary(
  client: ModelClient,
  text: string,
  signal: AbortSignal | undefined,
): Promise<string> {
  let summary = "";
  try {
    const request = {
      system: summaryPrompt,
      messages: [{ role: "user" as const, content: text }],
      tools: [],
      ...(signal && { signal }),
    };
    for await (const event of client.stream(request)) {
      if (event.type === "text") summary += event.text;
    }
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new CompactionError("compaction failed: the summary request failed", { cause: error });
  }
  if (summary.trim() === "") {
    if (signal?.aborted) throw new Error("aborted");
    throw new CompactionError("compaction failed: the summary request returned no text");
  }
  return summary.trim();
}
