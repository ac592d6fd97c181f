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
 * text, and the block ends with a line saying what was cut. The search for the cap counts the
 * characters each cap gives; only the text chosen is made.
 */
export function skillCatalog(skills: readonly Skill[], budget: number): Catalog {
  if (skills.length === 0) return { text: "" };
  const listing = skills.map(listedOf);
  const whole = sizeOf(listing, Number.POSITIVE_INFINITY);
  if (whole <= budget) return { text: render(listing, Number.POSITIVE_INFINITY) };
  const room = budget - reportRoom;
  const longest = Math.max(...skills.map((skill) => skill.description.length));
  let cap = -1;
  for (let low = minimumCap, high = longest; low <= high; ) {
    const mid = Math.floor((low + high) / 2);
    if (sizeOf(listing, mid) <= room) {
      cap = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  let listed = skills.length;
  if (cap === -1) {
    cap = minimumCap;
    // Each entry adds its own line: the listing grows by them, one skill at a time.
    let size = sizeOf([], cap);
    listed = 0;
    for (const next of listing) {
      size += entrySize(next, cap) + 1;
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
  /** The description on one line, shown safely (not yet escaped). */
  description: string;
  /** Whether the description holds no `&`, `<` or `>`: escaping leaves it, and its cuts, as they are. */
  plain: boolean;
  /** The characters of the description escaped whole. */
  escapedLength: number;
  location: string;
  /** The characters of its entry but the description's. */
  frame: number;
}

/** Printable ASCII words, single spaces between them: a line as shown, with nothing to escape. */
const PLAIN_LINE = /^[!-%'-;=?-~]+(?: [!-%'-;=?-~]+)*$/;
/** Printable ASCII with nothing to escape. */
const PLAIN_TEXT = /^[ !-%'-;=?-~]*$/;

function listedOf(skill: Skill): Listed {
  const description = PLAIN_LINE.test(skill.description)
    ? skill.description
    : visible(oneLine(skill.description));
  const plain = !/[&<>]/.test(description);
  const location = PLAIN_TEXT.test(skill.location)
    ? skill.location
    : escapeXml(visible(skill.location));
  const frame = frameSize + skill.name.length + location.length;
  const escapedLength = plain ? description.length : escapeXml(description).length;
  return { name: skill.name, description, plain, escapedLength, location, frame };
}

/** The text's lines around its entries. */
const head = [preamble, "<available_skills>"];
const foot = ["</available_skills>"];

function render(skills: readonly Listed[], cap: number, report?: string): string {
  const entries = skills.map((skill) => entry(skill, escapedDescription(skill, cap)));
  return [...head, ...entries, ...foot, ...(report ? [report] : [])].join("\n");
}

/** The characters `render(skills, cap)` gives, without making it. */
function sizeOf(skills: readonly Listed[], cap: number): number {
  let size = [...head, ...foot].join("\n").length;
  for (const skill of skills) size += entrySize(skill, cap) + 1;
  return size;
}

/** The characters of an entry but its name, description and location. */
const frameSize = entry({ name: "", location: "" }, "").length;

/**
 * The characters of an entry whose description is cut to `cap`: counted, not made, when escaping
 * changes nothing in it (`shortEnd` says where a cut ends, and the mark adds one).
 */
function entrySize(skill: Listed, cap: number): number {
  if (skill.description.length <= cap) return skill.frame + skill.escapedLength;
  if (skill.plain) return skill.frame + shortEnd(skill.description, cap) + 1;
  return skill.frame + escapedDescription(skill, cap).length;
}

function entry(skill: Pick<Listed, "name" | "location">, description: string): string {
  return [
    "<skill>",
    `<name>${skill.name}</name>`,
    `<description>${description}</description>`,
    `<location>${skill.location}</location>`,
    "</skill>",
  ].join("\n");
}

function escapedDescription(skill: Listed, cap: number): string {
  const text =
    skill.description.length <= cap ? skill.description : shorten(skill.description, cap);
  return skill.plain ? text : escapeXml(text);
}

const shorten = (text: string, cap: number) => `${text.slice(0, shortEnd(text, cap))}…`;

/**
 * Where a description on one line (single spaces, none at its ends: `oneLine`) cut to `cap`
 * characters ends: never after half a surrogate pair, nor after a space.
 */
function shortEnd(text: string, cap: number): number {
  let end = cap;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  if (text.charCodeAt(end - 1) === 0x20) end--;
  return end;
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
