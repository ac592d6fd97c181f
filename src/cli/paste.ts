/**
 * What a terminal sends, split before readline sees it: typed keys, and bracketed pastes.
 *
 * A terminal in bracketed-paste mode (`ESC[?2004h`) wraps what is pasted in `ESC[200~` …
 * `ESC[201~`, so a pasted newline is text, not Enter: a paste of many lines is one prompt. The
 * paste never goes through readline's per-key editing (a megabyte would cost seconds there); it
 * is gathered in pieces and joined once, bounded by `max` characters (the rest is counted, not
 * kept). Alt-Enter (`ESC` then Enter) is the key for a new line in the prompt.
 */

export type InputPiece =
  | { kind: "keys"; text: string }
  /** `cut`: characters past the bound, dropped. */
  | { kind: "paste"; text: string; cut: number }
  /** Alt-Enter: the line typed so far goes on, on a new line. */
  | { kind: "newline" };

export const pasteStart = "\x1b[200~";
export const pasteEnd = "\x1b[201~";
/** What the terminal is told to turn bracketed paste on and off with. */
export const bracketedPaste = { on: "\x1b[?2004h", off: "\x1b[?2004l" };
/** Two megabytes of text: a long log fits, a runaway paste does not fill the memory. */
export const maxPaste = 2 * 1024 * 1024;
const altEnter = new RegExp(`${String.fromCharCode(27)}[\r\n]`);

export class PasteReader {
  private pasting = false;
  private parts: string[] = [];
  private size = 0;
  private cut = 0;
  /** The start of a marker a read split: kept until the next read completes or refutes it. */
  private carry = "";

  constructor(private readonly max = maxPaste) {}

  feed(chunk: string): InputPiece[] {
    let text = this.carry + chunk;
    this.carry = "";
    const pieces: InputPiece[] = [];
    while (text !== "") {
      const marker = this.pasting ? pasteEnd : pasteStart;
      const at = text.indexOf(marker);
      const upTo = at === -1 ? text.length - splitMarker(text, marker, this.pasting ? 1 : 2) : at;
      const before = text.slice(0, upTo);
      if (this.pasting) this.gather(before);
      else keys(before, pieces);
      if (at === -1) {
        this.carry = text.slice(upTo);
        break;
      }
      text = text.slice(at + marker.length);
      if (this.pasting) pieces.push(this.finish());
      this.pasting = !this.pasting;
    }
    return pieces;
  }

  private gather(text: string): void {
    const room = Math.max(0, this.max - this.size);
    if (text.length > room) this.cut += text.length - room;
    const kept = text.length > room ? text.slice(0, room) : text;
    if (kept !== "") this.parts.push(kept);
    this.size += kept.length;
  }

  private finish(): InputPiece {
    const text = this.parts.join("").replace(/\r\n?/g, "\n");
    const piece: InputPiece = { kind: "paste", text, cut: this.cut };
    this.parts = [];
    this.size = 0;
    this.cut = 0;
    return piece;
  }
}

/** Typed keys, and each Alt-Enter among them. */
function keys(text: string, pieces: InputPiece[]): void {
  let rest = text;
  for (let match = altEnter.exec(rest); match; match = altEnter.exec(rest)) {
    if (match.index > 0) pieces.push({ kind: "keys", text: rest.slice(0, match.index) });
    pieces.push({ kind: "newline" });
    rest = rest.slice(match.index + match[0].length);
  }
  if (rest !== "") pieces.push({ kind: "keys", text: rest });
}

/**
 * How many characters at the end of `text` may be the start of `marker`, at least `min`: typed,
 * a lone ESC is the Escape key; in a paste, it may begin the end marker.
 */
function splitMarker(text: string, marker: string, min: number): number {
  for (let length = Math.min(marker.length - 1, text.length); length >= min; length--) {
    if (marker.startsWith(text.slice(-length))) return length;
  }
  return 0;
}

/** The one line shown for a paste instead of its text. */
export function pasteNotice(text: string, cut: number): string {
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  const count = (n: number) => n.toLocaleString("en-US");
  const size = `${count(lines)} ${lines === 1 ? "line" : "lines"}, ${count(text.length)} characters`;
  return `[pasted ${size}${cut > 0 ? `, ${count(cut)} more cut` : ""}: Enter sends]`;
}
