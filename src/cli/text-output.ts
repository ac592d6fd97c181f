import { headOf } from "../text.js";
import type { Message, ToolCall } from "../types.js";
import type { Output, Streams } from "./output.js";
import { retryNotice } from "./retry.js";
import { visible } from "./terminal.js";
import { thinkingView } from "./thinking-view.js";

/**
 * `--output-format text`: the answer on stdout, one line per tool call on stderr. Everything
 * from the model or a tool passes through `visible`: escape sequences, bidi controls and stray
 * carriage returns are shown, never obeyed. `finish` ends a partial line, so what is printed
 * after it (an error) starts on its own line. A retried round's streamed answer is ended and
 * said to be discarded.
 */
export function textOutput({ stdout, stderr }: Streams, showThinking = false): Output {
  const calls = new Map<string, ToolCall>();
  const thinking = thinkingView(stderr, showThinking);
  let endsWithNewline = true;
  // Text of the round still streaming: lost if the round is.
  let partial = false;
  return {
    event(event) {
      if (event.type === "thinking") return thinking.add(event.text);
      thinking.end();
      if (event.type === "text") {
        stdout.write(visible(event.text, { multiline: true }));
        endsWithNewline = event.text.endsWith("\n");
        partial = true;
      } else if (event.type === "message") {
        partial = false;
        const message = event.message;
        if (message.role === "assistant") {
          for (const call of message.toolCalls) calls.set(call.id, call);
          if (message.content !== "" && !endsWithNewline) {
            stdout.write("\n");
            endsWithNewline = true;
          }
        }
        if (message.role === "tool")
          stderr.write(`${toolLine(calls.get(message.toolCallId), message)}\n`);
      }
    },
    retry(notice) {
      thinking.drop();
      if (!endsWithNewline) stdout.write("\n");
      endsWithNewline = true;
      retryNotice(stderr, notice, partial ? "; the partial answer above is discarded" : "");
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
