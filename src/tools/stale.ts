import type { FileHandle } from "node:fs/promises";
import { headOf } from "../text.js";
import { ToolError } from "./define.js";
import { isBinaryFile, readLines } from "./files.js";
import { limits } from "./limits.js";
import { type OpenedFile, openResolved } from "./open.js";
import type { Resolved } from "./path.js";
import { digestFile, type SeenContent, type SeenFiles } from "./seen.js";

/** The tools that replace a file, as their errors name them. */
type Writer = "edit" | "write";

/**
 * Throws unless `now`, the content of the open file `file`, is what the agent last saw there:
 * a file not seen needs a read first (a binary file, which `read` cannot show, is not replaced at
 * all), and a file changed since gets an error that shows what changed (the lines, when the
 * line hashes are known: not for what a resumed session recalls). Each refusal says since when
 * the file has not been read (`SeenFiles.unseen`): in this session, since a compaction, since
 * a resume of a session an older version wrote.
 */
export async function requireSeen(
  seen: SeenFiles,
  file: OpenedFile,
  now: SeenContent,
  verb: Writer,
  signal?: AbortSignal,
): Promise<void> {
  const before = seen.get(file.path);
  if (before === undefined) {
    const { since, olderSession } = seen.unseen();
    const notRead = `${file.shown} exists and has not been read ${
      olderSession ? "since this session was resumed" : since
    }`;
    if (await isBinaryFile(file.handle)) {
      throw new ToolError(
        `${notRead}, and read cannot show it (a binary file): ${verb} will not replace it unseen; if it should go, remove it first (bash: rm), then ${verb}`,
      );
    }
    if (olderSession) {
      throw new ToolError(
        `${notRead}, and this session was written by an older version, which kept no record of what was read: read it again, then ${verb}`,
      );
    }
    throw new ToolError(`${notRead}: read it first, then ${verb}`);
  }
  if (before.hash === now.hash) return;
  const note = await changeNote(before, now, file.handle, signal);
  throw new ToolError(
    `${file.shown} has changed since you last read or wrote it: read it again, then ${verb}${note}`,
  );
}

/**
 * The check made right before the rename that replaces `target`: the file must still hold
 * `expected` (what the tool read and checked), or still be absent when `expected` is undefined.
 * Another process may write between the tool's read and its rename; this is where it is caught.
 * A change in the instant between this check and the rename itself is not: POSIX has no
 * compare-and-rename.
 */
export async function requireUnchanged(
  target: Resolved,
  expected: SeenContent | undefined,
  verb: Writer,
  signal?: AbortSignal,
): Promise<void> {
  const nothing = `nothing was written`;
  let file: OpenedFile;
  try {
    file = await openResolved(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    if (expected === undefined) return;
    throw new ToolError(`${target.shown} was removed while ${verb} was writing it; ${nothing}`);
  }
  try {
    if (expected === undefined) {
      throw new ToolError(
        `${target.shown} appeared while ${verb} was writing it; ${nothing}: read it, then ${verb}`,
      );
    }
    const now = await digestFile(file.handle, signal);
    if (now.hash === expected.hash) return;
    const note = await changeNote(expected, now, file.handle, signal);
    throw new ToolError(
      `${target.shown} changed while ${verb} was writing it; ${nothing}: read it again, then ${verb}${note}`,
    );
  } finally {
    await file.handle.close();
  }
}

/**
 * Says which lines changed between `before` and `now` (the content of the open file `handle`):
 * the span between the longest unchanged start and end, and its first lines as they read now,
 * at most `limits.changeLines` lines and `limits.changeChars` characters. Empty when the line
 * hashes are unknown (a file of very many lines).
 */
async function changeNote(
  before: SeenContent,
  now: SeenContent,
  handle: FileHandle,
  signal?: AbortSignal,
): Promise<string> {
  if (!before.lines || !now.lines) return "";
  const { first, count, was } = changedSpan(before.lines, now.lines);
  const span = (n: number) => (n === 1 ? `line ${first}` : `lines ${first}–${first + n - 1}`);
  const one = count === 1;
  if (count === 0) return was === 0 ? "" : `\n${span(was)} ${was === 1 ? "was" : "were"} removed`;
  const head =
    was === 0
      ? `\n${span(count)} ${one ? "is new; it reads" : "are new; they read"}:`
      : `\n${span(count)} ${one ? "differs" : "differ"} (${was === 1 ? "was 1 line" : `were ${was} lines`}); ${one ? "it now reads" : "they now read"}:`;
  return `${head}\n${await linesNow(handle, first, count, signal)}`;
}

/** Where two lists of line hashes differ: from line `first`, `count` lines now, `was` before. */
function changedSpan(before: Uint32Array, now: Uint32Array) {
  const most = Math.min(before.length, now.length);
  let start = 0;
  while (start < most && before[start] === now[start]) start++;
  let end = 0;
  while (end < most - start && before[before.length - 1 - end] === now[now.length - 1 - end]) end++;
  return { first: start + 1, count: now.length - start - end, was: before.length - start - end };
}

/** Lines `first`… of the open file, numbered, within the bounds of `changeNote`. */
async function linesNow(
  handle: FileHandle,
  first: number,
  count: number,
  signal?: AbortSignal,
): Promise<string> {
  const shown: string[] = [];
  let room = limits.changeChars;
  let cut = false;
  const wanted = Math.min(count, limits.changeLines);
  // A UTF-16 unit takes at most 3 bytes: this many bytes always hold more than `changeChars`.
  for await (const line of readLines(handle, 3 * limits.changeChars, signal, first)) {
    if (shown.length === wanted) break;
    const entry = `${first + shown.length}: ${line.text}`;
    const cost = entry.length + (shown.length > 0 ? 1 : 0);
    if (cost <= room && line.dropped === 0) {
      shown.push(entry);
      room -= cost;
      continue;
    }
    const left = room - (shown.length > 0 ? 1 : 0);
    if (left > 0) {
      shown.push(headOf(entry, left));
      cut = true;
    }
    break;
  }
  const more = count - shown.length;
  return `${shown.join("\n")}${cut ? " [line cut]" : ""}${more > 0 ? `\n[and ${more} more changed lines]` : ""}`;
}
