import { readFile } from "node:fs/promises";
import { contentHash } from "../crypto.js";
import { headOf } from "../text.js";
import type { Skill } from "./discover.js";
import { parseSkill } from "./parse.js";
import { readTarget } from "./used.js";

/** The body of a loaded skill, read again from disk; undefined when it changed since it was found. */
export async function skillBody(skill: Skill): Promise<string | undefined> {
  const bytes = await readFile(skill.location).catch(() => undefined);
  if (bytes === undefined || contentHash(bytes) !== skill.hash) return undefined;
  const parsed = parseSkill(bytes.toString("utf8"), skill.name);
  return "refused" in parsed ? undefined : parsed.body;
}

/** How a user message that carries a skill (`/skill NAME`, `--skill NAME`) begins. */
export const skillHeader = (skill: Skill) =>
  `[skill ${skill.name} (${skill.location}): follow these instructions; the files they name are relative to ${skill.folder}]`;

/** The user message of `/skill NAME [text]`: the skill's header and body, then the text. */
export async function skillMessage(skill: Skill, text: string): Promise<string | undefined> {
  const body = await skillBody(skill);
  if (body === undefined) return undefined;
  return [skillHeader(skill), "", body.trimEnd(), ...(text.trim() === "" ? [] : ["", text])].join(
    "\n",
  );
}

/** Characters of skill text the system prompt gives again after a compaction, in all. */
export const keptSkillLimit = 32 * 1024;

/**
 * The skills a compaction covered the use of: those whose `SKILL.md` was read (its location among
 * the facts' files read, a relative path resolved in `workspace`) or sent in a user message (which
 * begins with a skill's header, and with several skills holds each next one's header after a
 * blank line). In catalog order.
 */
export function skillsUsed(
  skills: readonly Skill[],
  used: { filesRead: readonly string[]; userMessages: readonly string[] },
  workspace: string,
): Skill[] {
  const read = new Set(used.filesRead.map((path) => readTarget(path, workspace)));
  const sent = (skill: Skill) => {
    const header = `[skill ${skill.name} (`;
    return used.userMessages.some(
      (message) => message.startsWith(header) || message.includes(`\n\n${header}`),
    );
  };
  return skills.filter((skill) => read.has(skill.location) || sent(skill));
}

/**
 * The text the system prompt carries for skills used before a compaction: each one's body, read
 * again from disk, so what the model followed is still in front of it. Bounded by
 * `keptSkillLimit`; a body cut says where the rest is.
 */
export async function keptSkillsText(skills: readonly Skill[]): Promise<string> {
  let left = keptSkillLimit;
  const parts: string[] = [];
  for (const skill of skills) {
    const body = await skillBody(skill);
    if (body === undefined) continue;
    const text = headOf(body, Math.max(0, left));
    left -= text.length;
    const cut =
      text.length < body.length ? `\n[skill cut: read ${skill.location} for the rest]` : "";
    parts.push(`Skill ${skill.name} (${skill.location}):\n\n${text}${cut}`);
  }
  if (parts.length === 0) return "";
  return [
    "Skills read before the conversation was compacted (read again from disk; their instructions still apply):",
    ...parts,
  ].join("\n\n");
}
