import { constants } from "node:buffer";
import { Bytes } from "./bytes.js";

/**
 * Text that arrives in pieces (a round's streamed answer), held once and read once whole.
 *
 * `text += piece` keeps every piece as a string of V8's heap until the text is first read, then
 * copies them all into one flat string: for a long answer the pieces and the copy are both held,
 * and the pieces, kept alive across many young-generation collections, make V8 grow its young
 * generation to its largest (32 MB) on the way. Past `SPILL` units (1 Mi) the text is instead
 * copied as it comes into memory that grows in place (`Bytes`), one byte per unit while every
 * unit is below U+0100 (as V8 itself holds such text), else two, so each piece dies young;
 * `toString` makes the one string from it and gives that memory back at once. Every UTF-16 unit
 * is kept as it came, lone surrogates and pairs split between pieces included. Where memory
 * cannot be reserved, the text stays a string.
 */
export class StreamedText {
  /** The text while it is short (or where no memory could be reserved): a rope V8 joins later. */
  private short = "";
  /** Past `spill` units: the text's units, Latin-1 bytes, or UTF-16LE once one is wide. */
  private bytes: Bytes | undefined;
  private wide = false;
  private units = 0;
  /** False once memory could not be reserved: the text then stays a string. */
  private canSpill = true;

  /**
   * `spill`: the most units held as a string; `reserve`: how memory is reserved (tests make the
   * first small and the second fail).
   */
  constructor(
    private readonly spill = SPILL,
    private readonly reserve: (max: number) => Bytes | undefined = Bytes.reserve,
  ) {}

  get length(): number {
    return this.units;
  }

  add(piece: string): void {
    if (piece === "") return;
    if (this.units + piece.length > constants.MAX_STRING_LENGTH)
      throw new RangeError("Invalid string length");
    this.units += piece.length;
    if (this.bytes === undefined && this.canSpill && this.units > this.spill) this.spillShort();
    if (this.bytes !== undefined && !this.wide && WIDE.test(piece)) this.widen(this.bytes);
    if (this.bytes === undefined) this.short += piece;
    else this.bytes.write(piece, this.encoding());
  }

  /** The whole text, as one string; the memory is given back, the string kept for a later call. */
  toString(): string {
    if (this.bytes !== undefined) this.short = this.unspill(this.bytes, this.encoding());
    return this.short;
  }

  /** Moves the short text into reserved memory, if any can be had. */
  private spillShort(): void {
    const bytes = this.take();
    if (bytes === undefined) return;
    this.wide = WIDE.test(this.short);
    bytes.write(this.short, this.encoding());
    this.short = "";
    this.bytes = bytes;
  }

  /** From one byte per unit to two: the Latin-1 text is copied as UTF-16LE units. */
  private widen(narrow: Bytes): void {
    const wide = this.take();
    if (wide === undefined) this.short = this.unspill(narrow, "latin1");
    else {
      wide.widen(narrow);
      narrow.release();
      this.bytes = wide;
    }
    this.wide = true;
  }

  /** The text held in `bytes`, as a string; their memory is given back. */
  private unspill(bytes: Bytes, encoding: Encoding): string {
    const text = bytes.text(encoding);
    bytes.release();
    this.bytes = undefined;
    return text;
  }

  private encoding(): Encoding {
    return this.wide ? "utf16le" : "latin1";
  }

  private take(): Bytes | undefined {
    const bytes = this.reserve(MAX_BYTES);
    if (bytes === undefined) this.canSpill = false;
    return bytes;
  }
}

/** Past this many units (1 Mi) a text is held in `Bytes`. */
const SPILL = 1 << 20;
/** The most bytes a text takes: the longest string V8 makes, two bytes a unit. */
const MAX_BYTES = constants.MAX_STRING_LENGTH * 2;
type Encoding = "latin1" | "utf16le";

/** A unit Latin-1 cannot hold. */
const WIDE = /[\u0100-\uffff]/;
