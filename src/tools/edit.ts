import { readFile, stat } from "node:fs/promises";
import { Type } from "@sinclair/typebox";
import type { Tool } from "../types.js";
import { defineTool, ToolError } from "./define.js";
import { writeAtomic } from "./files.js";
import { resolveInWorkspace } from "./path.js";

const BOM = "\uFEFF";
/** Files above this size are not edited in memory. */
const MAX_EDIT_BYTES = 10 * 1024 * 1024;

export function editTool(root: string): Tool {
  return defineTool({
    name: "edit",
    description:
      "Replace exact text in a file. oldText must match exactly once (whitespace included) unless replaceAll is set.",
    input: Type.Object({
      path: Type.String({ description: "File path in the workspace" }),
      oldText: Type.String({ minLength: 1, description: "Exact text to replace" }),
      newText: Type.String({ description: "Replacement text" }),
      replaceAll: Type.Optional(Type.Boolean({ description: "Replace every occurrence" })),
    }),
    async run({ path, oldText, newText, replaceAll = false }) {
      const { path: file, shown } = await resolveInWorkspace(root, path);
      const info = await stat(file);
      if (!info.isFile()) throw new ToolError(`${shown} is not a regular file`);
      if (info.size > MAX_EDIT_BYTES)
        throw new ToolError(`${shown} is too large to edit (${info.size} bytes)`);
      const bytes = await readFile(file);
      if (bytes.includes(0)) throw new ToolError(`${shown} is a binary file`);
      const decoded = bytes.toString("utf8");
      const bom = decoded.startsWith(BOM) ? BOM : "";
      const text = decoded.slice(bom.length);
      if (oldText === newText)
        throw new ToolError("oldText and newText are the same: nothing to change");

      // The model writes \n; a CRLF file is matched and edited in its own line endings.
      const crlf = text.includes("\r\n") && !oldText.includes("\r");
      const variants: [string, string][] = crlf
        ? [
            [toCrlf(oldText), toCrlf(newText)],
            [oldText, newText],
          ]
        : [[oldText, newText]];
      for (const [from, to] of variants) {
        const positions = occurrences(text, from);
        if (positions.length === 0) continue;
        if (positions.length > 1 && !replaceAll) {
          const lines = positions.map((at) => lineOf(text, at)).join(", ");
          throw new ToolError(
            `oldText matches ${positions.length} times in ${shown} (lines ${lines}): include more surrounding text to make it unique, or set replaceAll`,
          );
        }
        const updated = text.split(from).join(to);
        await writeAtomic(file, bom + updated);
        const count = positions.length;
        return {
          content: `edited ${shown}: replaced ${count} occurrence${count === 1 ? "" : "s"} at line ${lineOf(text, positions[0] ?? 0)}`,
        };
      }
      throw new ToolError(`oldText not found in ${shown}${closestLineHint(text, oldText)}`);
    },
  });
}

const toCrlf = (text: string) => text.replace(/\r?\n/g, "\r\n");

function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    found.push(at);
  }
  return found;
}

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;

/** Points at the line most like the first line of `oldText`, so the model can correct itself. */
function closestLineHint(text: string, oldText: string): string {
  const wanted = oldText
    .split("\n")
    .find((line) => line.trim() !== "")
    ?.trim();
  if (!wanted) return "";
  let best = { score: 0, line: 0, text: "" };
  text.split("\n").forEach((raw, index) => {
    const line = raw.replace(/\r$/, "");
    const score = similarity(wanted, line.trim());
    if (score > best.score) best = { score, line: index + 1, text: line };
  });
  if (best.score < 0.5) return "";
  return `; the closest line is ${best.line}: ${JSON.stringify(best.text.slice(0, 200))}`;
}

/** Dice coefficient over character pairs: 1 for equal strings, 0 for nothing in common. */
function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const pairs = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const pair = a.slice(i, i + 2);
    pairs.set(pair, (pairs.get(pair) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const pair = b.slice(i, i + 2);
    const count = pairs.get(pair) ?? 0;
    if (count > 0) {
      pairs.set(pair, count - 1);
      shared++;
    }
  }
  return (2 * shared) / (a.length + b.length - 2);
}
