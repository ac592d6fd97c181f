import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeLine, withLine } from "../src/session/encode.js";

const stringified = (record: unknown, prefix = "") =>
  Buffer.from(`${prefix}${JSON.stringify(record)}\n`);

describe("encodeLine", () => {
  it("writes the bytes JSON.stringify writes, for records with long strings cut anywhere", () => {
    // Long strings of every kind of character (lone surrogates and control characters too),
    // escaped in slices as short as one unit, so every cut point is tried.
    const text = fc.string({ unit: "binary", maxLength: 40 });
    const value = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        text,
        fc.constantFrom(null, true, false, 0, -1.5, 1e21, Number.NaN, undefined),
        fc.array(tie("value"), { maxLength: 4 }),
        fc.dictionary(text, tie("value"), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(
        fc.dictionary(text, value, { maxKeys: 5 }),
        fc.integer({ min: 1, max: 8 }),
        text,
        (record, slice, prefix) => {
          expect(encodeLine(record, prefix, slice)).toEqual(stringified(record, prefix));
        },
      ),
      { seed: 20261204, numRuns: 2000 },
    );
  });

  it("applies an escape to the JSON text, never to the prefix, as if applied to the whole line", () => {
    // U+2028 and its kin, in keys, short values and long strings cut anywhere.
    const text = fc.string({
      unit: fc.constantFrom("a", "\u2028", "\u0085", "\n", "\\", '"'),
      maxLength: 30,
    });
    const escaped = (json: string) =>
      json.replace(/[\u0085\u2028]/g, (char) => `<${char.charCodeAt(0)}>`);
    fc.assert(
      fc.property(
        fc.dictionary(text, fc.oneof(text, fc.array(text, { maxLength: 3 })), { maxKeys: 4 }),
        fc.integer({ min: 1, max: 8 }),
        text,
        (record, slice, prefix) => {
          const line = Buffer.from(`${prefix}${escaped(JSON.stringify(record))}\n`);
          expect(encodeLine(record, prefix, slice, escaped)).toEqual(line);
        },
      ),
      { seed: 20261205, numRuns: 1000 },
    );
  });

  it("keeps a surrogate pair whole when a slice would end between its halves", () => {
    const record = { type: "message", content: "a\u{1F600}b\u{1F600}\u{1F600}" };
    for (const slice of [1, 2, 3, 4])
      expect(encodeLine(record, "", slice).toString()).toBe(`${JSON.stringify(record)}\n`);
  });

  it("writes a record with a long answer in the default slices as JSON.stringify does", () => {
    const answer = `${"x".repeat(3 << 20)}\u00e9\n"\\${"\u{1F600}".repeat(1 << 19)}`;
    const record = {
      type: "message",
      message: { role: "assistant", content: answer, toolCalls: [] },
    };
    expect(encodeLine(record, "\n").equals(stringified(record, "\n"))).toBe(true);
  });

  it("hands a line with a long string to its user as JSON.stringify writes it, then gives its memory back", () => {
    const answer = `${"line of text\n".repeat(1 << 18)}\u00e9"\\\u0001${"\u{1F600}".repeat(1 << 16)}\uD800`;
    const record = { type: "message", message: { role: "assistant", content: answer } };
    let seen: { bytes: Buffer; view: Buffer } | undefined;
    const returned = withLine(record, "\n", (line) => {
      seen = { bytes: Buffer.from(line), view: line };
      return "written";
    });
    expect(returned).toBe("written");
    expect(seen?.bytes.equals(stringified(record, "\n"))).toBe(true);
    // The memory was given back when the user returned: the view it had now holds nothing.
    expect(seen?.view.length).toBe(0);
  });

  it("hands a line without a long string to its user as JSON.stringify writes it", () => {
    const record = { type: "usage", inputTokens: 1, note: "short \u2713" };
    expect(withLine(record, "", (line) => Buffer.from(line))).toEqual(stringified(record));
  });
});
