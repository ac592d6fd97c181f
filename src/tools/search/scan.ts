import { closeSync, constants, fstatSync, openSync, read, readSync, realpathSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { promisify } from "node:util";
import type { RE2JS } from "re2js";
import { limits } from "../limits.js";
import { descriptorPath } from "../shown-path.js";
import type { Pace } from "./pace.js";
import { re2 } from "./re2.js";
import { type Literals, linesWith, RipgrepError } from "./ripgrep.js";

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
  /** Fixed strings every matching line contains, when RE2 finds some (for ripgrep). */
  literals?: Literals;
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
  const RE2 = re2();
  const flags = ignoreCase ? RE2.CASE_INSENSITIVE : 0;
  let regex: RE2JS;
  try {
    regex = RE2.compile(pattern, flags);
  } catch (error) {
    throw new PatternError((error as Error).message.replace(/^error parsing regexp: /, ""));
  }
  // In a chunk, `$` does not match before the `\r` of a CRLF line, and `\A`, `\z` match only
  // at the chunk's ends: such patterns are tested line by line only.
  const anchored = /\$|\\[Az]/.test(pattern);
  const literals = literalsOf(ignoreCase ? RE2.compile(pattern) : regex, ignoreCase);
  return {
    regex,
    onMatch,
    ...(!anchored && { prefilter: RE2.compile(pattern, flags | RE2.MULTILINE) }),
    ...(literals && { literals }),
  };
}

/**
 * RE2's own prefilter, the fixed strings it requires of any match before it runs the pattern,
 * reduced to one set of which every match holds at least one. RE2 keeps it for case-sensitive
 * literals only; for `ignoreCase` the pattern's case-sensitive form gives the strings, which
 * ripgrep then looks for ignoring case (ASCII strings only: both fold ASCII the same way).
 * Undefined when there is no such set, when one of the strings could not be found in a line's
 * raw bytes (a newline, a NUL, U+FFFD, which stands for bytes that are not UTF-8), or when they
 * are too many or too long to pass on a command line.
 */
function literalsOf(regex: RE2JS, ignoreCase: boolean): Literals | undefined {
  const tree = (regex as unknown as { re2Input?: { prefilter?: unknown } }).re2Input?.prefilter;
  const strings = requiredStrings(tree);
  if (!strings || strings.length === 0 || strings.length > 64) return undefined;
  // Each is one argument of ripgrep's command line, which the system bounds (128 KiB each).
  if (strings.reduce((sum, text) => sum + Buffer.byteLength(text), 0) > 32 * 1024) return undefined;
  const usable = (text: string) =>
    text !== "" &&
    !/[\n\0\uFFFD]|\p{Cs}/u.test(text) &&
    (!ignoreCase || /^[\x20-\x7e]*$/.test(text));
  return strings.every(usable) ? { strings, ignoreCase } : undefined;
}

/** A prefilter node of `re2js`: EXACT (1) holds `str`, AND (2) and OR (3) hold `subs`. */
interface PrefilterNode {
  type: number;
  str: string;
  subs: PrefilterNode[];
}

function isNode(value: unknown): value is PrefilterNode {
  const node = value as Partial<PrefilterNode> | null | undefined;
  return typeof node?.type === "number" && typeof node.str === "string" && Array.isArray(node.subs);
}

/** Strings one of which any match contains: an OR needs each branch's, an AND its best part's. */
function requiredStrings(node: unknown): string[] | undefined {
  if (!isNode(node)) return undefined;
  if (node.type === 1) return [node.str];
  const parts = node.subs.map(requiredStrings);
  if (node.type === 3) return parts.every((part) => part !== undefined) ? parts.flat() : undefined;
  if (node.type !== 2) return undefined;
  let best: string[] | undefined;
  for (const part of parts) if (part && (!best || shortest(part) > shortest(best))) best = part;
  return best;
}

const shortest = (strings: string[]) => Math.min(...strings.map((text) => text.length));

const CHUNK = 64 * 1024;
/** Files up to this size are read in one synchronous call; RE2 keeps the search short. */
const SMALL_FILE = 256 * 1024;
/** A line longer than this is searched in its first part only. */
const MAX_LINE = 256 * 1024;

/**
 * `special`: not a regular file (a FIFO, a socket, a device), found when it was opened;
 * `outside`: what was opened is not where the search may look (a folder on its path was swapped
 * for a link after the walk listed it).
 */
export type SearchOutcome = "binary" | "stopped" | "done" | "special" | "outside";

export interface SearchFileOptions {
  /** A ripgrep to ask about large files. */
  rg?: string | undefined;
  /** Whether the real path of the opened file is one the search may read. */
  inside(real: Buffer): boolean;
}

const readAsync = promisify(read);

/** Files from this size are searched by ripgrep's lines when there is a ripgrep to ask. */
const RIPGREP_FILE = 8 * 1024 * 1024;

/**
 * Searches one file. It is opened without following a final link and without blocking (a FIFO
 * opens at once), and searched only when what was opened is a regular file that `inside` allows,
 * by the real path the kernel gives for the descriptor. With `rg`, a large file's candidate lines
 * come from ripgrep (`linesWith`) and are tested here like any other.
 */
export async function searchFile(
  path: Buffer,
  search: LineSearch,
  pace: Pace,
  { rg, inside }: SearchFileOptions,
): Promise<SearchOutcome> {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return "special";
    const real = descriptorPath(fd) ?? realpathSync(path, { encoding: "buffer" });
    if (!inside(real)) return "outside";
    if (info.size === 0) return "done";
    if (info.size <= SMALL_FILE) {
      const data = Buffer.allocUnsafe(info.size);
      const bytes = data.subarray(0, readSync(fd, data, 0, info.size, 0));
      if (isBinary(bytes)) return "binary";
      const text = bytes.toString("utf8");
      await pace.step(Math.ceil(bytes.length / 1024));
      return searchText(trimFinalNewline(text), 1, search).stopped ? "stopped" : "done";
    }
    if (rg !== undefined && search.literals && info.size >= RIPGREP_FILE) {
      const head = Buffer.allocUnsafe(limits.binarySniffBytes);
      if (isBinary(head.subarray(0, readSync(fd, head, 0, head.length, 0)))) return "binary";
      return await searchReportedLines(rg, fd, search, search.literals, pace);
    }
    return await searchLargeFile(fd, search, pace);
  } finally {
    closeSync(fd);
  }
}

/** Enough bytes of a line to hold more than `MAX_LINE` UTF-16 units, whatever it holds. */
const KEEP_BYTES = 4 * MAX_LINE;

/**
 * A large file's lines as ripgrep reports them, tested here. A ripgrep that fails before it
 * reported a line leaves the file to the JavaScript path; once lines came, the failure is the
 * file's (as a failed read would be).
 */
async function searchReportedLines(
  rg: string,
  fd: number,
  search: LineSearch,
  literals: Literals,
  pace: Pace,
): Promise<SearchOutcome> {
  let reported = false;
  try {
    for await (const { lineNo, bytes, cut } of linesWith(
      rg,
      fd,
      literals,
      KEEP_BYTES,
      pace.signal,
    )) {
      reported = true;
      pace.check();
      const text = bytes.toString("utf8");
      const line = cut ? text.slice(0, MAX_LINE) : searchedPart(text);
      if (search.regex.test(line) && !search.onMatch(lineNo, line)) return "stopped";
    }
  } catch (error) {
    pace.check();
    if (reported || !(error instanceof RipgrepError)) throw error;
    return await searchLargeFile(fd, search, pace);
  }
  pace.check();
  return "done";
}

async function searchLargeFile(fd: number, search: LineSearch, pace: Pace): Promise<SearchOutcome> {
  const buffer = Buffer.allocUnsafe(CHUNK);
  const decoder = new StringDecoder("utf8");
  let lineNo = 1;
  let carry = "";
  let skippingLongLine = false;
  let position = 0;
  for (let first = true; ; first = false) {
    pace.check();
    const { bytesRead } = await readAsync(fd, buffer, 0, CHUNK, position);
    if (bytesRead === 0) break;
    position += bytesRead;
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
      const line = carry.slice(0, MAX_LINE);
      if (search.regex.test(line) && !search.onMatch(lineNo, line)) return "stopped";
      lineNo++;
      carry = "";
      skippingLongLine = true;
    }
  }
  carry += decoder.end();
  if (carry !== "" && searchText(carry, lineNo, search).stopped) return "stopped";
  return "done";
}

/**
 * The part of a line (without its newline) that is searched: the line without a final `\r`, or,
 * when longer than `MAX_LINE`, its first `MAX_LINE` characters. One rule for every path.
 */
function searchedPart(line: string): string {
  if (line.length > MAX_LINE) return line.slice(0, MAX_LINE);
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

/**
 * Searches complete lines (`text` holds no final newline) numbered from `firstLine`. The whole
 * text is tried first, unless it may hold a line longer than `MAX_LINE` (whose cut part could
 * match where the whole line does not).
 */
function searchText(
  text: string,
  firstLine: number,
  search: LineSearch,
): { nextLine: number; stopped: boolean } {
  if (search.prefilter && text.length <= MAX_LINE && !search.prefilter.test(text)) {
    return { nextLine: firstLine + countNewlines(text) + 1, stopped: false };
  }
  let lineNo = firstLine;
  for (let start = 0; start <= text.length; lineNo++) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    const line = searchedPart(text.slice(start, end));
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
