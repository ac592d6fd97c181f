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

/** `prefix`, the record's JSON and a newline, as one buffer: what one `write` appends. */
export function encodeLine(record: unknown, prefix = "", slice = SLICE): Buffer {
  const pieces: Piece[] = [prefix];
  collect(record, pieces, slice);
  pieces.push("\n");
  let size = 0;
  for (const piece of pieces)
    size += typeof piece === "string" ? Buffer.byteLength(piece) : longBytes(piece.long, slice, 0);
  const line = Buffer.allocUnsafe(size);
  let at = 0;
  for (const piece of pieces)
    at =
      typeof piece === "string"
        ? at + line.write(piece, at)
        : longBytes(piece.long, slice, at, line);
  return line;
}

/**
 * The JSON of `value` as pieces: whole `JSON.stringify` text where no long string is inside,
 * else the object or array spelled out around its long strings, as `JSON.stringify` spells it
 * (plain data only: records hold no `toJSON`, functions or symbols).
 */
function collect(value: unknown, pieces: Piece[], slice: number): void {
  if (typeof value === "string" && value.length > slice) {
    pieces.push({ long: value });
    return;
  }
  if (value === null || typeof value !== "object" || !holdsLong(value, slice)) {
    pieces.push(JSON.stringify(value) ?? "null");
    return;
  }
  if (Array.isArray(value)) {
    pieces.push("[");
    value.forEach((item: unknown, index) => {
      if (index > 0) pieces.push(",");
      collect(item, pieces, slice);
    });
    pieces.push("]");
    return;
  }
  pieces.push("{");
  let first = true;
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
    pieces.push(`${first ? "" : ","}${JSON.stringify(key)}:`);
    first = false;
    collect(item, pieces, slice);
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
 * The bytes of the JSON string `text`, escaped a slice at a time: written into `line` at `at`
 * when given (returns where they end), else counted (returns `at` plus their number). A slice
 * never ends between the halves of a surrogate pair, so each is escaped as the whole would be.
 */
function longBytes(text: string, slice: number, at: number, line?: Buffer): number {
  let end = at;
  const put = (piece: string) => {
    end += line === undefined ? Buffer.byteLength(piece) : line.write(piece, end);
  };
  put('"');
  for (let start = 0; start < text.length; ) {
    let stop = Math.min(text.length, start + slice);
    if (splitsPair(text, stop)) stop += stop - 1 > start ? -1 : 1;
    put(JSON.stringify(text.slice(start, stop)).slice(1, -1));
    start = stop;
  }
  put('"');
  return end;
}

/** Whether `at` falls between the high and the low half of a surrogate pair. */
function splitsPair(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}
