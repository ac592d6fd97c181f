import { MarkdownStream } from "../render/markdown.js";
import type { Styles } from "../render/style.js";
import { escapeHtml } from "./markup.js";

/**
 * An answer's Markdown as HTML, rendered by the terminal's renderer (`MarkdownStream`), so the page
 * shows what the terminal shows: headings, lists, code blocks framed with their language, quotes,
 * rules, inline code, emphasis, and links as their words with the address beside them (never a
 * link to follow). The result goes inside an element that keeps line breaks (`.text`).
 *
 * The renderer passes every piece of the text through `visible`, which shows a control character
 * as a visible mark: none is left in what it writes but the styles' own. So the styles here write
 * a control character and a letter where a tag goes; the whole output is escaped, and only then
 * are those marks turned into tags. No text of the answer can become markup.
 */
export function markdownHtml(text: string): string {
  let out = "";
  const stream = new MarkdownStream(styles, (piece) => {
    out += piece;
  });
  stream.push(text);
  stream.end();
  return escapeHtml(out.replace(/\n$/, "")).replace(MARK, (_, side: string, letter: string) => {
    const [name, attributes] = TAGS[letter] ?? ["span", ""];
    return side === OPEN ? `<${name}${attributes}>` : `</${name}>`;
  });
}

const OPEN = "\x01";
const CLOSE = "\x02";
/** A style's mark: where a tag opens or closes, and which. */
const MARK = new RegExp(`([${OPEN}${CLOSE}])([a-z])`, "g");

/** The tag of each style's letter, with its attributes. */
const TAGS: Record<string, [string, string]> = {
  b: ["strong", ""],
  d: ["span", ' class="md-dim"'],
  i: ["em", ""],
  u: ["u", ""],
  c: ["code", ""],
};

const wrap = (letter: string) => (text: string) =>
  text === "" ? "" : `${OPEN}${letter}${text}${CLOSE}${letter}`;

const styles: Styles = {
  on: true,
  bold: wrap("b"),
  dim: wrap("d"),
  italic: wrap("i"),
  underline: wrap("u"),
  code: wrap("c"),
  ok: wrap("d"),
  failed: wrap("d"),
};
