import { visible } from "../visible.js";
import type { Skill } from "./discover.js";

/**
 * The catalog's budget in characters: 2% of the context window (at 4 characters a token), at
 * least 2,000 and at most 32,000; 10,240 when the window is unknown (as for 128,000 tokens).
 * 16,000 characters at Claude's 200,000.
 */
export function catalogBudget(contextWindow: number | undefined): number {
  const window = contextWindow ?? 128_000;
  return Math.min(32_000, Math.max(2_000, Math.floor(window * 4 * 0.02)));
}

/** What the budget cut: descriptions shortened to at most `descriptionCap`, skills left out. */
export interface CatalogCut {
  budget: number;
  /** How many descriptions were shortened, and to how many characters at most. */
  shortened: number;
  descriptionCap: number;
  /** Skills not listed at all (the last ones in name order), by name. */
  omitted: string[];
}

export interface Catalog {
  /** The `<available_skills>` block with its preamble; empty when there are no skills. */
  text: string;
  cut?: CatalogCut;
}

/** No description is shortened below this before whole skills are left out. */
const minimumCap = 60;
/** Room kept for the line saying what was cut. */
const reportRoom = 200;

const preamble = [
  "Skills: instructions for particular tasks, each in a SKILL.md. When a task matches a skill's",
  "description, read its SKILL.md (the location below, with the read tool) before you start and",
  "follow it; the files it names are relative to its folder, which read, ls, find and grep can",
  "open (read-only). A skill's allowed-tools are not permissions: every call is approved as usual.",
].join("\n");

/**
 * The catalog of `skills` (sorted by name) for the system prompt, within `budget` characters.
 * When it does not fit, descriptions are shortened first, all to one common cap (the longest
 * go first: the cap is the largest that fits), never below 60 characters; then whole skills are
 * left out from the end of the name order. The same skills and budget always give the same
 * text, and the block ends with a line saying what was cut.
 */
export function skillCatalog(skills: readonly Skill[], budget: number): Catalog {
  if (skills.length === 0) return { text: "" };
  // What does not depend on the cap is made once: the search below renders the list many times.
  const listing = skills.map((skill) => ({
    name: skill.name,
    description: visible(oneLine(skill.description)),
    location: escapeXml(visible(skill.location)),
  }));
  const whole = render(listing, Number.POSITIVE_INFINITY);
  if (whole.length <= budget) return { text: whole };
  const room = budget - reportRoom;
  const longest = Math.max(...skills.map((skill) => skill.description.length));
  let cap = -1;
  for (let low = minimumCap, high = longest; low <= high; ) {
    const mid = Math.floor((low + high) / 2);
    if (render(listing, mid).length <= room) {
      cap = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  let listed = skills.length;
  if (cap === -1) {
    cap = minimumCap;
    // Each entry adds its own lines: the listing grows by them, one skill at a time.
    let size = render([], cap).length;
    listed = 0;
    for (const next of listing) {
      size += entry(next, cap).length + 1;
      if (size > room) break;
      listed++;
    }
  }
  const kept = listing.slice(0, listed);
  const cut: CatalogCut = {
    budget,
    shortened: skills.slice(0, listed).filter((skill) => skill.description.length > cap).length,
    descriptionCap: cap,
    omitted: skills.slice(listed).map((skill) => skill.name),
  };
  return { text: render(kept, cap, cutLine(cut)), cut };
}

/** `[catalog cut to fit 16000 characters: …]`, as the model and the user read it. */
export function cutLine(cut: CatalogCut): string {
  const parts = [
    ...(cut.shortened > 0
      ? [`${cut.shortened} descriptions shortened to ${cut.descriptionCap} characters`]
      : []),
    ...(cut.omitted.length > 0
      ? [
          `${cut.omitted.length} skills not listed (the last in name order; the user can load one with /skill NAME)`,
        ]
      : []),
  ];
  return `[catalog cut to fit ${cut.budget} characters: ${parts.join("; ")}]`;
}

/** A skill as the catalog lists it: its description on one line and its location, shown safely. */
interface Listed {
  name: string;
  description: string;
  location: string;
}

function render(skills: readonly Listed[], cap: number, report?: string): string {
  const entries = skills.map((skill) => entry(skill, cap));
  return [
    preamble,
    "<available_skills>",
    ...entries,
    "</available_skills>",
    ...(report ? [report] : []),
  ].join("\n");
}

function entry(skill: Listed, cap: number): string {
  return [
    "<skill>",
    `<name>${skill.name}</name>`,
    `<description>${escapeXml(shorten(skill.description, cap))}</description>`,
    `<location>${skill.location}</location>`,
    "</skill>",
  ].join("\n");
}

function shorten(text: string, cap: number): string {
  if (text.length <= cap) return text;
  const head = Array.from(text.slice(0, cap)).join("");
  // Never half a surrogate pair.
  const safe = /[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head;
  return `${safe.trimEnd()}…`;
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
