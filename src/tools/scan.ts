import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { open } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { limits } from "./limits.js";

/**
 * Line search for `grep`, built for big trees and big files: a small file is read in one call,
 * a large one in 64 KiB chunks; each chunk of text is tried whole first (the prefilter), so
 * lines are split and tested only where a chunk can match.
 */
export interface LineSearch {
  regex: RegExp;
  /** `regex` with the `m` flag; absent when a lookaround could make it miss a line. */
  prefilter?: RegExp;
  /** Called for each matching line (1-based number, text without its newline); false stops. */
  onMatch(lineNo: number, line: string): boolean;
}

export function lineSearch(regex: RegExp, onMatch: LineSearch["onMatch"]): LineSearch {
  const lookaround = /\(\?<?[=!]/.test(regex.source);
  return lookaround
    ? { regex, onMatch }
    : { regex, onMatch, prefilter: new RegExp(regex.source, `${regex.flags}m`) };
}

const CHUNK = 64 * 1024;
const SMALL_FILE = 1024 * 1024;
/** A line longer than this is searched in its first part only. */
const MAX_LINE = 1024 * 1024;

export type SearchOutcome = "binary" | "stopped" | "done";

export async function searchFile(
  path: string,
  search: LineSearch,
  signal?: AbortSignal,
): Promise<SearchOutcome> {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return "done";
    if (size <= SMALL_FILE) {
      const data = Buffer.allocUnsafe(size);
      const read = readSync(fd, data, 0, size, 0);
      const bytes = data.subarray(0, read);
      if (isBinary(bytes)) return "binary";
      return searchText(trimFinalNewline(bytes.toString("utf8")), 1, search).stopped
        ? "stopped"
        : "done";
    }
  } finally {
    closeSync(fd);
  }
  return searchLargeFile(path, search, signal);
}

async function searchLargeFile(
  path: string,
  search: LineSearch,
  signal?: AbortSignal,
): Promise<SearchOutcome> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(CHUNK);
    const decoder = new StringDecoder("utf8");
    let lineNo = 1;
    let carry = "";
    let skippingLongLine = false;
    for (let first = true; ; first = false) {
      if (signal?.aborted) throw new Error("aborted");
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
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
  } finally {
    await handle.close();
  }
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
