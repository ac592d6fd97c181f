import { headOf } from "../text.js";
import { pause } from "./define.js";
import { limits } from "./limits.js";
import { wholeCharacters } from "./utf8.js";

/** Lines compared between two checks of the abort signal. */
const BATCH = 2048;

/**
 * For an `edit` whose `oldText` is not found: points at the line most like the first non-blank
 * line of `oldText` (by character pairs, case counting a little), when at least half its pairs
 * are shared, so the model can correct itself. Bounded whatever the file: it looks at the
 * first `limits.editHintBytes` bytes only and at most `limits.editHintLineChars` characters of
 * each line, and yields to the event loop (and stops on abort) every few thousand lines.
 */
export async function closestLineHint(
  bytes: Buffer,
  oldText: string,
  signal?: AbortSignal,
): Promise<string> {
  const first = oldText.split("\n").find((line) => line.trim() !== "");
  if (first === undefined) return "";
  const wantedText = headOf(first.trim(), limits.editHintLineChars);
  const wanted = pairCounts(wantedText);
  const wantedFolded = pairCounts(wantedText.toLowerCase());
  const head = bytes.subarray(0, limits.editHintBytes);
  const text = head
    .subarray(0, wholeCharacters(head))
    .toString("utf8")
    .replace(/^\uFEFF/, "");
  let best = { score: 0, line: 0, text: "" };
  let lineNo = 0;
  for (let start = 0; start <= text.length; lineNo++) {
    const end = text.indexOf("\n", start);
    const raw = text.slice(start, end === -1 ? text.length : end);
    start = end === -1 ? text.length + 1 : end + 1;
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const trimmed = headOf(line.trim(), limits.editHintLineChars);
    // Case counts, but a line that differs only in case is still close (`beta`, `BETA`).
    const score = Math.max(
      similarity(wanted, pairCounts(trimmed)),
      0.99 * similarity(wantedFolded, pairCounts(trimmed.toLowerCase())),
    );
    if (score > best.score) best = { score, line: lineNo + 1, text: line };
    if (lineNo % BATCH === BATCH - 1) {
      await pause(signal);
    }
  }
  if (best.score < 0.5) return "";
  return `; the closest line is ${best.line}: ${JSON.stringify(headOf(best.text, 200))}`;
}

/** The character pairs of a string, counted; `size` is the number of pairs. */
interface Pairs {
  text: string;
  counts: Map<number, number>;
  size: number;
}

function pairCounts(text: string): Pairs {
  const counts = new Map<number, number>();
  for (let i = 0; i < text.length - 1; i++) {
    const pair = text.charCodeAt(i) * 0x10000 + text.charCodeAt(i + 1);
    counts.set(pair, (counts.get(pair) ?? 0) + 1);
  }
  return { text, counts, size: Math.max(0, text.length - 1) };
}

/** Dice coefficient over character pairs: 1 for equal strings, 0 for nothing in common. */
function similarity(a: Pairs, b: Pairs): number {
  if (a.text === b.text) return 1;
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const [pair, count] of b.counts) shared += Math.min(count, a.counts.get(pair) ?? 0);
  return (2 * shared) / (a.size + b.size);
}
