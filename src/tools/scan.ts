import { closeSync, constants, fstatSync, openSync, read, readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { promisify } from "node:util";
import { RE2JS } from "re2js";
import { limits } from "./limits.js";
import type { Pace } from "./pace.js";

/**
 * Line search for `grep`, built for big trees and big files and for any pattern: RE2 (`re2js`)
 * matches in time linear in the text, so no pattern can freeze the agent. A small file is read
 * in one call, a large one in 64 KiB chunks; each chunk is tried whole first (the prefilter,
 * in multi-line mode), so lines are split and tested only where a chunk can match.
 */
export interface LineSearch {
  regex: RE2JS;
  /** `regex` in multi-line mode; absent when an anchor could make it miss a line. */
  prefilter?: RE2JS;
  /** Called for each matching line (1-based number, text without its newline); false stops. */
  onMatch(lineNo: number, line: string): boolean;
}

/** Thrown for a pattern RE2 does not accept; its message is written for the model. */
export class PatternError extends Error {
  override name = "PatternError";
}

export function lineSearch(
  pattern: string,
  ignoreCase: boolean,
  onMatch: LineSearch["onMatch"],
): LineSearch {
  const flags = ignoreCase ? RE2JS.CASE_INSENSITIVE : 0;
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(pattern, flags);
  } catch (error) {
    throw new PatternError((error as Error).message.replace(/^error parsing regexp: /, ""));
  }
  // In a chunk, `$` does not match before the `\r` of a CRLF line, and `\A`, `\z` match only
  // at the chunk's ends: such patterns are tested line by line only.
  const anchored = /\$|\\[Az]/.test(pattern);
  return anchored
    ? { regex, onMatch }
    : { regex, onMatch, prefilter: RE2JS.compile(pattern, flags | RE2JS.MULTILINE) };
}

const CHUNK = 64 * 1024;
/** Files up to this size are read in one synchronous call; RE2 keeps the search short. */
const SMALL_FILE = 256 * 1024;
/** A line longer than this is searched in its first part only. */
const MAX_LINE = 256 * 1024;

/** `special`: not a regular file (a FIFO, a socket, a device), found when it was opened. */
export type SearchOutcome = "binary" | "stopped" | "done" | "special";

const readAsync = promisify(read);

/**
 * Searches one file. It is opened without following a final link and without blocking (a FIFO
 * opens at once), and searched only when what was opened is a regular file.
 */
export async function searchFile(
  path: Buffer,
  search: LineSearch,
  pace: Pace,
): Promise<SearchOutcome> {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return "special";
    if (info.size === 0) return "done";
    if (info.size <= SMALL_FILE) {
      const data = Buffer.allocUnsafe(info.size);
      const bytes = data.subarray(0, readSync(fd, data, 0, info.size, 0));
      if (isBinary(bytes)) return "binary";
      const text = bytes.toString("utf8");
      await pace.step(Math.ceil(bytes.length / 1024));
      return searchText(trimFinalNewline(text), 1, search).stopped ? "stopped" : "done";
    }
    return await searchLargeFile(fd, search, pace);
  } finally {
    closeSync(fd);
  }
}

async function searchLargeFile(fd: number, search: LineSearch, pace: Pace): Promise<SearchOutcome> {
  const buffer = Buffer.allocUnsafe(CHUNK);
  const decoder = new StringDecoder("utf8");
  let lineNo = 1;
  let carry = "";
  let skippingLongLine = false;
  for (let first = true; ; first = false) {
    pace.check();
    const { bytesRead } = await readAsync(fd, buffer, 0, CHUNK, null);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    if (first && isBinary(chunk)) return "binary";
    let text = decoder.write(chunk);
    if (skippingLongLine) {
      const newline = text.indexOf("\n");
      if (newline === -1) continue;
      skippingLongLine = false;
      text = text.slice(newline + 1);
    }
    text = carry + text;
    const cut = text.lastIndexOf("\n");
    if (cut === -1) {
      carry = text;
    } else {
      const result = searchText(text.slice(0, cut), lineNo, search);
      if (result.stopped) return "stopped";
      lineNo = result.nextLine;
      carry = text.slice(cut + 1);
    }
    if (carry.length > MAX_LINE) {
      if (searchText(carry.slice(0, MAX_LINE), lineNo, search).stopped) return "stopped";
      lineNo++;
      carry = "";
      skippingLongLine = true;
    }
  }
  carry += decoder.end();
  if (carry !== "" && searchText(carry, lineNo, search).stopped) return "stopped";
  return "done";
}

/** Searches complete lines (`text` holds no final newline) numbered from `firstLine`. */
function searchText(
  text: string,
  firstLine: number,
  search: LineSearch,
): { nextLine: number; stopped: boolean } {
  if (search.prefilter && !search.prefilter.test(text)) {
    return { nextLine: firstLine + countNewlines(text) + 1, stopped: false };
  }
  let lineNo = firstLine;
  for (let start = 0; start <= text.length; lineNo++) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    const line =
      text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
    if (search.regex.test(line) && !search.onMatch(lineNo, line))
      return { nextLine: lineNo + 1, stopped: true };
    start = end + 1;
  }
  return { nextLine: lineNo, stopped: false };
}

function countNewlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++;
  return count;
}

const trimFinalNewline = (text: string) => (text.endsWith("\n") ? text.slice(0, -1) : text);

/** A NUL in the first bytes: the heuristic git and ripgrep use. */
export function isBinary(head: Buffer): boolean {
  return head.subarray(0, limits.binarySniffBytes).includes(0);
}
