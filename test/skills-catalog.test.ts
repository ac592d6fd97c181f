import { describe, expect, it } from "vitest";
import { cutNotice } from "../src/cli/skills.js";
import { catalogBudget, skillCatalog } from "../src/skills/catalog.js";
import type { Skill } from "../src/skills/discover.js";

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
