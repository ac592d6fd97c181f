import { monotonicMs } from "../../clock.js";
import { columnsOf, fitColumns } from "../../render/columns.js";
import type { Styles } from "../../render/style.js";

/** Time, and a repeating timer, for the indicator; tests give their own. */
export interface Ticker {
  now(): number;
  /** Calls `tick` every `ms` until the returned function is called. */
  every(ms: number, tick: () => void): () => void;
}

const realTicker: Ticker = {
  now: monotonicMs,
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * The one line that says something is going on while nothing else moves: waiting for the
 * model's first token, or a tool running, with the time since it began (`⠙ bash npm test ·
 * 3.4s`). Only the terminal view makes one. It draws on the last line of the screen with a
 * carriage return and erases itself with blanks (no cursor escapes, so it works on `TERM=dumb`),
 * and `clear` is called before anything else is written, so it never ends up inside other text.
 * The label is text the caller already made safe (`visible`).
 */
export class Activity {
  private label: string | undefined;
  private since = 0;
  private frame = 0;
  private shown = 0;
  private cancel: (() => void) | undefined;
  private muted = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly style: Styles,
    private readonly columns: () => number,
    private readonly ticker: Ticker = realTicker,
  ) {}

  /** Shows `label` with the time from now, replacing what was shown. */
  start(label: string): void {
    if (this.muted) return;
    this.label = label;
    this.since = this.ticker.now();
    this.cancel ??= this.ticker.every(100, () => this.draw());
    this.draw();
  }

  /** Erases the line and stops until the next `start`. */
  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
    this.label = undefined;
    this.clear();
  }

  /**
   * Stops, and `start` draws nothing until `unmute`: the person typed while it was shown (the
   * terminal echoes what they type on its line), so it stays away for the rest of the turn.
   */
  mute(): void {
    this.stop();
    this.muted = true;
  }

  unmute(): void {
    this.muted = false;
  }

  /** Erases the line; the next tick draws it again below what was written meanwhile. */
  clear(): void {
    if (this.shown === 0) return;
    this.write(`\r${" ".repeat(this.shown)}\r`);
    this.shown = 0;
  }

  get running(): boolean {
    return this.label !== undefined;
  }

  private draw(): void {
    if (this.label === undefined) return;
    const glyph = frames[this.frame++ % frames.length] ?? "";
    const text = `${glyph} ${this.label} · ${elapsed(this.ticker.now() - this.since)}`;
    const line = fitColumns(text, Math.max(10, this.columns() - 1));
    const width = columnsOf(line);
    this.write(`\r${this.style.dim(line)}${" ".repeat(Math.max(0, this.shown - width))}`);
    this.shown = Math.max(width, this.shown);
  }
}

/** `0.4s`, `12.0s`, `2m 05s`. */
export function elapsed(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const whole = Math.floor(seconds);
  return `${Math.floor(whole / 60)}m ${String(whole % 60).padStart(2, "0")}s`;
}
