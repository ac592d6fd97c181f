import { visible } from "../visible.js";
import type { Styles } from "./style.js";

/**
 * Markdown rendered for a terminal as it streams, one completed line at a time: a line is
 * written once its newline has come, so nothing written is ever taken back. It knows what model
 * answers use: headings, bullet and numbered lists, fenced code blocks (framed, with their
 * language), block quotes, rules, and inline code, emphasis and links. Anything else is shown
 * as written.
 *
 * Every piece of the text passes through `visible` before a style is put around it, so the
 * only escape sequences written are the styles' own: text cannot style itself or move the
 * cursor. Without colour (`Styles.on` false) the inline marks (`**`, `` ` ``, `[…](…)`) and the
 * `#` of headings stay, as they carry the meaning; the frames and bullets are drawn either way.
 */
export class MarkdownStream {
  private pending: string[] = [];
  /** The fence of the code block the text is in (e.g. "```"), if it is in one. */
  private fence: string | undefined;

  constructor(
    private readonly style: Styles,
    private readonly write: (text: string) => void,
  ) {}

  /** A piece of streamed text: each line it completes is rendered and written. */
  push(text: string): void {
    let from = 0;
    for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", from)) {
      this.pending.push(text.slice(from, at));
      const line = this.pending.join("");
      this.pending = [];
      this.write(`${this.render(line)}\n`);
      from = at + 1;
    }
    if (from < text.length) this.pending.push(text.slice(from));
  }

  /** True when part of a line waits for its newline. */
  get waiting(): boolean {
    return this.pending.length > 0;
  }

  /** The text ended: its last line is written even without a newline, and an open code block is closed. */
  end(): void {
    if (this.pending.length > 0) this.push("\n");
    if (this.fence !== undefined) {
      this.fence = undefined;
      this.write(`${this.style.dim("└─")}\n`);
    }
  }

  private render(raw: string): string {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const { dim, bold, underline } = this.style;
    if (this.fence !== undefined) {
      if (closesFence(line, this.fence)) {
        this.fence = undefined;
        return dim("└─");
      }
      return `${dim("│")} ${this.style.code(visible(line, { multiline: true }))}`;
    }
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(line);
    if (open) {
      this.fence = open[1] ?? "```";
      const language = open[2] ?? "";
      return dim(`┌─${language ? ` ${visible(language)}` : ""}`);
    }
    const heading = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (heading) {
      const [, marks = "", text = ""] = heading;
      if (!this.style.on) return `${marks} ${visible(text)}`;
      const shown = bold(this.inline(text));
      return marks.length === 1 ? underline(shown) : shown;
    }
    if (/^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/.test(line)) return dim("─".repeat(40));
    const quote = /^ {0,3}>[ \t]?(.*)$/.exec(line);
    if (quote) return `${dim("│")} ${this.style.italic(this.inline(quote[1] ?? ""))}`;
    const bullet = /^([ \t]*)[-*+][ \t]+(.*)$/.exec(line);
    if (bullet)
      return `${visible(bullet[1] ?? "", { multiline: true })}• ${this.inline(bullet[2] ?? "")}`;
    return this.inline(line);
  }

  /** Inline code, strong and emphasis, links; with no colour the text as written. */
  private inline(text: string): string {
    const safe = (part: string) => visible(part, { multiline: true });
    if (!this.style.on) return safe(text);
    const { bold, italic, underline, code, dim } = this.style;
    let out = "";
    let from = 0;
    for (const match of text.matchAll(INLINE)) {
      out += safe(text.slice(from, match.index));
      from = match.index + match[0].length;
      const [, , codeText, strong, strongU, em, emU, label, url, auto] = match;
      if (codeText !== undefined) out += code(safe(codeText));
      else if (strong !== undefined || strongU !== undefined)
        out += bold(this.inline(strong ?? strongU ?? ""));
      else if (em !== undefined || emU !== undefined) out += italic(this.inline(em ?? emU ?? ""));
      else if (label !== undefined && url !== undefined)
        out += `${underline(this.inline(label))} ${dim(`(${safe(url)})`)}`;
      else if (auto !== undefined) out += underline(safe(auto));
    }
    return out + safe(text.slice(from));
  }
}

/**
 * `code`, ``code``, **strong**, __strong__, *emphasis*, _emphasis_ (not inside a word), [label](url)
 * and <https://…>. Code comes first, so marks inside it stay as written.
 */
const INLINE =
  /(`+)(.+?)\1(?!`)|\*\*(?=\S)(.+?)(?<=\S)\*\*|(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)|\*(?=[^\s*])(.+?)(?<=[^\s*])\*|(?<!\w)_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)|\[([^\]]+)\]\(([^)\s]+)\)|<(https?:\/\/[^>\s]+)>/g;

function closesFence(line: string, fence: string): boolean {
  const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line)?.[1];
  return close !== undefined && close[0] === fence[0] && close.length >= fence.length;
}
