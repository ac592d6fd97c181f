import { diffLines } from "../line-diff.js";
import type { ToolCall } from "../types.js";
import { visible } from "../visible.js";
import { fitColumns } from "./columns.js";
import type { Styles } from "./style.js";

/**
 * What an `edit` or a `write` changed, as unified diff lines (`--- a`, `+++ a`, `@@ … @@`, then
 * ` `, `-` and `+` lines), read from the call's input and its result; raw text, shown by
 * `diffView`. An edit is the diff of the replaced text at the line its result names; a created
 * file is every line added. A replaced file's old content is not at hand: its new content is
 * shown, all added, under a header that says so. Undefined for any other call, or an input or
 * result of another shape.
 */
export function changeDiff(call: ToolCall, result: string): string[] | undefined {
  const { path } = call.input;
  if (typeof path !== "string") return undefined;
  if (call.name === "edit") return editDiff(path, call.input, result);
  if (call.name !== "write" || typeof call.input.content !== "string") return undefined;
  const lines = splitLines(call.input.content);
  const added = lines.map((line) => `+${line}`);
  if (result.startsWith("created "))
    return ["--- /dev/null", `+++ ${path}`, `@@ -0,0 +${range(1, lines.length)} @@`, ...added];
  if (result.startsWith("replaced "))
    return [`+++ ${path} (the whole file, replaced; its old content is not shown)`, ...added];
  return undefined;
}

function editDiff(path: string, input: Record<string, unknown>, result: string) {
  const { oldText, newText } = input;
  const at = /^edited .*: replaced (\d+) occurrences? at line (\d+)$/.exec(result);
  if (typeof oldText !== "string" || typeof newText !== "string" || !at) return undefined;
  const count = Number(at[1]);
  const line = Number(at[2]);
  const old = splitLines(oldText);
  const next = splitLines(newText);
  const more = count > 1 ? ` (the first of ${count} occurrences)` : "";
  return [
    `--- ${path}`,
    `+++ ${path}`,
    `@@ -${range(line, old.length)} +${range(line, next.length)} @@${more}`,
    ...diffLines(old, next),
  ];
}

/** A hunk's range: `7` for one line, `7,3` for three, `6,0` for none (the line before). */
const range = (start: number, count: number) =>
  count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`;

/** A text's lines; a final newline ends the last line and starts none. */
const splitLines = (text: string) => (text === "" ? [] : text.replace(/\n$/, "").split("\n"));

/** The most diff lines shown under a tool line; the count of the rest follows them. */
const shownDiffLines = 40;

/**
 * Diff lines for the terminal: each behind the gutter, through `visible` and cut to the width,
 * then coloured (removed red, added green, hunk headers cyan, file headers dim); at most 40.
 */
export function diffView(lines: readonly string[], style: Styles, columns: number): string[] {
  const gutter = "    │ ";
  const room = Math.max(20, columns - gutter.length - 1);
  const paint = (line: string) => {
    if (line.startsWith("---") || line.startsWith("+++")) return style.dim;
    if (line.startsWith("@@")) return style.code;
    if (line.startsWith("-")) return style.failed;
    if (line.startsWith("+")) return style.ok;
    return (text: string) => text;
  };
  const shown = lines.slice(0, shownDiffLines).map((line) => {
    const cut = fitColumns(visible(line).replace(/\t/g, "  "), room);
    return `${gutter}${paint(line)(cut)}`;
  });
  const rest = lines.length - shown.length;
  if (rest > 0) shown.push(`${gutter}… ${rest} more lines of the diff`);
  return shown;
}
