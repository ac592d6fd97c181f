import { describe, expect, it } from "vitest";
import { commandForQuestion } from "../src/render/columns.js";
import { visible } from "../src/visible.js";

describe("visible: text made safe for a terminal", () => {
  it.each([
    ["plain text stays as it is", "ls -la src/", "ls -la src/"],
    ["accents, CJK and emoji stay", "café 漢字 👍🏽 👨‍👩‍👧", "café 漢字 👍🏽 👨‍👩‍👧"],
    ["ESC of a CSI sequence", "\x1b[2K\rAllow bash: ls", "␛[2K␍Allow bash: ls"],
    ["OSC with BEL (window title, hyperlink)", "\x1b]0;title\x07x", "␛]0;title␇x"],
    ["a newline on a single line", "ls\nrm -rf ~", "ls␊rm -rf ~"],
    ["a tab on a single line", "a\tb", "a␉b"],
    ["NUL, backspace, form feed", "a\x00b\x08c\x0cd", "a␀b␈c␌d"],
    ["DEL", "a\x7fb", "a␡b"],
    ["C1 CSI and NEL", "a\u009b2Kb\u0085c", "a<U+009B>2Kb<U+0085>c"],
    ["right-to-left override", "evil\u202egnp.exe", "evil<U+202E>gnp.exe"],
    [
      "every bidi embedding, override and isolate",
      "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
      "<U+202A><U+202B><U+202C><U+202D><U+202E><U+2066><U+2067><U+2068><U+2069>",
    ],
    ["LRM, RLM and the Arabic letter mark", "\u200e\u200f\u061c", "<U+200E><U+200F><U+061C>"],
    ["zero-width space and BOM", "a\u200bb\ufeffc", "a<U+200B>b<U+FEFF>c"],
    ["invisible tag characters", "x\u{e0041}\u{e0042}", "x<U+E0041><U+E0042>"],
    ["line and paragraph separators", "a\u2028b\u2029c", "a<U+2028>b<U+2029>c"],
    [
      "spaces other than the plain one, and characters that draw nothing",
      "a\u00a0b\u3000c\u3164d\u115fe\u2800f\u2007g",
      "a<U+00A0>b<U+3000>c<U+3164>d<U+115F>e<U+2800>f<U+2007>g",
    ],
  ])("%s", (_name, input, shown) => {
    expect(visible(input)).toBe(shown);
  });

  it("keeps newlines and tabs in multi-line text, and reads CRLF as a newline", () => {
    expect(visible("one\n\ttwo\r\nthree\rx\x1b[31m", { multiline: true })).toBe(
      "one\n\ttwo\nthree␍x␛[31m",
    );
  });

  it("leaves no control or format character in anything it returns", () => {
    let all = "";
    for (let code = 0; code < 0x3000; code++) all += String.fromCodePoint(code);
    all += "\u{e0001}\u{e007f}\ufeff\ufff9\ufffb";
    const shown = visible(all, { multiline: true });
    const left = [...shown.replace(/[\n\t]/g, "").replace(/\u200d/g, "")].filter((c) =>
      /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(c),
    );
    expect(left).toEqual([]);
  });
});

describe("commandForQuestion: a command shown whole before the person answers", () => {
  it("shows the zero-width joiner and variation selectors, which can split a word invisibly", () => {
    expect(commandForQuestion("g\u200dit pu\ufe0fsh")).toEqual({
      inline: "g<U+200D>it pu<U+FE0F>sh",
    });
    expect(commandForQuestion("a\u{e0100}b\nc\u200d")).toEqual({
      block: ["  │ a<U+E0100>b", "  │ c<U+200D>"],
      summary: "2 lines, 6 characters",
    });
  });

  it("keeps a short one-line command on the question's line", () => {
    expect(commandForQuestion("git status")).toEqual({ inline: "git status" });
    expect(commandForQuestion("a\x1b[2Kb")).toEqual({ inline: "a␛[2Kb" });
  });

  it("shows a long run of blanks as a count, so nothing can be pushed out of sight", () => {
    const padded = `echo PAYLOAD > pwned;${" ".repeat(20_000)}git status`;
    expect(commandForQuestion(padded)).toEqual({
      block: ["  │ echo PAYLOAD > pwned;[20000 blanks]git status"],
      summary: "1 line, 20031 characters",
    });
    expect(commandForQuestion(`a${"\t ".repeat(10)}b`)).toEqual({
      block: ["  │ a[20 blanks]b"],
      summary: "1 line, 22 characters",
    });
  });

  it("shows every line of a multi-line command behind a gutter, and empty runs as a count", () => {
    const script = `cat > f <<EOF\nAllow bash: ls\n${"\n".repeat(50)}EOF\r\nrm -rf x`;
    expect(commandForQuestion(script)).toEqual({
      block: [
        "  │ cat > f <<EOF",
        "  │ Allow bash: ls",
        "  │ [50 empty lines]",
        "  │ EOF␍",
        "  │ rm -rf x",
      ],
      summary: "54 lines, 92 characters",
    });
  });

  it("moves a long one-line command off the question's line", () => {
    const long = `echo ${"x".repeat(300)}`;
    expect(commandForQuestion(long)).toEqual({
      block: [`  │ ${long}`],
      summary: "1 line, 305 characters",
    });
  });
});
