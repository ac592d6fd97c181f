import type { AgentEvent } from "../agent.js";
import type { Compaction } from "../compaction/record.js";
import { headOf } from "../text.js";
import type { Message, ToolCall, Usage } from "../types.js";
import type { OutputFormat } from "./args.js";
import { type RetryNotice, retryLine } from "./retry.js";
import { visible } from "./terminal.js";

export interface TurnSummary {
  status: "completed" | "aborted" | "max_turns" | "error";
  text: string;
  sessionId: string;
  usage: Usage;
  error?: string;
}

/**
 * Renders what the loop reports: text on stdout, one line per tool call on stderr, or JSON.
 * In text, everything from the model or a tool passes through `visible`: escape sequences, bidi
 * controls and stray carriage returns are shown, never obeyed (JSON escaping protects the rest).
 * `finish` ends a partial line, so what is printed after it (an error) starts on its own line.
 * `retry` announces a lost round run again: one stderr line in every format; in text, an answer
 * already streamed for the lost round is ended and said to be discarded; in `stream-json`, a
 * `retry` event tells a consumer to drop the `text` events since the last event of another type.
 * A compaction is a `compaction` event in `stream-json` (the one line on stderr is the CLI's).
 */
export interface Output {
  event(event: AgentEvent): void;
  retry(notice: RetryNotice): void;
  compaction(compaction: Compaction): void;
  finish(summary: TurnSummary): void;
}

interface Streams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export function createOutput(format: OutputFormat, { stdout, stderr }: Streams): Output {
  const calls = new Map<string, ToolCall>();
  const line = (stream: NodeJS.WritableStream, value: unknown) =>
    stream.write(`${JSON.stringify(value)}\n`);
  let endsWithNewline = true;
  const retryNotice = (notice: RetryNotice, suffix = "") =>
    stderr.write(`mini-agent: ${retryLine(notice)}${suffix}\n`);

  const remember = (message: Message) => {
    if (message.role === "assistant")
      for (const call of message.toolCalls) calls.set(call.id, call);
  };

  switch (format) {
    case "text": {
      // Text of the round still streaming: lost if the round is.
      let partial = false;
      return {
        event(event) {
          if (event.type === "text") {
            stdout.write(visible(event.text, { multiline: true }));
            endsWithNewline = event.text.endsWith("\n");
            partial = true;
          } else if (event.type === "message") {
            partial = false;
            remember(event.message);
            if (
              event.message.role === "assistant" &&
              event.message.content !== "" &&
              !endsWithNewline
            ) {
              stdout.write("\n");
              endsWithNewline = true;
            }
            if (event.message.role === "tool")
              stderr.write(`${toolLine(calls.get(event.message.toolCallId), event.message)}\n`);
          }
        },
        retry(notice) {
          if (!endsWithNewline) stdout.write("\n");
          endsWithNewline = true;
          retryNotice(notice, partial ? "; the partial answer above is discarded" : "");
          partial = false;
        },
        compaction() {},
        finish(summary) {
          if (!endsWithNewline) stdout.write("\n");
          if (summary.status === "aborted") stderr.write("interrupted\n");
          if (summary.status === "max_turns")
            stderr.write("stopped: turn limit reached (--max-turns)\n");
        },
      };
    }
    case "json": {
      return {
        event(event) {
          if (event.type === "message") remember(event.message);
        },
        retry: (notice) => retryNotice(notice),
        compaction() {},
        finish: (summary) => line(stdout, summary),
      };
    }
    case "stream-json":
      return {
        event(event) {
          if (event.type === "text") line(stdout, { type: "text", text: event.text });
          else if (event.type === "tool_start")
            line(stdout, { type: "tool_start", id: event.call.id });
          else if (event.message.role === "assistant") {
            for (const call of event.message.toolCalls)
              line(stdout, { type: "tool_call", ...call });
          } else if (event.message.role === "tool") {
            const { toolCallId: id, content, isError } = event.message;
            line(stdout, { type: "tool_result", id, content, isError });
          }
        },
        retry(notice) {
          line(stdout, { type: "retry", ...notice });
          retryNotice(notice);
        },
        compaction: ({ trigger, count, tokensBefore, tokensAfter }) =>
          line(stdout, { type: "compaction", trigger, count, tokensBefore, tokensAfter }),
        finish: (summary) => line(stdout, { type: "result", ...summary }),
      };
  }
}

/** `  ✓ read src/a.ts` or `  ✗ bash npm test: exit code 1`: tool, short argument, outcome. */
function toolLine(call: ToolCall | undefined, result: Message & { role: "tool" }): string {
  const name = call?.name ?? "tool";
  const argument = call ? shortArgument(call.input) : "";
  const head = `  ${result.isError ? "✗" : "✓"} ${visible(name)}${argument ? ` ${argument}` : ""}`;
  if (!result.isError) return head;
  // bash ends its result with its status; every other tool says why it failed first.
  const lines = result.content.trim().split("\n");
  const reason = (name === "bash" ? lines.at(-1) : lines[0]) ?? "";
  return `${head}: ${clip(visible(reason), 120)}`;
}

function shortArgument(input: Record<string, unknown>): string {
  const value = ["command", "path", "pattern"]
    .map((key) => input[key])
    .find((v) => typeof v === "string");
  return typeof value === "string" ? clip(visible(value.replace(/[ \t]+/g, " ")), 60) : "";
}

const clip = (text: string, max: number) =>
  text.length > max ? `${headOf(text, max - 1)}…` : text;
