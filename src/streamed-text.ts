import { constants } from "node:buffer";

/**
 * Text that arrives in pieces (a round's streamed answer), held once and read once whole.
 *
 * `text += piece` keeps every piece as a string of V8's heap until the text is first read, then
 * copies them all into one flat string: for a long answer the pieces and the copy are both held,
 * and the pieces, kept alive across many young-generation collections, make V8 grow its young
 * generation to its largest (32 MB) on the way. Past `SPILL` units (1 Mi) the text is instead copied
 * into one buffer as it comes (one byte per unit while every unit is below U+0100, as V8 itself
 * holds such text, else two), so each piece dies young; `toString` makes the one string from it.
 * Every UTF-16 unit is kept as it came, lone surrogates and pairs split between pieces included.
 */
export class StreamedText {
  /** The text while it is short: V8 keeps `+=` as a rope of the pieces, copying nothing. */
  private short = "";
  /** Past `SPILL` units: the text's units, Latin-1 bytes, or UTF-16LE once one is wide. */
  private bytes: Buffer | undefined;
  private used = 0;
  private wide = false;
  private units = 0;

  /** `spill`: the most units held as a string (tests make it small). */
  constructor(private readonly spill = SPILL) {}

  get length(): number {
    return this.units;
  }

  add(piece: string): void {
    if (piece === "") return;
    if (this.units + piece.length > constants.MAX_STRING_LENGTH)
      throw new RangeError("Invalid string length");
    this.units += piece.length;
    if (this.bytes === undefined && this.units <= this.spill) {
      this.short += piece;
      return;
    }
    if (this.bytes === undefined) {
      const start = this.short;
      this.short = "";
      this.put(start);
    }
    this.put(piece);
  }

  /** The whole text, as one string; the buffer is let go, the string kept for a later call. */
  toString(): string {
    if (this.bytes !== undefined) {
      this.short = this.bytes.toString(this.wide ? "utf16le" : "latin1", 0, this.used);
      this.bytes = undefined;
      this.used = 0;
    }
    return this.short;
  }

  private put(piece: string): void {
    if (!this.wide && WIDE.test(piece)) this.widen();
    const size = this.wide ? piece.length * 2 : piece.length;
    const bytes = this.room(size);
    this.used += bytes.write(piece, this.used, this.wide ? "utf16le" : "latin1");
  }

  /** The buffer, moved to one twice as large (or more) when `size` more bytes do not fit. */
  private room(size: number): Buffer {
    const held = this.bytes;
    if (held !== undefined && this.used + size <= held.length) return held;
    let capacity = Math.max(16, held?.length ?? this.spill);
    while (capacity < this.used + size) capacity *= 2;
    const larger = Buffer.allocUnsafe(capacity);
    held?.copy(larger, 0, 0, this.used);
    this.bytes = larger;
    return larger;
  }

  /** From one byte per unit to two: the Latin-1 bytes become UTF-16LE units. */
  private widen(): void {
    this.wide = true;
    const narrow = this.bytes;
    if (narrow === undefined) return;
    const count = this.used;
    const wide = Buffer.alloc(Math.max(this.spill, count * 4));
    for (let i = 0; i < count; i++) wide[2 * i] = narrow[i] as number;
    this.bytes = wide;
    this.used = count * 2;
  }
}

/** Past this many units (1 Mi) a text is held in a buffer. */
const SPILL = 1 << 20;

/** A unit Latin-1 cannot hold. */
const WIDE = /[\u0100-\uffff]/;
