import { describe, expect, it } from "vitest";
import { PasteReader, pasteNotice } from "../src/cli/paste.js";

const start = "\x1b[200~";
const end = "\x1b[201~";

describe("the paste reader of a terminal's input", () => {
  it("passes typed keys through and takes a bracketed paste as one piece", () => {
    const reader = new PasteReader();
    expect(reader.feed(`ab${start}one\rtwo\r\nthree${end}c`)).toEqual([
      { kind: "keys", text: "ab" },
      { kind: "paste", text: "one\ntwo\nthree", cut: 0 },
      { kind: "keys", text: "c" },
    ]);
  });

  it("finds the markers when a read splits them", () => {
    const reader = new PasteReader();
    const reads = ["x\x1b[", "20", "0~a\r", "b\x1b", "[201", "~y"];
    const pieces = reads.flatMap((read) => reader.feed(read));
    expect(pieces).toEqual([
      { kind: "keys", text: "x" },
      { kind: "paste", text: "a\nb", cut: 0 },
      { kind: "keys", text: "y" },
    ]);
  });

  it("keeps a lone Escape a key, not the start of a marker", () => {
    expect(new PasteReader().feed("\x1b")).toEqual([{ kind: "keys", text: "\x1b" }]);
  });

  it("tells Alt-Enter apart from the keys around it", () => {
    expect(new PasteReader().feed("first\x1b\rsecond")).toEqual([
      { kind: "keys", text: "first" },
      { kind: "newline" },
      { kind: "keys", text: "second" },
    ]);
  });

  it("bounds a paste and counts what it cut", () => {
    const reader = new PasteReader(10);
    expect(reader.feed(`${start}0123456789abc`)).toEqual([]);
    expect(reader.feed(`def${end}`)).toEqual([{ kind: "paste", text: "0123456789", cut: 6 }]);
  });

  it("reads a paste of a megabyte in pieces, whole", () => {
    const reader = new PasteReader();
    const line = `${"x".repeat(499)}\r`;
    const body = line.repeat(2_000);
    const pieces = [reader.feed(start)];
    for (let at = 0; at < body.length; at += 4096)
      pieces.push(reader.feed(body.slice(at, at + 4096)));
    pieces.push(reader.feed(end));
    expect(pieces.flat()).toEqual([{ kind: "paste", text: body.replaceAll("\r", "\n"), cut: 0 }]);
  });

  it("says how big a paste is in one line", () => {
    expect(pasteNotice("a\nb\nc", 0)).toBe("[pasted 3 lines, 5 characters: Enter sends]");
    expect(pasteNotice("a\n", 0)).toBe("[pasted 1 line, 2 characters: Enter sends]");
    expect(pasteNotice("x".repeat(1500), 20)).toBe(
      "[pasted 1 line, 1,500 characters, 20 more cut: Enter sends]",
    );
  });
});
