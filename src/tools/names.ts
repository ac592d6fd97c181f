import { isUtf8 } from "node:buffer";

/**
 * How a file name's bytes are shown to the model, and back. A name on disk is bytes: it need
 * not be UTF-8 and may hold a newline. Shown, it is UTF-8 text where each byte that is not part
 * of valid UTF-8 becomes `\xNN`, a control character becomes `\n`, `\t`, `\r` or `\xNN`, and a
 * backslash becomes `\\`. So one name is one line, and every shown name maps back to exactly
 * the bytes it came from (`shownBytes`): the model can pass a name it saw to any tool.
 */
export function showName(bytes: Buffer): string {
  const text = bytes.toString("utf8");
  if (!NEEDS_ESCAPE.test(text)) return text;
  let out = "";
  for (let at = 0; at < bytes.length; ) {
    const length = sequenceLength(bytes, at);
    if (length === 0) {
      out += hexEscape(bytes[at] ?? 0);
      at++;
      continue;
    }
    const char = bytes.toString("utf8", at, at + length);
    out += length === 1 ? escapeAscii(char) : char;
    at += length;
  }
  return out;
}

/** `showName` of a path held as a string (which is always valid UTF-8 on disk). */
export const showText = (text: string): string =>
  NEEDS_ESCAPE.test(text) ? showName(Buffer.from(text)) : text;

/**
 * The bytes a shown name stands for: the inverse of `showName`. A backslash that starts none of
 * the escapes `showName` writes stands for itself.
 */
export function shownBytes(shown: string): Buffer {
  if (!shown.includes("\\")) return Buffer.from(shown);
  const parts: Buffer[] = [];
  let text = "";
  for (let at = 0; at < shown.length; at++) {
    const char = shown[at];
    const next = shown[at + 1];
    if (char !== "\\" || next === undefined) {
      text += char;
      continue;
    }
    const simple = UNESCAPES[next];
    if (simple !== undefined) {
      text += simple;
      at++;
    } else if (next === "x" && /^[0-9a-fA-F]{2}$/.test(shown.slice(at + 2, at + 4))) {
      parts.push(
        Buffer.from(text),
        Buffer.from([Number.parseInt(shown.slice(at + 2, at + 4), 16)]),
      );
      text = "";
      at += 3;
    } else text += char;
  }
  parts.push(Buffer.from(text));
  return Buffer.concat(parts);
}

/** A shown path decoded for the file system: a string when its bytes are UTF-8, else bytes. */
export function decodeShown(shown: string): string | Buffer {
  if (!shown.includes("\\")) return shown;
  const bytes = shownBytes(shown);
  return isUtf8(bytes) ? bytes.toString("utf8") : bytes;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const NEEDS_ESCAPE = /[\\\u0000-\u001f\u007f\ufffd]/;
const UNESCAPES: Record<string, string> = { "\\": "\\", n: "\n", t: "\t", r: "\r" };
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r" };

const hexEscape = (byte: number) => `\\x${byte.toString(16).toUpperCase().padStart(2, "0")}`;

function escapeAscii(char: string): string {
  const code = char.charCodeAt(0);
  return ESCAPES[char] ?? (code < 0x20 || code === 0x7f ? hexEscape(code) : char);
}

/** Length of the valid UTF-8 sequence at `at`, or 0 when the byte there starts none. */
function sequenceLength(bytes: Buffer, at: number): number {
  const lead = bytes[at] ?? 0;
  const cont = (offset: number, low = 0x80, high = 0xbf) => {
    const byte = bytes[at + offset];
    return byte !== undefined && byte >= low && byte <= high;
  };
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return cont(1) ? 2 : 0;
  if (lead >= 0xe0 && lead <= 0xef) {
    const [low, high] = lead === 0xe0 ? [0xa0, 0xbf] : lead === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, low, high) && cont(2) ? 3 : 0;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    const [low, high] = lead === 0xf0 ? [0x90, 0xbf] : lead === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, low, high) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}
