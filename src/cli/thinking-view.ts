import { headOf } from "../text.js";
import { visible } from "./terminal.js";

/** Lines of a round's reasoning shown before the rest is folded into a count. */
export const shownThinkingLines = 4;
/** Characters of one shown line; the rest of the line is cut with `…`. */
const lineWidth = 160;

const dim = (text: string) => `\x1b[2m${text}\x1b[22m`;

/**
 * How the model's reasoning shows in the text output: on stderr, dimmed, folded to its first
 * `shownThinkingLines` lines and a count of the rest, once the reasoning of the round is over
 * (the answer or a call begins). Every line passes through `visible`. When `show` is false
 * (stderr is no terminal, or the user hid it) nothing is written: a pipe gets the answer alone.
 */
export function thinkingView(stderr: NodeJS.WritableStream, show: boolean) {
  let pending = "";
  return {
    add(text: string): void {
      if (show) pending += text;
    },
    /** Forgets the thinking not yet shown: its round was lost and runs again. */
    drop(): void {
      pending = "";
    },
    end(): void {
      const lines = pending.trim() === "" ? [] : pending.trim().split("\n");
      pending = "";
      if (lines.length === 0) return;
      const shown = lines.slice(0, shownThinkingLines).map((line) => `  ${clip(line)}`);
      const more = lines.length - shown.length;
      if (more > 0) shown.push(`  [… ${more} more line${more === 1 ? "" : "s"} of thinking]`);
      stderr.write(`${dim(["✻ thinking", ...shown].join("\n"))}\n`);
    },
  };
}

function clip(line: string): string {
  const shown = visible(line.replace(/\s+$/, ""));
  return shown.length > lineWidth ? `${headOf(shown, lineWidth - 1)}…` : shown;
}
