import { Bytes } from "../bytes.js";

/**
 * One session record as the bytes of its line, without holding its text three times. The
 * obvious `Buffer.from(prefix + JSON.stringify(record) + "\n")` keeps, at its peak, the record's
 * strings, their JSON, the joined line and its bytes: a 50 MB answer cost 200 MB to write. Here a
 * long string is escaped a slice at a time, straight into the one buffer of the line, so the peak
 * is the strings and the bytes. The bytes are exactly those of `JSON.stringify` (tested against it).
 */

/**
 * Strings longer than this (UTF-16 units) are escaped a slice at a time. Small enough that each
 * slice's JSON is young garbage V8 frees at once (a MiB slice went to its large-object space and
 * stayed until a full collection: 12 MB more at the peak of writing a 50 MB answer).
 */
const SLICE = 1 << 15;

type Piece = string | { long: string };

/** A change made to the JSON text (never to the prefix), a piece at a time. */
type Escape = (json: string) => string;
const asIs: Escape = (json) => json;

/**
 * `prefix`, the record's JSON and a newline, as one buffer: what one `write` appends. `escapeJson`
 * changes the JSON text a piece at a time (a key, a value, a slice of a long string): it must give
 * for each piece what it would give for the piece within the whole text, as replacing characters
 * that appear only inside JSON strings does.
 */
export function encodeLine(
  record: unknown,
  prefix = "",
  slice = SLICE,
  escapeJson: Escape = asIs,
): Buffer {
  return bufferOf(piecesOf(record, prefix, slice, escapeJson), slice, escapeJson);
}

/**
 * Calls `use` with the bytes `encodeLine` makes and returns what it returns. A line that holds a
 * long string is escaped in one pass into memory that grows in place (`Bytes`) and is given back
 * as soon as `use` returns: V8 does not count it, so making it starts no collection, and it is
 * not kept until one. Where no memory can be reserved, `encodeLine`'s buffer is used.
 */
export function withLine<T>(
  record: unknown,
  prefix: string,
  use: (line: Buffer) => T,
  slice = SLICE,
): T {
  const pieces = piecesOf(record, prefix, slice, asIs);
  const memory = pieces.some(isLong) ? Bytes.reserve(mostBytes(pieces)) : undefined;
  if (memory === undefined) return use(bufferOf(pieces, slice, asIs));
  try {
    const put = (text: string) => memory.write(text, "utf8");
    for (const piece of pieces)
      if (typeof piece === "string") put(piece);
      else jsonSlices(piece.long, slice, asIs, put);
    return use(memory.bytes);
  } finally {
    memory.release();
  }
}

function piecesOf(record: unknown, prefix: string, slice: number, escapeJson: Escape): Piece[] {
  const pieces: Piece[] = [prefix];
  collect(record, pieces, slice, escapeJson);
  pieces.push("\n");
  return pieces;
}

/** The line in a buffer of its exact size: its bytes counted, then written. */
function bufferOf(pieces: Piece[], slice: number, escapeJson: Escape): Buffer {
  let size = 0;
  const count = (text: string) => {
    size += Buffer.byteLength(text);
  };
  for (const piece of pieces)
    if (typeof piece === "string") count(piece);
    else jsonSlices(piece.long, slice, escapeJson, count);
  const line = Buffer.allocUnsafe(size);
  let at = 0;
  const put = (text: string) => {
    at += line.write(text, at);
  };
  for (const piece of pieces)
    if (typeof piece === "string") put(piece);
    else jsonSlices(piece.long, slice, escapeJson, put);
  return line;
}

const isLong = (piece: Piece) => typeof piece !== "string";

/** The most bytes the pieces can take: three a unit, six a unit of a long string (`\u001f`). */
function mostBytes(pieces: Piece[]): number {
  let most = 0;
  for (const piece of pieces)
    most += typeof piece === "string" ? piece.length * 3 : 2 + piece.long.length * 6;
  return most;
}

/**
 * The JSON of `value` as pieces: whole `JSON.stringify` text where no long string is inside,
 * else the object or array spelled out around its long strings, as `JSON.stringify` spells it
 * (plain data only: records hold no `toJSON`, functions or symbols).
 */
function collect(value: unknown, pieces: Piece[], slice: number, escapeJson: Escape): void {
  if (typeof value === "string" && value.length > slice) {
    pieces.push({ long: value });
    return;
  }
  if (value === null || typeof value !== "object" || !holdsLong(value, slice)) {
    pieces.push(escapeJson(JSON.stringify(value) ?? "null"));
    return;
  }
  if (Array.isArray(value)) {
    pieces.push("[");
    value.forEach((item: unknown, index) => {
      if (index > 0) pieces.push(",");
      collect(item, pieces, slice, escapeJson);
    });
    pieces.push("]");
    return;
  }
  pieces.push("{");
  let first = true;
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
    pieces.push(`${first ? "" : ","}${escapeJson(JSON.stringify(key))}:`);
    first = false;
    collect(item, pieces, slice, escapeJson);
  }
  pieces.push("}");
}

function holdsLong(value: object, slice: number): boolean {
  for (const item of Object.values(value)) {
    if (
      typeof item === "string"
        ? item.length > slice
        : item !== null && typeof item === "object" && holdsLong(item, slice)
    )
      return true;
  }
  return false;
}

/**
 * The JSON string `text`, handed to `put` a slice at a time. A slice never ends between the
 * halves of a surrogate pair, so each is escaped as the whole would be.
 */
function jsonSlices(
  text: string,
  slice: number,
  escapeJson: Escape,
  put: (json: string) => void,
): void {
  put('"');
  for (let start = 0; start < text.length; ) {
    let stop = Math.min(text.length, start + slice);
    if (splitsPair(text, stop)) stop += stop - 1 > start ? -1 : 1;
    put(escapeJson(JSON.stringify(text.slice(start, stop)).slice(1, -1)));
    start = stop;
  }
  put('"');
}

/** Whether `at` falls between the high and the low half of a surrogate pair. */
function splitsPair(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}
