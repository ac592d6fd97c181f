import { diffLines } from "../line-diff.js";
import { headOf } from "../text.js";
import { firstInvalidUtf8 } from "../tools/utf8.js";

/** The most lines of a short diff after its two headers; a count of the rest follows. */
const MOST_LINES = 12;

/** The most characters of a line shown (after its `-` or `+`); a longer one is cut, and says so. */
const MOST_CHARACTERS = 200;

const cut = (line: string) =>
  line.length <= MOST_CHARACTERS + 1
    ? line
    : `${headOf(line, MOST_CHARACTERS + 1)}… (cut: ${line.length - 1} characters in all)`;

/**
 * What a rewind would overwrite, as a short diff of the file as it was just before prompt `to`
 * (`null`: there was no file) and as it is now (`null`: removed; `undefined`: too big to read):
 * the lines between the longest common start and end, `-` then, `+` now, at most 12 of them,
 * each cut at 200 characters.
 * Raw text; whoever shows it makes it visible. A side that is not UTF-8 text is only sized.
 */
export function shortDiff(
  path: string,
  to: number,
  before: Buffer | null,
  now: Buffer | null | undefined,
): string[] {
  const headers = [
    `--- ${path} before prompt ${to}${before === null ? " (absent)" : ""}`,
    `+++ ${path} now${now === null ? " (absent)" : ""}`,
  ];
  const old = textLines(before);
  const next = textLines(now);
  if (old === undefined || next === undefined) {
    const size = (side: Buffer | null | undefined) => (side ? `${side.length} bytes` : "unknown");
    return [...headers, `(not text: ${size(before)} then, ${size(now)} now)`];
  }
  let start = 0;
  while (start < old.length && start < next.length && old[start] === next[start]) start++;
  let end = 0;
  while (
    end < old.length - start &&
    end < next.length - start &&
    old[old.length - 1 - end] === next[next.length - 1 - end]
  )
    end++;
  const lines = diffLines(old.slice(start, old.length - end), next.slice(start, next.length - end));
  const shown = lines.slice(0, MOST_LINES).map(cut);
  const rest = lines.length - shown.length;
  return [...headers, ...shown, ...(rest > 0 ? [`… ${rest} more lines`] : [])];
}

/** A side's lines (a last newline ends a line, it starts none); undefined when not text. */
function textLines(bytes: Buffer | null | undefined): string[] | undefined {
  if (bytes === null) return [];
  if (bytes === undefined || bytes.includes(0) || firstInvalidUtf8(bytes) !== -1) return undefined;
  const text = bytes.toString("utf8");
  return text === "" ? [] : text.replace(/\n$/, "").split("\n");
}
