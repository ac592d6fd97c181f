import { describe, expect, it } from "vitest";
import { MarkdownStream } from "../src/render/markdown.js";
import { styles } from "../src/render/style.js";

/** Renders `pieces` as they would stream, and returns every write in order. */
function render(pieces: string[], colour: boolean): string[] {
  const writes: string[] = [];
  const markdown = new MarkdownStream(styles(colour), (text) => writes.push(text));
  for (const piece of pieces) markdown.push(piece);
  markdown.end();
  return writes;
}

const E = "\x1b[";

describe("Markdown for the terminal", () => {
  it("frames a code block with its language, and writes each line once it is complete", () => {
    expect(
      render(["Here:\n```ty", "pescript\nconst a = 1;\n\tre", "turn a;\n```\nDone."], false),
    ).toEqual([
      "Here:\n",
      "┌─ typescript\n",
      "│ const a = 1;\n",
      "│ \treturn a;\n",
      "└─\n",
      "Done.\n",
    ]);
  });

  it("styles headings, lists, quotes, rules, inline code, emphasis and links with colour", () => {
    const text =
      "# Title\n## Part **two**\n- an `npm test` item\n  * *nested* and __strong__\n1. first\n> quoted\n---\nSee [the docs](https://example.com/d) or <https://x.org>.\n";
    expect(render([text], true).join("")).toBe(
      [
        `${E}4m${E}1mTitle${E}22m${E}24m`,
        `${E}1mPart ${E}1mtwo${E}22m${E}22m`,
        `• an ${E}36mnpm test${E}39m item`,
        `  • ${E}3mnested${E}23m and ${E}1mstrong${E}22m`,
        "1. first",
        `${E}2m│${E}22m ${E}3mquoted${E}23m`,
        `${E}2m${"─".repeat(40)}${E}22m`,
        `See ${E}4mthe docs${E}24m ${E}2m(https://example.com/d)${E}22m or ${E}4mhttps://x.org${E}24m.`,
        "",
      ].join("\n"),
    );
  });

  it("keeps the marks that carry the meaning when there is no colour", () => {
    expect(render(["# Title\n- a **b** `c` [d](e)\n"], false)).toEqual([
      "# Title\n",
      "• a **b** `c` [d](e)\n",
    ]);
  });

  it("leaves marks inside inline code and words with underscores as they are", () => {
    expect(render(["`**x**` snake_case_name\n"], true)).toEqual([
      `${E}36m**x**${E}39m snake_case_name\n`,
    ]);
  });

  it("shows escape sequences from the text instead of obeying them, in every kind of line", () => {
    const evil = "\x1b[31m";
    const text = `# H${evil}\n- i${evil}\n\`c${evil}\` [l${evil}](u${evil})\n\`\`\`sh${evil}\nx${evil}\r\n\`\`\`\n`;
    const out = render([text], true).join("");
    expect(out).not.toContain(evil);
    expect(out.replaceAll(new RegExp(`${String.fromCharCode(27)}\\[\\d+m`, "g"), "")).toBe(
      "H␛[31m\n• i␛[31m\nc␛[31m l␛[31m (u␛[31m)\n┌─ sh␛[31m\n│ x␛[31m\n└─\n",
    );
  });

  it("ends an unfinished last line and closes a code block left open", () => {
    expect(render(["```\nopen", " code"], false)).toEqual(["┌─\n", "│ open code\n", "└─\n"]);
  });

  it("writes nothing until a line is complete", () => {
    const writes: string[] = [];
    const markdown = new MarkdownStream(styles(false), (text) => writes.push(text));
    markdown.push("no newline yet");
    expect(writes).toEqual([]);
    expect(markdown.waiting).toBe(true);
    markdown.push("\n");
    expect(writes).toEqual(["no newline yet\n"]);
    expect(markdown.waiting).toBe(false);
  });
});
