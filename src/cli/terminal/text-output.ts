import {
  bashSkippedNotice,
  imagesHeldBackNotice,
  mcpStatusNotice,
  retryNotice,
  unkeptNotice,
} from "../../app/notices.js";
import { assertNever } from "../../assert-never.js";
import { MarkdownStream } from "../../render/markdown.js";
import type { RetryNotice } from "../../runner/events.js";
import type { Message, ToolCall } from "../../types.js";
import { visible } from "../../visible.js";
import type { Output, Streams, TerminalTurn } from "../output.js";
import { thinkingView } from "./thinking.js";
import { planLines, shortArgument, ToolLines, toolLine } from "./tool-lines.js";

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
      } else if (event.type === "images_held_back") {
        imagesHeldBackNotice(stderr, event.count);
      } else if (event.type === "file_before") {
        unkeptNotice(stderr, event.before);
      } else if (event.type === "bash_change") {
        bashSkippedNotice(stderr, event.change);
      } else if (event.type === "plan") {
        stderr.write(planLines(event.items));
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
  const tools = new ToolLines(view);
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
  // Text of the round still streaming: lost if the round is.
  let partial = false;
  const message = (message: Message) => {
    if (message.role === "assistant") {
      markdown.end();
      activity.stop();
      tools.declared(message.toolCalls);
    } else if (message.role === "tool") {
      activity.stop();
      afterTools = true;
      if (tools.result(message)) awaitModel();
    }
  };
  const retried = (notice: RetryNotice) => {
    // What was shown of the lost round's thinking is dropped with it.
    thinking.drop();
    markdown.end();
    activity.stop();
    retryNotice(stderr, notice, partial ? "; the partial answer above is discarded" : "");
    partial = false;
    awaitModel();
  };
  awaitModel();
  return {
    event(event) {
      // The answer, a call or the round's end ends a block of thinking; a retry drops it instead.
      if (event.type === "text" || event.type === "tool_start" || event.type === "message")
        thinking.end();
      switch (event.type) {
        case "thinking":
          return thinking.add(event.text);
        case "text":
          markdown.push(event.text);
          partial = true;
          return;
        case "tool_start": {
          tools.start(event.call);
          const argument = shortArgument(event.call.input);
          activity.start(`${visible(event.call.name)}${argument ? ` ${argument}` : ""}`);
          return;
        }
        case "message":
          partial = false;
          return message(event.message);
        case "retry":
          return retried(event.notice);
        case "compaction":
          return view.status.compacted(event.compaction);
        case "mcp_status":
          activity.stop();
          mcpStatusNotice(stderr, event.status);
          return awaitModel();
        case "file_before":
          return unkeptNotice(stderr, event.before);
        case "bash_change":
          return bashSkippedNotice(stderr, event.change);
        case "plan":
          return view.err(planLines(event.items));
        case "images_held_back":
          activity.stop();
          imagesHeldBackNotice(stderr, event.count);
          return awaitModel();
        case "session":
        case "approval":
        case "usage":
        case "turn_end":
        case "skills":
        case "hook":
        case "images_refused":
        case "responses_switch":
        case "file_change":
        case "file_restore":
        case "rewind":
        case "rewind_start":
        case "rewind_end":
          return;
        default:
          return assertNever(event);
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
