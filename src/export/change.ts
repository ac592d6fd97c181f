import { diffLines } from "../line-diff.js";
import { changeDiff } from "../render/diff.js";
import type { CallBlock } from "./blocks.js";
import type { Show } from "./shown.js";

/**
 * What an `edit` or a `write` call is shown as instead of its JSON input: an edit as the unified
 * diff the terminal shows under it (`changeDiff`, from its input and result), a write as the
 * file's text. An edit that was not made (denied, failed, or without a result: the call's mark
 * says which) is the diff of the text it asked to replace, without a line number, labelled
 * "Diff asked for"; one that was made but whose result names no line (another wording) is that
 * diff too, labelled as made. Undefined for
 * any other call, or an input of another shape (shown as JSON, as it is).
 *
 * Each text is shown (`Show`: a secret redacted) before it is cut into lines: a secret over
 * several lines is found whole, before a diff puts its marks between them.
 */
export interface ChangeShown {
  label: string;
  text: string;
  kind: "diff" | "file";
}

export function changeShown(block: CallBlock, show: Show): ChangeShown | undefined {
  const { result } = block;
  const input = Object.fromEntries(
    Object.entries(block.call.input).map(([key, value]) => [
      key,
      typeof value === "string" ? show(value) : value,
    ]),
  );
  const call = { ...block.call, input };
  const { path } = input;
  if (typeof path !== "string") return undefined;
  if (call.name === "write") {
    const { content } = input;
    if (typeof content !== "string" || Object.keys(input).length !== 2) return undefined;
    return { label: "Content", text: content, kind: "file" };
  }
  if (call.name !== "edit") return undefined;
  const { oldText, newText, replaceAll, ...rest } = input;
  if (typeof oldText !== "string" || typeof newText !== "string" || Object.keys(rest).length > 1)
    return undefined;
  const all = replaceAll === true ? " (every occurrence)" : "";
  const applied = block.approval?.approved !== false && result?.isError === false;
  const made = applied ? changeDiff(call, result.content) : undefined;
  if (made) return { label: "Diff", text: made.join("\n"), kind: "diff" };
  const diff = [`--- ${path}`, `+++ ${path}`, ...diffLines(lines(oldText), lines(newText))];
  const label = applied ? `Diff${all} (its line is not in the result)` : `Diff asked for${all}`;
  return { label, text: diff.join("\n"), kind: "diff" };
}

/** A text's lines; a final newline ends the last line and starts none. */
const lines = (text: string) => (text === "" ? [] : text.replace(/\n$/, "").split("\n"));
