import { describe, expect, it } from "vitest";
import { checkImage } from "../src/images.js";
import { gif, png, webp } from "./support/images.js";

/** Headers that lie: the size an image says is not the size it is, or its bytes are damaged. */

const u16 = (value: number) => [value & 255, value >> 8];
const u24 = (value: number) => [value & 255, (value >> 8) & 255, value >> 16];
const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return [...bytes];
};

/** A GIF whose logical screen is `screen` and whose one frame stands at `frame` (x, y, w, h). */
function gifWithFrame(screen: [number, number], frame: [number, number, number, number]) {
  const [x, y, w, h] = frame;
  return Buffer.from([
    ...Buffer.from("GIF89a", "latin1"),
    ...u16(screen[0]),
    ...u16(screen[1]),
    0,
    0,
    0,
    ...[0x21, 0xf9, 4, 0, 0, 0, 0, 0],
    0x2c,
    ...u16(x),
    ...u16(y),
    ...u16(w),
    ...u16(h),
    0,
    2,
    ...[2, 0x4c, 0x01, 0],
    0x3b,
  ]);
}

/** The VP8L chunk of the 1x1 WebP, saying `width` x `height`. */
function vp8l(width: number, height: number): Buffer {
  const chunk = Buffer.from(webp().subarray(12));
  const bits = chunk.readUInt32LE(9);
  chunk.writeUInt32LE(((bits & ~0xfffffff) | (width - 1) | ((height - 1) << 14)) >>> 0, 9);
  return chunk;
}

/** An extended WebP: a VP8X canvas of `width` x `height`, then `chunks`. */
function vp8x(width: number, height: number, ...chunks: Buffer[]): Buffer {
  const head = Buffer.from([
    ...Buffer.from("VP8X", "latin1"),
    ...u32(10),
    0,
    0,
    0,
    0,
    ...u24(width - 1),
    ...u24(height - 1),
  ]);
  const body = Buffer.concat([Buffer.from("WEBP", "latin1"), head, ...chunks]);
  return Buffer.concat([Buffer.from("RIFF", "latin1"), Buffer.from(u32(body.length)), body]);
}

const size = (bytes: Buffer) => {
  const image = checkImage(bytes);
  return "part" in image ? image.placeholder.replace(/, [^,]*\]$/, "]") : image;
};

describe("checkImage of an image whose header lies", () => {
  it("bounds a GIF by its frames as well as its logical screen", () => {
    expect([
      size(gif()),
      size(gifWithFrame([4, 3], [1, 1, 3, 2])),
      size(gifWithFrame([1, 1], [0, 0, 9000, 9000])),
      size(gifWithFrame([1, 1], [7990, 0, 20, 1])),
      size(gifWithFrame([1, 1], [0, 0, 9000, 9000]).subarray(0, 30)),
    ]).toEqual([
      "[image: image/gif, 1x1]",
      "[image: image/gif, 4x3]",
      { kind: "pixels", width: 9000, height: 9000 },
      { kind: "pixels", width: 8010, height: 1 },
      { kind: "not_whole", typeName: "GIF" },
    ]);
  });

  it("refuses a WebP whose VP8X canvas disagrees with its bitstream's size", () => {
    expect([
      size(vp8x(5, 7, vp8l(5, 7))),
      size(vp8x(1, 1, vp8l(9000, 9000))),
      size(vp8x(9000, 9000, vp8l(1, 1))),
      size(vp8x(1, 1)),
    ]).toEqual([
      "[image: image/webp, 5x7]",
      { kind: "not_whole", typeName: "WebP" },
      { kind: "not_whole", typeName: "WebP" },
      { kind: "not_whole", typeName: "WebP" },
    ]);
  });

  it("refuses a PNG whose critical chunks' checksums are wrong, not one whose comment's is", () => {
    const header = png(2, 2);
    header[29] = (header[29] as number) ^ 0xff;
    const pixels = png(2, 2);
    pixels[pixels.length - 13] = (pixels[pixels.length - 13] as number) ^ 0xff;
    // A wrong CRC on an ancillary chunk (tEXt) is skipped, as decoders skip it.
    const comment = png(2, 2, 4);
    comment[33 + 8 + 4] = (comment[33 + 8 + 4] as number) ^ 0xff;
    expect([size(png(2, 2)), size(header), size(pixels), size(comment)]).toEqual([
      "[image: image/png, 2x2]",
      { kind: "not_whole", typeName: "PNG" },
      { kind: "not_whole", typeName: "PNG" },
      "[image: image/png, 2x2]",
    ]);
  });
});
