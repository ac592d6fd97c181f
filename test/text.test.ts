import { describe, expect, it } from "vitest";
import { isValidCallId, newCallId, safeToolName } from "../src/history/call-ids.js";
import { headOf, tailOf, wellFormed } from "../src/text.js";

const emoji = "😀"; // two UTF-16 units

describe("cutting text on code points", () => {
  it("never ends a head inside a surrogate pair", () => {
    expect(headOf(`ab${emoji}cd`, 3)).toBe("ab");
    expect(headOf(`ab${emoji}cd`, 4)).toBe(`ab${emoji}`);
    expect(headOf("abc", 10)).toBe("abc");
  });

  it("never starts a tail inside a surrogate pair", () => {
    expect(tailOf(`ab${emoji}cd`, 3)).toBe("cd");
    expect(tailOf(`ab${emoji}cd`, 4)).toBe(`${emoji}cd`);
  });

  it("replaces lone surrogates, either half, and keeps pairs", () => {
    expect(wellFormed(`a\ud83db`)).toBe("a\ufffdb");
    expect(wellFormed(`a\ude00b`)).toBe("a\ufffdb");
    expect(wellFormed(`\ude00\ud83d`)).toBe("\ufffd\ufffd");
    expect(wellFormed(`x${emoji}y`)).toBe(`x${emoji}y`);
  });
});

describe("tool call ids and names", () => {
  it("accepts provider-valid ids and refuses the rest", () => {
    expect(isValidCallId("toolu_01A09q90qw90lq917835lq9")).toBe(true);
    expect(isValidCallId(newCallId())).toBe(true);
    for (const id of ["", "has space", "a".repeat(41), "ü", "id\n"]) {
      expect(isValidCallId(id)).toBe(false);
    }
  });

  it("keeps a valid name and cleans any other", () => {
    expect(safeToolName("read")).toBe("read");
    expect(safeToolName("read file!")).toBe("read_file_");
    expect(safeToolName("")).toBe("unnamed_tool");
    expect(safeToolName("x".repeat(70))).toBe("x".repeat(64));
  });
});
