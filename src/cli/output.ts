import type { ErrorKind } from "../error-kind.js";
import type { Styles } from "../render/style.js";
import type { TurnEvent } from "../runner/events.js";
import { encodeLine } from "../session/encode.js";
import type { Usage } from "../types.js";
import type { Activity } from "./terminal/activity.js";
import type { SessionStatus } from "./terminal/status-line.js";

export interface TurnSummary {
  status: "completed" | "aborted" | "max_turns" | "budget_exceeded" | "error";
  text: string;
  sessionId: string;
  usage: Usage;
  error?: string;
  errorKind?: ErrorKind;
  retryAfterMs?: number;
}

/**
 * Renders one turn's stream of events (`TurnEvent`) in one of the output formats (`formats.ts`):
 * `text` for people (`terminal/text-output.ts`), `json` (one summary line at the end) and
 * `stream-json` for programs (`stream-json.ts`). Each renders the events it shows and passes over
 * the rest; `finish` ends the turn.
 */
export interface Output {
  event(event: TurnEvent): void;
  finish(summary: TurnSummary): void;
}

export interface Streams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/**
 * One JSON value on its own line, written as its bytes, made without a JSON string of the whole
 * (`encodeLine`): the line of a long answer holds the answer once more, not three times.
 */
export const jsonLine = (stream: NodeJS.WritableStream, value: unknown) =>
  stream.write(encodeLine(value));

/**
 * What the text output of one turn uses on a terminal beyond plain text: the styles, the
 * activity indicator, writes that erase the indicator first, and the status line.
 */
export interface TerminalTurn {
  styles: Styles;
  activity: Activity;
  status: SessionStatus;
  /** Writes on stdout, or on stderr, after erasing the indicator. */
  out(text: string): void;
  err(text: string): void;
  /**
   * `text` folded to a few dimmed lines behind a gutter (`fold.ts`), as one string ending in a
   * newline: how a block that is context rather than the answer is shown (a tool's output, a
   * model's reasoning).
   */
  folded(text: string, options?: { tail?: number }): string;
  /** Unified diff lines (`diff.ts`) shown behind the gutter, coloured and bounded, as one string. */
  diff(lines: readonly string[]): string;
  /** `line` cut to the terminal's width, so it does not wrap. */
  fit(line: string): string;
  /** The model's reasoning is shown (not hidden with `--hide-thinking`). */
  showThinking: boolean;
}
