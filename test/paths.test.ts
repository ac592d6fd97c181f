import { isAbsolute, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { within } from "../src/paths.js";

/** `within` against its definition through `path.relative`, over paths of every shape. */

const byRelative = (folder: string, path: string) => {
  const rel = relative(folder, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

const names = ["a", "b", "ab", "", ".", "..", "...", "..a", "a..", ".a", " ", "a b", "\\", "é"];

/** A path from a seeded generator: 0 to 5 names, absolute or not, with or without a final `/`. */
function pathOf(next: () => number): string {
  const parts = Array.from(
    { length: Math.floor(next() * 6) },
    () => names[Math.floor(next() * names.length)],
  );
  const text = parts.join("/");
  const lead = next() < 0.9 ? "/" : "";
  const tail = next() < 0.1 ? "/" : "";
  return `${lead}${text}${tail}`;
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

describe("within", () => {
  it("says what path.relative says for every pair of paths", () => {
    const next = seeded(32);
    const differ: string[] = [];
    let inside = 0;
    for (let i = 0; i < 40_000; i++) {
      const folder = pathOf(next);
      // Half the paths begin with the folder, so both answers are met often.
      const path = next() < 0.5 ? `${folder}${pathOf(next)}` : pathOf(next);
      const expected = byRelative(folder, path);
      if (expected) inside++;
      if (within(folder, path) !== expected) differ.push(`${folder} | ${path}`);
    }
    expect(differ).toEqual([]);
    expect(inside).toBeGreaterThan(5_000);
  });

  it("holds a folder's own names and refuses its neighbours", () => {
    const cases: [string, string, boolean][] = [
      ["/a/b", "/a/b", true],
      ["/a/b", "/a/b/c", true],
      ["/a/b", "/a/b/..c", true],
      ["/a/b", "/a/bc", false],
      ["/a/b", "/a", false],
      ["/a/b", "/a/b/../c", false],
      ["/a/b", "/a/b/c/../../b/d", true],
      ["/", "/", true],
      ["/", "/a", true],
      ["/a", "/", false],
      ["/a/", "/a/b", true],
    ];
    expect(cases.map(([folder, path]) => within(folder, path))).toEqual(
      cases.map(([, , inside]) => inside),
    );
  });
});
