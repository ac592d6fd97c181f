/** A line diff, for what a terminal shows of an edit and what a rewind would overwrite. */

/** Above this many lines on both sides multiplied, no common lines are looked for. */
const maxCells = 4_000_000;

/**
 * The lines of `old` and `next` as diff lines, common lines kept (a longest common subsequence):
 * ` ` common, `-` only in old, `+` only in next. Sides too long to compare are all removed, then
 * all added.
 */
export function diffLines(old: readonly string[], next: readonly string[]): string[] {
  if (old.length * next.length > maxCells)
    return [...old.map((line) => `-${line}`), ...next.map((line) => `+${line}`)];
  const width = next.length + 1;
  // common[i * width + j]: the length of the longest common subsequence of old[i..] and next[j..].
  const common = new Uint32Array((old.length + 1) * width);
  for (let i = old.length - 1; i >= 0; i--) {
    for (let j = next.length - 1; j >= 0; j--) {
      common[i * width + j] =
        old[i] === next[j]
          ? (common[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(common[(i + 1) * width + j] ?? 0, common[i * width + j + 1] ?? 0);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < old.length || j < next.length) {
    if (i < old.length && j < next.length && old[i] === next[j]) {
      out.push(` ${old[i++]}`);
      j++;
    } else if (
      j >= next.length ||
      (i < old.length && (common[(i + 1) * width + j] ?? 0) >= (common[i * width + j + 1] ?? 0))
    )
      out.push(`-${old[i++]}`);
    else out.push(`+${next[j++]}`);
  }
  return out;
}
