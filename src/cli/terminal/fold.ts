import { visible } from "../../visible.js";
import { fitColumns } from "./columns.js";

/** Lines shown of a long block; one more line would say as much as the count of the rest. */
const shownLines = 4;

/**
 * A long text folded to a few lines for the terminal, each behind a gutter (`    │ `) and cut to
 * the width, every line through `visible`: the first 4 lines and `… 37 more lines`, or all of it
 * when that is 5 lines or fewer. For the output of a tool under its line (the model still gets
 * the whole result), and for any other block shown dimmed and folded. Returns no line for an
 * empty text.
 */
export function foldLines(text: string, columns: number): string[] {
  const lines = text.replace(/\n+$/, "").split("\n");
  if (lines.length === 1 && lines[0] === "") return [];
  const gutter = "    │ ";
  const room = Math.max(20, columns - gutter.length - 1);
  const cut = (line: string) => {
    const shown = visible(line.replace(/\r$/, ""), { multiline: true }).replace(/\t/g, "  ");
    return fitColumns(shown, room);
  };
  const kept = lines.length <= shownLines + 1 ? lines : lines.slice(0, shownLines);
  const folded = kept.map((line) => `${gutter}${cut(line)}`);
  const rest = lines.length - kept.length;
  if (rest > 0) folded.push(`${gutter}… ${rest} more lines`);
  return folded;
}
