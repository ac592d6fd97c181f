import { Writable } from "node:stream";
import { fitColumns } from "../../render/columns.js";
import { diffView } from "../../render/diff.js";
import { colourWanted, type Styles, styles } from "../../render/style.js";
import type { OutputFormat } from "../args.js";
import type { Output } from "../output.js";
import { Activity } from "./activity.js";
import { foldLines } from "./fold.js";
import type { SessionStatus } from "./status-line.js";
import { textOutput } from "./text-output.js";

export interface TerminalView {
  /** stderr for every other writer (notices, compaction lines, errors): erases the indicator first. */
  stderr: NodeJS.WritableStream;
  /** The indicator, which the bash question stops before it asks. */
  activity: Activity;
  /** The output of a turn: `text` with the terminal's rendering; the indicator stops when `signal` aborts. */
  turn(signal: AbortSignal, status: SessionStatus): Output;
  /** The view's styles and its cut of a line to the width, for the banner and the recap. */
  styles: Styles;
  fit(line: string): string;
}

/**
 * The terminal view, when `--output-format text` goes to a terminal: stdout and stderr both one.
 * Then answers are rendered from Markdown as they stream, an indicator shows what is awaited,
 * tool lines carry their duration and a folded view of their output, and a status line ends each
 * turn; colour follows `colourWanted`. Anything else (a pipe, a file, `json`, `stream-json`) gets
 * none of it: undefined, and the output is plain text.
 */
export function terminalView(
  format: OutputFormat,
  io: Pick<NodeJS.Process, "stdin" | "stdout" | "stderr">,
  env: NodeJS.ProcessEnv,
  showThinking = true,
): TerminalView | undefined {
  // `io.stdin` is touched only past this check: Node makes the stream when it is first asked for.
  const { stdout, stderr } = io;
  if (format !== "text" || !stdout.isTTY || !stderr.isTTY) return undefined;
  const stdin = io.stdin;
  const style = styles(colourWanted(env, true));
  const columns = () => stderr.columns || 80;
  const fit = (line: string) => fitColumns(line, columns() - 1);
  const activity = new Activity((text) => stderr.write(text), style, columns);
  // Typing ahead during a turn (readline echoes it; see `TerminalInput`) mutes the indicator.
  stdin.on("keypress", () => {
    if (activity.running) activity.mute();
  });
  // A write that leaves its line open (a question) would be overdrawn: the indicator stops.
  const before = (text: string) => {
    activity.clear();
    if (!text.endsWith("\n")) activity.stop();
  };
  // Terminal writes are synchronous, so calling back at once keeps every write in order.
  const guarded = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      before(chunk.toString());
      stderr.write(chunk);
      callback();
    },
  });
  return {
    stderr: guarded,
    activity,
    styles: style,
    fit,
    turn(signal, status) {
      status.beginTurn();
      activity.unmute();
      signal.addEventListener("abort", () => activity.stop(), { once: true });
      return textOutput(
        { stdout, stderr: guarded },
        {
          styles: style,
          activity,
          status,
          out(text) {
            before(text);
            stdout.write(text);
          },
          err(text) {
            before(text);
            stderr.write(text);
          },
          showThinking,
          fit,
          folded: (text, options) =>
            foldLines(text, columns(), options)
              .map((line) => `${style.dim(line)}\n`)
              .join(""),
          diff: (lines) =>
            diffView(lines, style, columns())
              .map((line) => `${line}\n`)
              .join(""),
        },
      );
    },
  };
}
