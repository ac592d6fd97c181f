import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { firstInvalidUtf8, wholeCharacters } from "../src/tools/utf8.js";

const fatal = new TextDecoder("utf-8", { fatal: true });
const decodes = (bytes: Uint8Array) => {
  try {
    fatal.decode(bytes);
    return true;
  } catch {
    return false;
  }
};

describe("UTF-8 checks", () => {
  it("finds the first invalid byte of known bad forms", () => {
    const cases: [number[], number][] = [
      [[0x61, 0xe9, 0x62], 1], // Latin-1 é
      [[0x61, 0xc0, 0x80], 1], // overlong NUL
      [[0xe0, 0x80, 0x80], 0], // overlong 3-byte
      [[0x61, 0xed, 0xa0, 0x80], 1], // a surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
      [[0x61, 0x62, 0xe2, 0x82], 2], // cut at the end
      [[0xf0, 0x9f, 0x98, 0x80, 0x80], 4], // a stray continuation byte
      [[0x68, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80], -1], // "hé😀"
    ];
    expect(cases.map(([bytes]) => firstInvalidUtf8(Uint8Array.from(bytes)))).toEqual(
      cases.map(([, offset]) => offset),
    );
  });

  it("agrees with a fatal TextDecoder on random bytes, and the bytes before the offset decode", () => {
    const bytes = fc.uint8Array({ maxLength: 40 }).map((array) =>
      // Bias towards bytes that start or continue sequences.
      array.map((byte) => (byte < 0x40 ? 0x80 | byte : byte)),
    );
    fc.assert(
      fc.property(bytes, (array) => {
        const offset = firstInvalidUtf8(array);
        expect(offset === -1).toBe(decodes(array));
        if (offset !== -1) {
          expect(decodes(array.subarray(0, offset))).toBe(true);
          expect(decodes(array.subarray(0, offset + 4))).toBe(false);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("cuts valid UTF-8 only between characters", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 30 }), fc.nat(), (text, at) => {
        const bytes = Buffer.from(text);
        const cut = bytes.subarray(0, at % (bytes.length + 1));
        const kept = cut.subarray(0, wholeCharacters(cut)).toString("utf8");
        expect(text.startsWith(kept)).toBe(true);
        expect(cut.length - wholeCharacters(cut)).toBeLessThan(4);
      }),
      { numRuns: 2000 },
    );
  });
});
