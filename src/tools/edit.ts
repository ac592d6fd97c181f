import { Type } from "@sinclair/typebox";
import type { MoreProtected } from "../protected/files.js";
import type { Tool } from "../types.js";
import { closestLineHint } from "./closest.js";
import { defineTool, pause, ToolError } from "./define.js";
import { writeAtomic } from "./files.js";
import { limits } from "./limits.js";
import { openInWorkspace } from "./open.js";
import type { BoundaryOptions } from "./path.js";
import { type ProtectedWrites, refuseProtected } from "./protected.js";
import { digestBytes, type SeenContent, type SeenFiles } from "./seen.js";
import { requireSeen, requireUnchanged } from "./stale.js";
import { firstInvalidUtf8 } from "./utf8.js";

/**
 * `edit` works on the file's bytes: `oldText` and `newText` are encoded as UTF-8, every match is
 * found with a byte search, and everything outside the replaced spans is written back as it was
 * (a BOM, CRLF line endings, any character). A file that is not valid UTF-8 is refused rather
 * than re-encoded. Every loop over the file yields now and then, so an abort stops it at once.
 *
 * The file must hold what the agent last saw (`seen`: its read, or its own last write); right
 * before the rename it must still hold what `edit` read. What `edit` wrote is then seen. A
 * protected file (`protectedWhy`) is changed only when `approved` says so for its real path.
 */
export function editTool(
  root: string,
  seen: SeenFiles,
  boundary: BoundaryOptions = {},
  approved?: ProtectedWrites,
  more?: MoreProtected,
): Tool {
  return defineTool({
    name: "edit",
    description:
      "Replace exact text in a file read (or written) in this session and unchanged since. oldText must match exactly once (whitespace included) unless replaceAll is set.",
    input: Type.Object({
      path: Type.String({ description: "File path in the workspace" }),
      oldText: Type.String({ minLength: 1, description: "Exact text to replace" }),
      newText: Type.String({ description: "Replacement text" }),
      replaceAll: Type.Optional(Type.Boolean({ description: "Replace every occurrence" })),
    }),
    async run({ path, oldText, newText, replaceAll = false }, signal) {
      const opened = await openInWorkspace(root, path, boundary);
      const { handle, info, shown } = opened;
      await refuseProtected(opened, "edit", approved, more).catch(async (error: unknown) => {
        await handle.close();
        throw error;
      });
      let bytes: Buffer;
      let read: SeenContent;
      try {
        if (info.size > limits.editBytes)
          throw new ToolError(`${shown} is too large to edit (${info.size} bytes)`);
        bytes = await handle.readFile();
        if (bytes.includes(0)) throw new ToolError(`${shown} is a binary file`);
        const bad = firstInvalidUtf8(bytes);
        if (bad !== -1) {
          const byte = (bytes[bad] ?? 0).toString(16).toUpperCase().padStart(2, "0");
          throw new ToolError(
            `${shown} is not valid UTF-8 (byte 0x${byte} at offset ${bad}); edit changes UTF-8 text only`,
          );
        }
        read = await digestBytes(bytes, signal);
        await requireSeen(seen, opened, read, "edit", signal);
      } finally {
        await handle.close();
      }
      if (oldText === newText)
        throw new ToolError("oldText and newText are the same: nothing to change");

      // The model writes \n; a CRLF file is matched and edited in its own line endings.
      const crlf = bytes.includes("\r\n") && !oldText.includes("\r");
      const variants = crlf
        ? [
            [toCrlf(oldText), toCrlf(newText)],
            [oldText, newText],
          ]
        : [[oldText, newText]];
      for (const [from = "", to = ""] of variants) {
        const needle = Buffer.from(from);
        const found = await findMatches(bytes, needle, signal);
        if (found.count === 0) continue;
        const lines = await lineNumbers(bytes, found.first, signal);
        if (found.count > 1 && !replaceAll) {
          const more = found.count - lines.length;
          const listed = `${lines.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
          throw new ToolError(
            `oldText matches ${found.count} times in ${shown} (lines ${listed}): include more surrounding text to make it unique, or set replaceAll`,
          );
        }
        const written = await writeAtomic(opened, replaced(bytes, needle, Buffer.from(to)), {
          mode: info.mode & 0o7777,
          signal,
          beforeRename: () => requireUnchanged(opened, read, "edit", signal),
        });
        seen.record(opened.path, written);
        const count = found.count;
        return {
          content: `edited ${shown}: replaced ${count} occurrence${count === 1 ? "" : "s"} at line ${lines[0]}`,
        };
      }
      throw new ToolError(
        `oldText not found in ${shown}${await closestLineHint(bytes, oldText, signal)}`,
      );
    },
  });
}

const toCrlf = (text: string) => text.replace(/\r?\n/g, "\r\n");

/** Matches between two checks of the abort signal. */
const BATCH = 4096;

/** How many times `needle` occurs in `bytes` (without overlaps), and where the first few start. */
async function findMatches(bytes: Buffer, needle: Buffer, signal?: AbortSignal) {
  const first: number[] = [];
  let count = 0;
  for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + needle.length)) {
    if (first.length < limits.editListedLines) first.push(at);
    if (++count % BATCH === 0) await pause(signal);
  }
  return { count, first };
}

/** The 1-based line of each offset (in ascending order), in one pass over the bytes before them. */
async function lineNumbers(bytes: Buffer, offsets: number[], signal?: AbortSignal) {
  const lines: number[] = [];
  let line = 1;
  let newline = bytes.indexOf(10);
  let seen = 0;
  for (const offset of offsets) {
    for (; newline !== -1 && newline < offset; newline = bytes.indexOf(10, newline + 1)) {
      line++;
      if (++seen % (BATCH * 16) === 0) await pause(signal);
    }
    lines.push(line);
  }
  return lines;
}

/** Output is gathered in one reused buffer of this size; a longer unchanged span goes as is. */
const OUT_CHUNK = 1 << 20;

/**
 * `bytes` with every `needle` replaced, as pieces for `writeAtomic`: unchanged spans and
 * replacements are copied into one reused megabyte (no object per match is kept), and a span
 * longer than that is passed on without a copy. Each piece is written before the next is made.
 */
function* replaced(bytes: Buffer, needle: Buffer, replacement: Buffer): Generator<Uint8Array> {
  const out = Buffer.allocUnsafe(OUT_CHUNK);
  let used = 0;
  function* put(source: Buffer, start: number, end: number): Generator<Uint8Array> {
    if (used + end - start > OUT_CHUNK && used > 0) {
      yield out.subarray(0, used);
      used = 0;
    }
    if (end - start > OUT_CHUNK) yield source.subarray(start, end);
    else used += source.copy(out, used, start, end);
  }
  let from = 0;
  for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, from)) {
    yield* put(bytes, from, at);
    yield* put(replacement, 0, replacement.length);
    from = at + needle.length;
  }
  yield* put(bytes, from, bytes.length);
  if (used > 0) yield out.subarray(0, used);
}
