import { foldedLine, visible } from "../visible.js";

/** A one-line command up to this long stays on the question's line. */
const MAX_INLINE = 200;

/**
 * How a command is shown before the person answers for it. A short one-line command stays on
 * the question's line. Anything else is shown whole on lines of its own, each behind a gutter
 * (`  │ `), so no line of it can pass for the question, with a run of more than 16 blanks or of
 * empty lines shown as a count (`[20000 blanks]`), so nothing can be pushed out of sight, and
 * a summary (`3 lines, 812 characters`) beside the question.
 */
export function commandForQuestion(
  command: string,
): { inline: string } | { block: string[]; summary: string } {
  const shown = foldedLine;
  const lines = command.split("\n");
  const first = shown(lines[0] ?? "");
  if (
    lines.length === 1 &&
    first === visible(command, { exact: true }) &&
    first.length <= MAX_INLINE
  )
    return { inline: first };
  const block: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    let empty = 0;
    while (i + empty < lines.length && lines[i + empty] === "") empty++;
    if (empty > 1) {
      block.push(`  │ [${empty} empty lines]`);
      i += empty - 1;
    } else block.push(`  │ ${shown(lines[i] ?? "")}`);
  }
  const count = lines.length;
  return {
    block,
    summary: `${count} line${count === 1 ? "" : "s"}, ${[...command].length} characters`,
  };
}

/**
 * The columns `text` takes on a terminal: two for East Asian wide and full-width characters and
 * for emoji shown as pictures, none for combining marks and joiners, one for the rest. For a line
 * that must not wrap (the indicator, the status line, folded output).
 */
export function columnsOf(text: string): number {
  let columns = 0;
  for (const char of text) columns += charColumns(char);
  return columns;
}

/** `text` cut to at most `max` columns, ending in `…` when cut. */
export function fitColumns(text: string, max: number): string {
  if (columnsOf(text) <= max) return text;
  let kept = "";
  let used = 0;
  for (const char of text) {
    const width = charColumns(char);
    if (used + width > max - 1) break;
    kept += char;
    used += width;
  }
  return `${kept}…`;
}

function charColumns(char: string): number {
  const code = char.codePointAt(0) ?? 0;
  if (code >= 0x20 && code < 0x7f) return 1; // Printable ASCII: before the Unicode classes.
  if (
    COMBINING.test(char) ||
    (code >= 0x200b && code <= 0x200d) ||
    (code >= 0xfe00 && code <= 0xfe0f)
  )
    return 0;
  return WIDE.test(char) || isWideCode(code) ? 2 : 1;
}

const COMBINING = /^(?:\p{Mn}|\p{Me})$/u;
const WIDE = /^\p{Emoji_Presentation}$/u;

function isWideCode(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf && code !== 0x303f) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x20000 && code <= 0x3fffd)
  );
}
