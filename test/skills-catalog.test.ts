import { describe, expect, it } from "vitest";
import { cutNotice } from "../src/app/skills.js";
import { type CatalogCut, catalogBudget, cutLine, skillCatalog } from "../src/skills/catalog.js";
import type { Skill } from "../src/skills/discover.js";
import { visible } from "../src/visible.js";

const skill = (name: string, description: string): Skill => ({
  name,
  description,
  scope: "user",
  location: `/home/u/.agents/skills/${name}/SKILL.md`,
  folder: `/home/u/.agents/skills/${name}`,
  hash: "0".repeat(64),
});

describe("the skill catalog", () => {
  it("is 2% of the context window in characters, from 2,000 to 32,000", () => {
    expect([undefined, 200_000, 1_000, 10_000_000].map(catalogBudget)).toEqual([
      10_240, 16_000, 2_000, 32_000,
    ]);
  });

  it("shows control, bidi and line-separator characters of a description and a location as escapes", () => {
    const painted = {
      ...skill("paint", "Runs\u001b]0;x\u0007 this\u202e and\u0085 that\u2028."),
      location: "/home/u/.agents/skills/p\u001bq/SKILL.md",
    };
    const { text } = skillCatalog([painted], 16_000);
    expect(text).toContain(
      "<description>Runs␛]0;x␇ this&lt;U+202E&gt; and&lt;U+0085&gt; that .</description>",
    );
    expect(text).toContain("<location>/home/u/.agents/skills/p␛q/SKILL.md</location>");
  });

  it("lists each skill's name, description and location, escaped, under a preamble", () => {
    const catalog = skillCatalog([skill("a-b", "Use <this> & that.")], 16_000);
    expect(catalog).toEqual({
      text: [
        "Skills: instructions for particular tasks, each in a SKILL.md. When a task matches a skill's",
        "description, read its SKILL.md (the location below, with the read tool) before you start and",
        "follow it; the files it names are relative to its folder, which read, ls, find and grep can",
        "open (read-only). A skill's allowed-tools are not permissions: every call is approved as usual.",
        "<available_skills>",
        "<skill>",
        "<name>a-b</name>",
        "<description>Use &lt;this&gt; &amp; that.</description>",
        "<location>/home/u/.agents/skills/a-b/SKILL.md</location>",
        "</skill>",
        "</available_skills>",
      ].join("\n"),
    });
    expect(skillCatalog([], 16_000)).toEqual({ text: "" });
  });

  it("shortens the longest descriptions first, to one common cap, and says so", () => {
    const skills = [skill("long", "x".repeat(1000)), skill("short", "A short one.")];
    const catalog = skillCatalog(skills, 1_500);
    const cap = catalog.cut?.descriptionCap ?? 0;
    expect(catalog.cut).toEqual({ budget: 1_500, shortened: 1, descriptionCap: cap, omitted: [] });
    const report =
      "[catalog cut to fit 1500 characters: 1 descriptions shortened to " + cap + " characters]";
    expect(catalog.text).toBe(
      skillCatalog(skills, 100_000).text.replace("x".repeat(1000), `${"x".repeat(cap)}…`) +
        `\n${report}`,
    );
    // The largest cap that fits the budget less the room kept for the report line (200).
    const listing = catalog.text.length - report.length - 1;
    expect(listing).toBeLessThanOrEqual(1_300);
    expect(listing + 1).toBeGreaterThan(1_300);
  });

  it("cuts 300 skills deterministically: descriptions to 60 characters, then the last names left out", () => {
    const skills = Array.from({ length: 300 }, (_, i) =>
      skill(
        `skill-${String(i).padStart(3, "0")}`,
        `Skill number ${i} does a particular thing. `.repeat(4),
      ),
    );
    const catalog = skillCatalog(skills, 16_000);
    const listed = [...catalog.text.matchAll(/<name>([^<]+)<\/name>/g)].map((m) => m[1]);
    expect(catalog.cut).toEqual({
      budget: 16_000,
      shortened: listed.length,
      descriptionCap: 60,
      omitted: skills.slice(listed.length).map((s) => s.name),
    });
    expect(listed).toEqual(skills.slice(0, listed.length).map((s) => s.name));
    expect(listed.length).toBe(80);
    expect(catalog.text.split("\n").at(-1)).toBe(
      "[catalog cut to fit 16000 characters: 80 descriptions shortened to 60 characters; 220 skills not listed (the last in name order; the user can load one with /skill NAME)]",
    );
    expect(catalog.text.length).toBeLessThanOrEqual(16_000);
    expect(
      skillCatalog(
        [...skills].reverse().sort((a, b) => (a.name < b.name ? -1 : 1)),
        16_000,
      ),
    ).toEqual(catalog);
  });
});

describe("the line that tells the user what was cut", () => {
  it("names at most ten skills left out, then how many more", () => {
    const omitted = Array.from({ length: 198 }, (_, index) => `skill-${index + 102}`);
    const line = cutNotice({ budget: 16_000, shortened: 0, descriptionCap: 60, omitted });
    expect(line).toContain(
      "(not listed: skill-102, skill-103, skill-104, skill-105, skill-106, skill-107, skill-108, skill-109, skill-110, skill-111 and 188 more; mini-agent skills lists them)",
    );
    expect(line.length).toBeLessThan(400);
    expect(
      cutNotice({ budget: 16_000, shortened: 0, descriptionCap: 60, omitted: ["a"] }),
    ).toContain("(not listed: a)");
  });
});

describe("the catalog's cut, counted without making the text", () => {
  // Descriptions whose cuts fall on a space, inside a surrogate pair, on text escaping changes
  // and on characters shown as marks: from 60 characters to the longest, every cap is taken.
  const descriptions = [
    "Plain words, and a cut that falls on a space or not: every cap says which one. ",
    "Emoji 😀😀😀 between words 😀 and pairs 😀😀 where a cut may fall inside one 😀 of them.",
    "Escaped: <tags> & ampersands & more <of> them, so a shortened text grows when escaped.",
    "Tabs\tand\nnewlines  and  double  spaces\u00a0and\u3000wide ones, all made single spaces.",
    "Marks\u202e shown as <U+…> and\u0085 controls␛ among words, cut anywhere across them too.",
    "  Leading and trailing spaces around a plain description, longer than the cap at 60.  ",
  ].map((text) => text.repeat(3));
  const skills = descriptions.map((description, at) => skill(`s-${at}`, description));
  const escapeXml = (text: string) =>
    text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
  const shown = (text: string) => visible(text.replace(/\s+/g, " ").trim());
  const cutTo = (text: string, cap: number) => {
    if (text.length <= cap) return text;
    const head = text.slice(0, cap);
    return `${(/[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head).trimEnd()}…`;
  };
  const [preambleText = ""] = skillCatalog(skills, 1_000_000).text.split("\n<skill>\n");
  /** The listing a cap gives, made entry by entry (the catalog's text without its last line). */
  const listing = (cap: number, count = skills.length) =>
    [
      preambleText,
      ...skills
        .slice(0, count)
        .map((s) =>
          [
            "<skill>",
            `<name>${s.name}</name>`,
            `<description>${escapeXml(cutTo(shown(s.description), cap))}</description>`,
            `<location>${s.location}</location>`,
            "</skill>",
          ].join("\n"),
        ),
      "</available_skills>",
    ].join("\n");
  const longest = Math.max(...skills.map((s) => shown(s.description).length));
  const caps = Array.from({ length: longest - 59 }, (_, at) => 60 + at);
  const reportOf = ({ cut }: { cut?: CatalogCut }) => (cut ? cutLine(cut) : "(nothing cut)");
  const sizes = new Map(caps.map((cap) => [cap, listing(cap).length]));

  it("takes the largest cap whose text fits, for every budget", () => {
    expect(listing(longest)).toBe(skillCatalog(skills, 1_000_000).text);
    const taken = new Set<number>();
    for (let budget = listing(60).length + 200; budget < listing(longest).length; budget++) {
      const cap = caps.filter((c) => (sizes.get(c) ?? 0) <= budget - 200).at(-1) ?? -1;
      const catalog = skillCatalog(skills, budget);
      expect(catalog.cut, `budget ${budget}`).toEqual({
        budget,
        shortened: skills.filter((s) => shown(s.description).length > cap).length,
        descriptionCap: cap,
        omitted: [],
      });
      expect(catalog.text).toBe(`${listing(cap)}\n${reportOf(catalog)}`);
      taken.add(cap);
    }
    // Every cap whose text is longer than the one below it, up to 200 characters (the room kept
    // for the report) short of the whole listing: 158 of them.
    expect(taken.size).toBe(158);
    expect(skillCatalog(skills, listing(longest).length)).toEqual({ text: listing(longest) });
  });

  it("leaves out whole skills at 60 characters when no cap fits, as many as the text allows", () => {
    const omittedCounts = new Set<number>();
    for (let budget = 600; budget < listing(60).length + 200; budget++) {
      const catalog = skillCatalog(skills, budget);
      const listed = skills.length - (catalog.cut?.omitted.length ?? 0);
      expect(catalog.cut?.descriptionCap).toBe(60);
      expect(catalog.text).toBe(`${listing(60, listed)}\n${reportOf(catalog)}`);
      expect(listing(60, listed + 1).length, `budget ${budget}`).toBeGreaterThan(budget - 200);
      omittedCounts.add(skills.length - listed);
    }
    expect([...omittedCounts].sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
