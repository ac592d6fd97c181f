import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Bytes } from "../src/bytes.js";
import { StreamedText } from "../src/streamed-text.js";

const joined = (pieces: string[], spill?: number, reserve?: (max: number) => Bytes | undefined) => {
  const text = new StreamedText(spill, reserve);
  for (const piece of pieces) text.add(piece);
  return { text: text.toString(), length: text.length };
};

describe("StreamedText", () => {
  it("gives back the pieces joined, unit for unit, whether held as a string or in a buffer", () => {
    // Every kind of unit: Latin-1, wide, lone surrogates, and pairs split between two pieces.
    const piece = fc.string({ unit: "binary", maxLength: 12 });
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 30 }),
        fc.integer({ min: 0, max: 40 }),
        (pieces, spill) => {
          expect(joined(pieces, spill)).toEqual({
            text: pieces.join(""),
            length: pieces.join("").length,
          });
        },
      ),
      { seed: 20261205, numRuns: 3000 },
    );
  });

  it("keeps a surrogate pair split between pieces, and a lone one, as they came", () => {
    const pieces = ["ab\uD83D", "\uDE00c", "\uDC00", "é".repeat(5), "\uD800"];
    expect(joined(pieces, 2)).toEqual({ text: "ab\u{1F600}c\uDC00ééééé\uD800", length: 12 });
  });

  it("gives back a long answer in the default size whole: Latin-1 first, then wide", () => {
    const narrow = "An ordinary line, with é and ÿ.\n".repeat(1 << 16);
    const pieces = [narrow, narrow, "wide \u{1F600} ✓\n", narrow];
    expect(joined(pieces).text === pieces.join("")).toBe(true);
  });

  it("keeps the text as a string where no memory can be reserved", () => {
    const pieces = ["abc", "d\u00e9f", "\u{1F600}", "\uD800", "xyz"];
    let asked = 0;
    const refuse = () => {
      asked++;
      return undefined;
    };
    expect(joined(pieces, 2, refuse)).toEqual({ text: pieces.join(""), length: 12 });
    // Asked once: a refusal is not asked again for every piece.
    expect(asked).toBe(1);
  });

  it("keeps the text whole where memory for its wide units cannot be reserved", () => {
    let asked = 0;
    const once = (max: number) => (asked++ === 0 ? Bytes.reserve(max) : undefined);
    const pieces = ["abc", "d\u00e9f", "gh", "wide \u{1F600}", "\uDC00 and more"];
    expect(joined(pieces, 4, once)).toEqual({ text: pieces.join(""), length: 25 });
    expect(asked).toBe(2);
  });

  it("is empty until a piece comes, and an empty piece adds nothing", () => {
    expect(joined([])).toEqual({ text: "", length: 0 });
    expect(joined(["", ""], 0)).toEqual({ text: "", length: 0 });
  });

  it("gives the same string when read again", () => {
    const text = new StreamedText(1);
    text.add("abc");
    text.add("déf");
    expect([text.toString(), text.toString()]).toEqual(["abcdéf", "abcdéf"]);
  });
});
