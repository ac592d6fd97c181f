import { describe, expect, it } from "vitest";
import { foldLines } from "../src/cli/terminal/fold.js";
import { diffLines } from "../src/line-diff.js";
import { changeDiff, diffView } from "../src/render/diff.js";
import { styles } from "../src/render/style.js";

/** What the terminal shows under a tool line: a diff for an edit or a write, bash's head and tail. */

const plain = styles(false);
const colour = styles(true);

describe("the diff of an edit or a write", () => {
  it("is a unified diff of the replaced text at the line the edit names", () => {
    const call = {
      id: "t1",
      name: "edit",
      input: {
        path: "a.ts",
        oldText: "const a = 1;\nconst b = 2;\nconst c = 3;",
        newText: "const a = 1;\nconst b = 20;\nconst c = 3;",
      },
    };
    expect(changeDiff(call, "edited a.ts: replaced 1 occurrence at line 7")).toEqual([
      "--- a.ts",
      "+++ a.ts",
      "@@ -7,3 +7,3 @@",
      " const a = 1;",
      "-const b = 2;",
      "+const b = 20;",
      " const c = 3;",
    ]);
  });

  it("is shown behind the gutter, coloured (removed red, added green, hunks cyan) and bounded", () => {
    const lines = ["--- a", "+++ a", "@@ -1 +1 @@", "-x\x1b[2J", "+y", " z"];
    expect(diffView(lines, colour, 80)).toEqual([
      "    │ \x1b[2m--- a\x1b[22m",
      "    │ \x1b[2m+++ a\x1b[22m",
      "    │ \x1b[36m@@ -1 +1 @@\x1b[39m",
      "    │ \x1b[31m-x␛[2J\x1b[39m",
      "    │ \x1b[32m+y\x1b[39m",
      "    │  z",
    ]);
    const long = [
      "--- a",
      "+++ a",
      "@@ -1,100 +1,100 @@",
      ...Array.from({ length: 100 }, (_, i) => `+${i}`),
    ];
    const shown = diffView(long, plain, 80);
    expect(shown).toHaveLength(41);
    expect(shown.at(-1)).toBe("    │ … 63 more lines of the diff");
    expect(diffView(["+".padEnd(300, "x")], plain, 40)[0]?.length).toBeLessThanOrEqual(39);
  });

  it("says how many places an edit of every occurrence changed", () => {
    const call = {
      id: "t1",
      name: "edit",
      input: { path: "a", oldText: "x", newText: "y", replaceAll: true },
    };
    expect(changeDiff(call, "edited a: replaced 3 occurrences at line 2")?.at(2)).toBe(
      "@@ -2 +2 @@ (the first of 3 occurrences)",
    );
  });

  it("shows a created file as every line added, and a replaced one as its new content", () => {
    const created = { id: "t1", name: "write", input: { path: "n.txt", content: "one\ntwo\n" } };
    expect(changeDiff(created, "created n.txt (8 bytes)")).toEqual([
      "--- /dev/null",
      "+++ n.txt",
      "@@ -0,0 +1,2 @@",
      "+one",
      "+two",
    ]);
    const replaced = { id: "t1", name: "write", input: { path: "n.txt", content: "three" } };
    expect(changeDiff(replaced, "replaced n.txt (5 bytes)")).toEqual([
      "+++ n.txt (the whole file, replaced; its old content is not shown)",
      "+three",
    ]);
  });

  it("is none for another tool or a result it cannot read", () => {
    const bash = { id: "t1", name: "bash", input: { command: "ls" } };
    expect(changeDiff(bash, "a\nb")).toBeUndefined();
    const odd = { id: "t1", name: "edit", input: { path: "a", oldText: 3, newText: "y" } };
    expect(changeDiff(odd, "edited a: replaced 1 occurrence at line 1")).toBeUndefined();
  });

  it("diffs by lines, keeping what both sides share", () => {
    expect(diffLines(["a", "b", "c", "d"], ["a", "c", "d", "e"])).toEqual([
      " a",
      "-b",
      " c",
      " d",
      "+e",
    ]);
  });

  it("gives up on lines in common for very long sides and shows all old then all new", () => {
    const old = Array.from({ length: 3000 }, (_, i) => `o${i}`);
    const next = Array.from({ length: 3000 }, (_, i) => `n${i}`);
    const diff = diffLines(old, next);
    expect(diff).toHaveLength(6000);
    expect(diff[0]).toBe("-o0");
    expect(diff[3000]).toBe("+n0");
  });
});

describe("folding a tool's output", () => {
  const numbered = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");

  it("keeps the head and the tail with tail lines, so the end of a command's output shows", () => {
    expect(foldLines(`${numbered}\n`, 80, { tail: 4 })).toEqual([
      "    │ line 1",
      "    │ line 2",
      "    │ line 3",
      "    │ line 4",
      "    │ … 12 more lines",
      "    │ line 17",
      "    │ line 18",
      "    │ line 19",
      "    │ line 20",
    ]);
  });

  it("shows everything when head and tail would leave one line out", () => {
    const nine = Array.from({ length: 9 }, (_, i) => `l${i}`).join("\n");
    expect(foldLines(nine, 80, { tail: 4 })).toHaveLength(9);
    expect(foldLines(`${nine}\nl9`, 80, { tail: 4 })).toHaveLength(9);
  });

  it("keeps only the head without tail lines", () => {
    expect(foldLines(numbered, 80).at(-1)).toBe("    │ … 16 more lines");
  });
});
