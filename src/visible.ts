/**
 * The one function that makes text safe to show on a terminal. What the model writes, a tool
 * returns or a command contains can carry escape sequences (clear a line, move the cursor, set
 * the window title), a carriage return that overwrites what came before, or bidi controls that
 * make text read differently from what it is. `visible` shows each of them as a visible mark, so
 * what the person reads is what the text holds:
 * - C0 controls, ESC and DEL as their Unicode control pictures (`␛`, `␍`, `␊`, `␡`);
 * - C1 controls, bidi controls, other invisible format characters, line or paragraph
 *   separators, spaces other than the plain one and characters that draw nothing (the Hangul
 *   fillers, the blank Braille pattern) as `<U+XXXX>`.
 * Newlines and tabs are kept only in multi-line text (streamed answers); there CRLF is a newline.
 * The zero-width joiner and variation selectors are kept (they join and style emoji), except with
 * `exact`, for what a person approves (the approval question): there they can split a word
 * invisibly, so they are shown as `<U+XXXX>` too.
 */
export function visible(
  text: string,
  options: { multiline?: boolean; exact?: boolean } = {},
): string {
  const multiline = options.multiline === true;
  // Printable ASCII (with newlines and tabs where they are kept) holds nothing to show: most text
  // returns here, before the patterns with Unicode classes are compiled (at their first use).
  if ((multiline ? PLAIN_LINES : PLAIN).test(text)) return text;
  return text.replace(options.exact === true ? exactPattern() : UNSAFE, (char) => {
    if (multiline && (char === "\n" || char === "\t")) return char;
    if (char === "\r\n") return multiline ? "\n" : "␍␊";
    if (char === ZERO_WIDTH_JOINER && options.exact !== true) return char;
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20) return String.fromCodePoint(0x2400 + code);
    if (code === 0x7f) return "␡";
    return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
  });
}

const UNSAFE =
  /\r\n|[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5\u180e]|\u034f/gu;
/** `UNSAFE` and the variation selectors, made at the first text that needs it. */
let exact: RegExp | undefined;
function exactPattern(): RegExp {
  exact ??= new RegExp(`${UNSAFE.source}|[\\ufe00-\\ufe0f\\u{e0100}-\\u{e01ef}]`, "gu");
  return exact;
}
const PLAIN = /^[\x20-\x7e]*$/;
const PLAIN_LINES = /^[\t\n\x20-\x7e]*$/;
const ZERO_WIDTH_JOINER = "\u200d";

/** More blanks than this in a row are shown as a count. */
const MAX_BLANKS = 16;

/**
 * One line as a person approves it: every invisible character shown (`visible`, exact), and a
 * run of more than 16 blanks as a count (`[3000 blanks]`), so nothing is pushed out of sight.
 */
export function foldedLine(line: string): string {
  return line
    .split(BLANKS)
    .map((part, i) => (i % 2 === 1 ? `[${part.length} blanks]` : visible(part, { exact: true })))
    .join("");
}

const BLANKS = new RegExp(`([ \\t]{${MAX_BLANKS + 1},})`);
