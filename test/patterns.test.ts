import { beforeAll, describe, expect, it } from "vitest";
import { compileIgnore } from "../src/tools/search/gitignore.js";
import { Pace } from "../src/tools/search/pace.js";
import { globMatcher } from "../src/tools/search/patterns.js";
import { loadRE2 } from "../src/tools/search/re2.js";
import { useWorkspace } from "./support/workspace.js";

/** [glob, path relative to the searched folder, matches] for `find` and `grep`'s `glob`. */
const globCases: [string, string, boolean][] = [
  ["*.ts", "a.ts", true],
  ["*.ts", "src/lib/a.ts", true],
  ["*.ts", "a.tsx", false],
  ["*", ".env", true],
  ["*.ts", ".hidden.ts", true],
  ["src/*.ts", "src/a.ts", true],
  ["src/*.ts", "src/lib/a.ts", false],
  ["src/**/*.ts", "src/a.ts", true],
  ["src/**/*.ts", "src/lib/deep/a.ts", true],
  ["src/**/*.ts", "src/.git/a.ts", true],
  ["src/**/*.ts", "other/src/a.ts", false],
  ["**/*.ts", "a.ts", true],
  ["**/*.ts", "x/y/a.ts", true],
  ["src/**", "src/a/b", true],
  ["src/**", "src", true],
  ["src/**", "srcx", false],
  ["a/**/b", "a/b", true],
  ["a/**/b", "a/x/y/b", true],
  ["a/**/b", "a/x/y/c", false],
  ["lib/*.ts", "lib/c.ts", true],
  ["lib/*.ts", "src/lib/c.ts", false],
  ["?.ts", "a.ts", true],
  ["?.ts", "ab.ts", false],
  ["x/a?b", "x/a/b", false],
  ["x/a*b", "x/a/b", false],
  ["[abc].ts", "b.ts", true],
  ["[!abc].ts", "b.ts", false],
  ["[!abc].ts", "d.ts", true],
  ["[^abc].ts", "d.ts", true],
  ["[a-c].ts", "c.ts", true],
  ["[a-c].ts", "d.ts", false],
  ["x/[!a]", "x//", false],
  ["[]a].ts", "].ts", true],
  ["[[:digit:]]*", "1a", true],
  ["[[:digit:]]*", "a1", false],
  ["*.{ts,js}", "a.js", true],
  ["*.{ts,js}", "a.md", false],
  ["{src,lib}/**/*.ts", "lib/x/a.ts", true],
  ["{src,lib}/**/*.ts", "test/a.ts", false],
  ["{a,b{c,d}}.txt", "bd.txt", true],
  ["{a}.txt", "{a}.txt", true],
  ["\\*.ts", "*.ts", true],
  ["\\*.ts", "a.ts", false],
  ["./src/*.ts", "src/a.ts", true],
  ["a.b", "axb", false],
  ["a+b(c)|$^", "a+b(c)|$^", true],
  ["*a*b", "aaab", true],
  ["é*.md", "ét.md", true],
  ["é*.md", "ecole.md", false],
  ["?.md", "é.md", true],
  ["caf\\\\xE9.txt", "caf\\xE9.txt", true],
];

/** [.gitignore text, path relative to its folder, is a folder, ignored]. */
const ignoreCases: [string, string, boolean, boolean][] = [
  ["*.log", "debug.log", false, true],
  ["*.log", "a/b/debug.log", false, true],
  ["*.log", "debug.txt", false, false],
  ["dist/", "dist", true, true],
  ["dist/", "dist", false, false],
  ["dist/", "src/dist", true, true],
  ["/build", "build", true, true],
  ["/build", "src/build", true, false],
  ["doc/frotz", "doc/frotz", false, true],
  ["doc/frotz", "a/doc/frotz", false, false],
  ["doc/frotz/", "doc/frotz", true, true],
  ["doc/frotz/", "doc/frotz", false, false],
  ["**/foo", "foo", false, true],
  ["**/foo", "a/b/foo", true, true],
  ["**/foo/bar", "x/foo/bar", false, true],
  ["abc/**", "abc/x", false, true],
  ["abc/**", "abc/x/y", true, true],
  ["abc/**", "abc", true, false],
  ["a/**/b", "a/b", false, true],
  ["a/**/b", "a/x/y/b", false, true],
  ["a/**/b", "x/a/b", false, false],
  ["# comment", "# comment", false, false],
  ["\\#file", "#file", false, true],
  ["\\!important", "!important", false, true],
  ["*.log\n!keep.log", "keep.log", false, false],
  ["*.log\n!keep.log", "x.log", false, true],
  ["!keep.log\n*.log", "keep.log", false, true],
  ["*\n!*.md\n", "a.md", false, false],
  ["*\n!*.md\n", "a.ts", false, true],
  ["foo   ", "foo", false, true],
  ["foo\\ ", "foo ", false, true],
  ["foo\\ ", "foo", false, false],
  ["\n\n*.tmp\n\n", "a.tmp", false, true],
  ["*.tmp\r\n", "a.tmp", false, true],
  ["node_modules/", "node_modules", true, true],
  ["node_modules/", "pkg/node_modules", true, true],
  ["node_modules", "node_modules", false, true],
  ["*.[oa]", "lib.a", false, true],
  ["*.[oa]", "lib.c", false, false],
  ["[abc", "[abc", false, false],
  ["{a,b}", "{a,b}", false, true],
  ["{a,b}", "a", false, false],
  ["/", "anything", false, false],
  ["*", ".env", false, true],
];

// The search tools load re2js before they compile a pattern; these tests call the compilers.
beforeAll(loadRE2);

describe("glob patterns", () => {
  it.each(globCases)("%s matches %s: %s", (glob, path, expected) => {
    expect(globMatcher(glob)(path)).toBe(expected);
  });

  it.each([
    ["[unclosed", 'invalid glob "[unclosed": unclosed ['],
    ["[z-a]", 'invalid glob "[z-a]": invalid range z-a'],
    ["[[:nope:]]", 'invalid glob "[[:nope:]]": unknown character class [:nope:]'],
    [
      "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v}",
      'invalid glob "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v}": braces expand to more than 1024 patterns',
    ],
  ])("rejects %s", (glob, message) => {
    expect(() => globMatcher(glob)).toThrow(message);
  });
});

describe(".gitignore rules", () => {
  it.each(ignoreCases)("%j ignores %s (folder: %s): %s", async (text, rel, isDir, expected) => {
    const rules = await compileIgnore(text, new Pace(undefined));
    const name = rel.slice(rel.lastIndexOf("/") + 1);
    expect(rules.decide(rel, name, isDir) ?? false).toBe(expected);
  });

  it("compiles thousands of rules into a few expressions with the same answers", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `gen-${i}-*.tmp`);
    const rules = await compileIgnore(
      [...lines, "literal.txt", "!gen-7-keep.tmp"].join("\n"),
      new Pace(undefined),
    );
    expect(rules.decide("gen-2999-x.tmp", "gen-2999-x.tmp", false)).toBe(true);
    expect(rules.decide("a/gen-0-.tmp", "gen-0-.tmp", false)).toBe(true);
    expect(rules.decide("gen-7-keep.tmp", "gen-7-keep.tmp", false)).toBe(false);
    expect(rules.decide("gen-3000-x.tmp", "gen-3000-x.tmp", false)).toBe(undefined);
    expect(rules.decide("literal.txt", "literal.txt", false)).toBe(true);
  });
});

const workspace = useWorkspace();

describe(".gitignore files in a tree", () => {
  it("lets a deeper .gitignore re-include what a higher one ignores", async () => {
    const ws = await workspace();
    await ws.files({
      ".gitignore": "*.log\n",
      "a.log": "",
      "sub/.gitignore": "!keep.log\n",
      "sub/keep.log": "",
      "sub/drop.log": "",
    });
    expect(await ws.run("find", { pattern: "*.log" })).toEqual({ content: "sub/keep.log" });
  });

  it("searches a folder named explicitly even when it is ignored", async () => {
    const ws = await workspace();
    await ws.files({ ".gitignore": "vendor/\n", "vendor/lib.ts": "hit\n", "a.ts": "hit\n" });
    expect(await ws.run("grep", { pattern: "hit" })).toEqual({ content: "a.ts:1: hit" });
    expect(await ws.run("grep", { pattern: "hit", path: "vendor" })).toEqual({
      content: "vendor/lib.ts:1: hit",
    });
  });
});
