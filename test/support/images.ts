import { crc32, deflateSync } from "node:zlib";

/**
 * Test images made in code, each a whole, decodable file (`test/images.test.ts` has Chromium
 * decode every one): a PNG of any size built chunk by chunk, a baseline JPEG (one grey 8x8 block,
 * one-symbol Huffman tables), and the smallest GIF and lossless WebP.
 */

const chunk = (type: string, data: Buffer) => {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
};

/** A red RGB PNG of `width` x `height` pixels; `comment` bytes of a `tEXt` chunk make it bigger. */
export function png(width: number, height: number, comment = 0): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, Buffer.from([255, 0, 0]))]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    ...(comment > 0 ? [chunk("tEXt", Buffer.alloc(comment, "a"))] : []),
    chunk("IDAT", pixels),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * A PNG whose chunks are whole and checksummed but whose pixel data is no zlib stream: what a
 * header check takes and a decoder (a provider's) cannot process.
 */
export function undecodablePng(width: number, height: number): Buffer {
  const header = png(width, height).subarray(8, 8 + 25);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    header,
    chunk("IDAT", Buffer.from("these bytes are not deflated")),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A grey baseline JPEG of `width` x `height` pixels (at most 8 a side: one block). */
export function jpeg(width = 2, height = 2): Buffer {
  const frame = [8, height >> 8, height & 255, width >> 8, width & 255, 1, 1, 0x11, 0];
  const table = (tableClass: number) => [0xff, 0xc4, 0, 20, tableClass, 1, ...Array(15).fill(0), 0];
  return Buffer.from([
    ...[0xff, 0xd8],
    ...[0xff, 0xdb, 0, 67, 0, ...Array(64).fill(1)],
    ...[0xff, 0xc0, 0, 11, ...frame],
    ...table(0x00),
    ...table(0x10),
    ...[0xff, 0xda, 0, 8, 1, 1, 0, 0, 63, 0],
    0x3f,
    ...[0xff, 0xd9],
  ]);
}

/** A 1x1 GIF. */
export const gif = () =>
  Buffer.from("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64");

/** A 1x1 lossless WebP. */
export const webp = () => Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64");
