import { headOf } from "../../text.js";
import type { Message, ToolCall } from "../../types.js";
import { visible } from "../../visible.js";
import { mcpStatusNotice, retryNotice } from "../notices.js";
import type { Output, Streams, TerminalTurn } from "../output.js";
import { elapsed } from "./activity.js";
import { MarkdownStream } from "./markdown.js";
import { thinkingView } from "./thinking.js";

/**
 * `--output-format text`: the answer on stdout, one line per tool call on stderr. Everything
 * from the model or a tool passes through `visible`: escape sequences, bidi controls and stray
 * carriage returns are shown, never obeyed. `finish` ends a partial line, so what is printed
 * after it (an error) starts on its own line. A retried round's streamed answer is ended and
 * said to be discarded.
 *
 * On a terminal (`terminal` given, made by `terminal-view.ts`) the same events are shown for a
 * person: the answer rendered from Markdown line by line, the indicator while the model or a tool
 * is awaited, each tool line with its duration and its output folded, and the status line after
 * the turn.
 */
export function textOutput(streams: Streams, terminal?: TerminalTurn): Output {
  if (terminal) return terminalOutput(streams, terminal);
  const { stdout, stderr } = streams;
  const calls = new Map<string, ToolCall>();
  let endsWithNewline = true;
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
      } else if (event.type === "retry") {
        if (!endsWithNewline) stdout.write("\n");
        endsWithNewline = true;
        retryNotice(stderr, event.notice, partial ? "; the partial answer above is discarded" : "");
        partial = false;
      } else if (event.type === "mcp_status") {
        mcpStatusNotice(stderr, event.status);
      }
    },
    finish(summary) {
      if (!endsWithNewline) stdout.write("\n");
      endStatus(stderr, summary.status);
    },
  };
}

function terminalOutput({ stderr }: Streams, view: TerminalTurn): Output {
  const { activity, styles: style } = view;
  const calls = new Map<string, ToolCall>();
  const started = new Map<string, number>();
  const running = new Set<string>();
  // An answer after tool lines starts after an empty line.
  let afterTools = false;
  const markdown = new MarkdownStream(style, (text) => {
    activity.stop();
    view.out(afterTools ? `\n${text}` : text);
    afterTools = false;
  });
  const awaitModel = () => activity.start("waiting for the model");
  const thinking = thinkingView(
    view.showThinking
      ? (text) => view.err(`${style.dim("  ✻ thinking")}\n${view.folded(text)}`)
      : undefined,
  );
  let partial = false;
  const message = (message: Message) => {
    if (message.role === "assistant") {
      markdown.end();
      activity.stop();
      for (const call of message.toolCalls) {
        calls.set(call.id, call);
        running.add(call.id);
      }
    } else if (message.role === "tool") {
      activity.stop();
      const call = calls.get(message.toolCallId);
      const start = started.get(message.toolCallId);
      const took = start === undefined ? "" : style.dim(` · ${elapsed(performance.now() - start)}`);
      const mark = message.isError ? style.failed("✗") : style.ok("✓");
      view.err(
        `${toolLine(call, message, mark)}${took}\n${view.folded(toolOutput(call, message))}`,
      );
      running.delete(message.toolCallId);
      afterTools = true;
      if (running.size === 0) awaitModel();
    }
  };
  awaitModel();
  return {
    event(event) {
      switch (event.type) {
        case "thinking":
          return thinking.add(event.text);
        case "text":
          thinking.end();
          markdown.push(event.text);
          partial = true;
          return;
        case "tool_start": {
          thinking.end();
          started.set(event.call.id, performance.now());
          const argument = shortArgument(event.call.input);
          activity.start(`${visible(event.call.name)}${argument ? ` ${argument}` : ""}`);
          return;
        }
        case "message":
          thinking.end();
          partial = false;
          return message(event.message);
        case "retry":
          // What was shown of the lost round's thinking is dropped with it.
          thinking.drop();
          markdown.end();
          activity.stop();
          retryNotice(
            stderr,
            event.notice,
            partial ? "; the partial answer above is discarded" : "",
          );
          partial = false;
          return awaitModel();
        case "compaction":
          return view.status.compacted(event.compaction);
        case "mcp_status":
          activity.stop();
          mcpStatusNotice(stderr, event.status);
          return awaitModel();
      }
    },
    finish(summary) {
      markdown.end();
      activity.stop();
      endStatus(stderr, summary.status);
      if (summary.status !== "error") view.err(`${style.dim(view.fit(view.status.line()))}\n`);
    },
  };
}

function endStatus(stderr: NodeJS.WritableStream, status: string): void {
  if (status === "aborted") stderr.write("interrupted\n");
  if (status === "max_turns") stderr.write("stopped: turn limit reached (--max-turns)\n");
}

type ToolMessage = Message & { role: "tool" };

/** `  ✓ read src/a.ts` or `  ✗ bash npm test: exit code 1`: tool, short argument, outcome. */
function toolLine(call: ToolCall | undefined, result: ToolMessage, mark?: string): string {
  const name = call?.name ?? "tool";
  const argument = call ? shortArgument(call.input) : "";
  const head = `  ${mark ?? (result.isError ? "✗" : "✓")} ${visible(name)}${argument ? ` ${argument}` : ""}`;
  if (!result.isError) return head;
  return `${head}: ${clip(visible(reasonLine(name, result)), 120)}`;
}

/** bash ends its result with its status; every other tool says why it failed first. */
function reasonLine(name: string, result: ToolMessage): string {
  const lines = result.content.trim().split("\n");
  return (name === "bash" ? lines.at(-1) : lines[0]) ?? "";
}

/** What the terminal shows of a result under its line: all of it but the reason the line shows. */
function toolOutput(call: ToolCall | undefined, result: ToolMessage): string {
  if (!result.isError) return result.content;
  const lines = result.content.trim().split("\n");
  return (call?.name === "bash" ? lines.slice(0, -1) : lines.slice(1)).join("\n");
}

function shortArgument(input: Record<string, unknown>): string {
  const value = ["command", "path", "pattern"]
    .map((key) => input[key])
    .find((v) => typeof v === "string");
  return typeof value === "string" ? clip(visible(value.replace(/[ \t]+/g, " ")), 60) : "";
}

const clip = (text: string, max: number) =>
  text.length > max ? `${headOf(text, max - 1)}…` : text;
