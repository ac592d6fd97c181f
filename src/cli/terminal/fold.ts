import { fitColumns } from "../../render/columns.js";
import { visible } from "../../visible.js";

/** Lines shown of a long block; one more line would say as much as the count of the rest. */
const shownLines = 4;

/**
 * A long text folded to a few lines for the terminal, each behind a gutter (`    │ `) and cut to
 * the width, every line through `visible`: the first 4 lines and `… 37 more lines`, or all of it
 * when the count would hide one line only. With `tail`, the last `tail` lines follow the count
 * (a command's output ends with what matters: `1 passed, 0 failed`, the exit code). For the
 * output of a tool under its line (the model still gets the whole result), and for any other
 * block shown dimmed and folded. Returns no line for an empty text.
 */
export function foldLines(
  text: string,
  columns: number,
  options: { tail?: number } = {},
): string[] {
  const lines = text.replace(/\n+$/, "").split("\n");
  if (lines.length === 1 && lines[0] === "") return [];
  const gutter = "    │ ";
  const room = Math.max(20, columns - gutter.length - 1);
  const cut = (line: string) => {
    const shown = visible(line.replace(/\r$/, ""), { multiline: true }).replace(/\t/g, "  ");
    return `${gutter}${fitColumns(shown, room)}`;
  };
  const tail = options.tail ?? 0;
  if (lines.length <= shownLines + tail + 1) return lines.map(cut);
  const rest = lines.length - shownLines - tail;
  return [
    ...lines.slice(0, shownLines).map(cut),
    `${gutter}… ${rest} more lines`,
    ...lines.slice(lines.length - tail).map(cut),
  ];
}
