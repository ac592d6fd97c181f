import * as zlib from "node:zlib";
import type { IMAGE_MEDIA_TYPES } from "./message-schema.js";

/**
 * The pixel size of a whole image of each type, read from its structure, or undefined when the
 * structure is cut short, damaged, or says two sizes: a PNG's chunks each whole with the right
 * checksum (the critical ones), to `IEND`; a JPEG's segments to the start of scan, `EOI` at the end; a GIF's blocks
 * to its trailer, every frame counted in the size (a frame may stand outside the logical screen);
 * a WebP's chunks within its RIFF size, the extended canvas the size of the bitstream it holds.
 * Nothing is decoded: these are the bounds a header can be held to without a decoder.
 */

export type ImageSize = { width: number; height: number } | undefined;

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export const imageSizeOf: Record<(typeof IMAGE_MEDIA_TYPES)[number], (b: Buffer) => ImageSize> = {
  "image/png": pngSize,
  "image/jpeg": jpegSize,
  "image/gif": gifSize,
  "image/webp": webpSize,
};

/**
 * The sizes the headers alone give, from the first bytes of a file (a JPEG's segments up to its
 * frame header), for estimates: nothing says the image is whole.
 */
export const imageHeaderSizeOf: Record<
  (typeof IMAGE_MEDIA_TYPES)[number],
  (b: Buffer) => ImageSize
> = {
  "image/png": (b) =>
    b.length >= 24 && b.toString("latin1", 12, 16) === "IHDR"
      ? { width: b.readUInt32BE(16), height: b.readUInt32BE(20) }
      : undefined,
  "image/jpeg": (b) => jpegWalk(b, true),
  "image/gif": (b) =>
    b.length < 10 ? undefined : { width: b.readUInt16LE(6), height: b.readUInt16LE(8) },
  "image/webp": webpHeader,
};

/** IHDR first; every chunk whole, each critical one's CRC right, to `IEND`. */
function pngSize(b: Buffer): ImageSize {
  let size: ImageSize;
  for (let at = 8; at + 12 <= b.length; ) {
    const length = b.readUInt32BE(at);
    const type = b.toString("latin1", at + 4, at + 8);
    const end = at + 12 + length;
    if (end > b.length) return undefined;
    // A critical chunk's CRC (IHDR, PLTE, IDAT, IEND: an upper-case first letter) must be right;
    // decoders skip an ancillary chunk whose CRC is wrong (real files have them), and so do we.
    const critical = ((b[at + 4] as number) & 0x20) === 0;
    if (critical && crc32(b.subarray(at + 4, end - 4)) !== b.readUInt32BE(end - 4))
      return undefined;
    if (at === 8) {
      if (type !== "IHDR" || length !== 13) return undefined;
      size = { width: b.readUInt32BE(at + 8), height: b.readUInt32BE(at + 12) };
    }
    if (type === "IEND") return size;
    at = end;
  }
  return undefined;
}

/** Segments walked to the start of scan; a frame header (SOFn) before it; `EOI` at the end. */
function jpegSize(b: Buffer): ImageSize {
  return jpegWalk(b, false);
}

/** The walk of `jpegSize`; with `header`, it ends at the frame header, whatever follows. */
function jpegWalk(b: Buffer, header: boolean): ImageSize {
  let size: ImageSize;
  for (let at = 2; at + 4 <= b.length; ) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1] as number;
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = b.readUInt16BE(at + 2);
    if (length < 2 || at + 2 + length > b.length) return undefined;
    const frame = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
    if (frame) {
      if (length < 8) return undefined;
      size = { height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) };
      if (header) return size;
    }
    if (marker === 0xda) {
      const whole = b.length >= at + 4 && b[b.length - 2] === 0xff && b[b.length - 1] === 0xd9;
      return whole ? size : undefined;
    }
    at += 2 + length;
  }
  return undefined;
}

/**
 * Blocks walked from the logical screen to the trailer, the last byte; at least one frame. The
 * size is what every frame and the screen cover together, so a frame larger than the screen it
 * claims is bounded as the image it is.
 */
function gifSize(b: Buffer): ImageSize {
  if (b.length < 14 || b[b.length - 1] !== 0x3b) return undefined;
  let width = b.readUInt16LE(6);
  let height = b.readUInt16LE(8);
  let frames = 0;
  let at: number | undefined = 13 + gifColorTable(b[10] as number);
  while (at !== undefined && at < b.length) {
    const block = b[at];
    if (block === 0x3b) return at === b.length - 1 && frames > 0 ? { width, height } : undefined;
    if (block === 0x21) at = gifSubBlocks(b, at + 2);
    else if (block === 0x2c && at + 11 <= b.length) {
      width = Math.max(width, b.readUInt16LE(at + 1) + b.readUInt16LE(at + 5));
      height = Math.max(height, b.readUInt16LE(at + 3) + b.readUInt16LE(at + 7));
      frames++;
      // The descriptor, its colour table, the LZW code size, then the data's sub-blocks.
      at = gifSubBlocks(b, at + 10 + gifColorTable(b[at + 9] as number) + 1);
    } else return undefined;
  }
  return undefined;
}

const gifColorTable = (packed: number) => (packed & 0x80 ? 3 << ((packed & 7) + 1) : 0);

/** Where the sub-blocks starting at `at` end (after their empty block), or undefined if cut. */
function gifSubBlocks(b: Buffer, at: number): number | undefined {
  for (let next = at; next < b.length; next += 1 + (b[next] as number)) {
    if (b[next] === 0) return next + 1;
  }
  return undefined;
}

interface Chunk {
  type: string;
  at: number;
  length: number;
}

/**
 * The size the RIFF header promises is there; the first chunk says the size: a VP8 or VP8L
 * bitstream, or a VP8X canvas the bitstream after it (or each animation frame) must agree with.
 */
function webpSize(b: Buffer): ImageSize {
  if (b.length < 30 || b.readUInt32LE(4) + 8 > b.length) return undefined;
  const chunks = riffChunks(b, 12, b.readUInt32LE(4) + 8);
  const [first] = chunks ?? [];
  if (chunks === undefined || first === undefined) return undefined;
  if (first.type !== "VP8X") return bitstreamSize(b, first);
  if (first.length < 10) return undefined;
  const canvas = { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  if (((b[20] as number) & 0x02) === 0) {
    const size = firstBitstreamSize(b, chunks);
    return size?.width === canvas.width && size.height === canvas.height ? canvas : undefined;
  }
  const frames = chunks.filter((chunk) => chunk.type === "ANMF");
  const framed = frames.length > 0 && frames.every((frame) => frameFits(b, frame, canvas));
  return framed ? canvas : undefined;
}

/** The size the first chunk's header says (a VP8X canvas as it claims), from the first bytes. */
function webpHeader(b: Buffer): ImageSize {
  if (b.length < 30) return undefined;
  const type = b.toString("latin1", 12, 16);
  if (type === "VP8X") return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  return bitstreamSize(b, { type, at: 20, length: b.readUInt32LE(16) });
}

/** An animation frame within the canvas, its bitstream the frame's size. */
function frameFits(b: Buffer, frame: Chunk, canvas: { width: number; height: number }): boolean {
  if (frame.length < 16) return false;
  const x = b.readUIntLE(frame.at, 3) * 2;
  const y = b.readUIntLE(frame.at + 3, 3) * 2;
  const width = b.readUIntLE(frame.at + 6, 3) + 1;
  const height = b.readUIntLE(frame.at + 9, 3) + 1;
  if (x + width > canvas.width || y + height > canvas.height) return false;
  const inner = riffChunks(b, frame.at + 16, frame.at + frame.length);
  const size = inner && firstBitstreamSize(b, inner);
  return size?.width === width && size.height === height;
}

const firstBitstreamSize = (b: Buffer, chunks: readonly Chunk[]): ImageSize => {
  const image = chunks.find((chunk) => chunk.type === "VP8 " || chunk.type === "VP8L");
  return image && bitstreamSize(b, image);
};

/** The chunks from `at` to `end`, each whole (padded to an even length), or undefined if cut. */
function riffChunks(b: Buffer, at: number, end: number): Chunk[] | undefined {
  const chunks: Chunk[] = [];
  let next = at;
  while (next + 8 <= end) {
    const length = b.readUInt32LE(next + 4);
    if (next + 8 + length > end) return undefined;
    chunks.push({ type: b.toString("latin1", next, next + 4), at: next + 8, length });
    next += 8 + length + (length & 1);
  }
  return next >= end ? chunks : undefined;
}

/** The size a VP8 (lossy) or VP8L (lossless) bitstream's own header gives. */
function bitstreamSize(b: Buffer, chunk: Chunk): ImageSize {
  const at = chunk.at;
  if (chunk.type === "VP8 ") {
    if (chunk.length < 10 || b[at + 3] !== 0x9d || b[at + 4] !== 0x01 || b[at + 5] !== 0x2a)
      return undefined;
    return { width: b.readUInt16LE(at + 6) & 0x3fff, height: b.readUInt16LE(at + 8) & 0x3fff };
  }
  if (chunk.type === "VP8L") {
    if (chunk.length < 5 || b[at] !== 0x2f) return undefined;
    const bits = b.readUInt32LE(at + 1);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  return undefined;
}

/** CRC-32 as PNG computes it: zlib's where Node has it (20.15 and later), a table otherwise. */
function crc32(bytes: Buffer): number {
  if (typeof zlib.crc32 === "function") return zlib.crc32(bytes);
  crcTable ??= makeCrcTable();
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (crcTable[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Made at the first use, never on a Node with zlib's: building it is a millisecond at start-up. */
let crcTable: Uint32Array | undefined;

function makeCrcTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}
