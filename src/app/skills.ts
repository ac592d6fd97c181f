import type { Compaction } from "../compaction/record.js";
import type { SkillsNotice } from "../runner/events.js";
import type { LoadedSkill } from "../session/records.js";
import { keptSkillsText, skillMessage, skillsUsed } from "../skills/activate.js";
import { type CatalogCut, catalogBudget, cutLine, skillCatalog } from "../skills/catalog.js";
import {
  discoverSkills,
  type Skill,
  type SkillPlaces,
  type SkillSet,
  type SkillWarning,
} from "../skills/discover.js";
import { visible } from "../visible.js";
import { UsageError } from "./exit.js";

/** `skill NAME (PATH): REASON`, made safe for a terminal. */
export function warningLine(warning: SkillWarning): string {
  return visible(`skill ${warning.name} (${warning.path}): ${warning.reason}`);
}

/** The skill warnings one look at the skills tells; the rest are counted. */
const TOLD_WARNINGS = 20;

/** The skills left out that the cut's line names; the rest are counted. */
const NAMED_OMITTED = 10;

/** What the catalog's cut is, in one line for the user; empty when nothing was cut. */
export function cutNotice(cut: CatalogCut | undefined): string {
  if (!cut) return "";
  const named = cut.omitted.slice(0, NAMED_OMITTED).join(", ");
  const more = cut.omitted.length - NAMED_OMITTED;
  const rest = more > 0 ? ` and ${more} more; mini-agent skills lists them` : "";
  const omitted = cut.omitted.length > 0 ? ` (not listed: ${named}${rest})` : "";
  return `skills: ${cutLine(cut).slice(1, -1)}${omitted}`;
}

/**
 * The skills of one run: found at start and again for every turn; their folders are the
 * read-only roots of the file tools and the sandbox; each warning and cut is told once.
 */
export class RunSkills {
  private set: SkillSet = { skills: [], warnings: [], untrusted: [], projectRoot: "" };
  private readonly told = new Set<string>();
  private readonly budget: number;
  /** The set was just found (at start, or for `/skill`): the next prompt uses it as it is. */
  private fresh = false;
  /** The skills the last prompt was built with, and the same as last told (`notice`). */
  private loaded: LoadedSkill[] = [];
  private toldLoaded: readonly LoadedSkill[] = [];
  /** Skills whose text a message carries, since the last notice. */
  private sent: string[] = [];

  constructor(
    private readonly places: SkillPlaces,
    contextWindow: number | undefined,
    private readonly tell: (line: string) => void,
  ) {
    this.budget = catalogBudget(contextWindow);
  }

  /** The real folders of the skills loaded now (the tools ask for them at every path). */
  private folders: readonly string[] = [];
  readonly roots = (): readonly string[] => this.folders;

  get skills(): readonly Skill[] {
    return this.set.skills;
  }

  /**
   * Finds the skills again; tells each warning not told before, at most `TOLD_WARNINGS` of them
   * at a time, then how many more there are (a repository with 2,000 untrusted skills is one
   * screen, not 2,000 lines).
   */
  async refresh(): Promise<void> {
    this.set = await discoverSkills(this.places);
    this.folders = this.set.skills.map((skill) => skill.folder);
    this.fresh = true;
    const fresh = this.set.warnings.map(warningLine).filter((line) => !this.told.has(line));
    for (const line of fresh.slice(0, TOLD_WARNINGS)) this.once(line);
    const more = fresh.length - TOLD_WARNINGS;
    if (more > 0) {
      for (const line of fresh.slice(TOLD_WARNINGS)) this.told.add(line);
      this.tell(`skills: ${more} more warnings (mini-agent skills lists them all)`);
    }
  }

  /**
   * The system prompt's part for skills, found afresh: the catalog, then the text of each
   * skill used before the compaction in effect (read again from disk).
   */
  async prompt(compaction: Compaction | undefined): Promise<string> {
    if (!this.fresh) await this.refresh();
    this.fresh = false;
    const catalog = skillCatalog(this.set.skills, this.budget);
    const omitted = new Set(catalog.cut?.omitted);
    this.loaded = this.set.skills.map((skill) => ({
      name: skill.name,
      scope: skill.scope,
      location: skill.location,
      hash: skill.hash,
      listed: !omitted.has(skill.name),
    }));
    const notice = cutNotice(catalog.cut);
    if (notice !== "") this.once(visible(notice));
    const used = compaction
      ? skillsUsed(
          this.set.skills,
          { filesRead: compaction.facts.filesRead, userMessages: compaction.userMessages },
          this.places.workspace,
        )
      : [];
    const kept = await keptSkillsText(used);
    return [catalog.text, kept].filter((part) => part !== "").join("\n\n");
  }

  /**
   * The user message that carries the skills `names` (each one's text, in order) and `text`; a
   * usage error for an unknown one. The names are told with the next notice.
   */
  async message(names: readonly string[], text: string): Promise<string> {
    let message = text;
    for (const name of [...names].reverse()) message = await this.oneMessage(name, message);
    this.sent.push(...names);
    return message;
  }

  /**
   * What the session records of the skills after a prompt was built: the loaded set when it is
   * not the one told last (a run that never loaded a skill tells nothing), and the skills sent
   * since the last notice. Undefined when there is nothing new.
   */
  notice(): SkillsNotice | undefined {
    const notice: SkillsNotice = {
      ...(!sameLoaded(this.loaded, this.toldLoaded) && { loaded: this.loaded }),
      ...(this.sent.length > 0 && { sent: this.sent }),
    };
    this.toldLoaded = this.loaded;
    this.sent = [];
    return notice.loaded || notice.sent ? notice : undefined;
  }

  private async oneMessage(name: string, text: string): Promise<string> {
    const skill = this.set.skills.find((candidate) => candidate.name === name);
    if (!skill)
      throw new UsageError(
        `no skill named ${visible(JSON.stringify(name))}: mini-agent skills lists them`,
      );
    const message = await skillMessage(skill, text);
    if (message === undefined)
      throw new UsageError(`skill ${name} changed since it was found: try again`);
    return message;
  }

  private once(line: string): void {
    if (this.told.has(line)) return;
    this.told.add(line);
    this.tell(line);
  }
}

/** Whether two lists of loaded skills say the same, field by field. */
function sameLoaded(a: readonly LoadedSkill[], b: readonly LoadedSkill[]): boolean {
  return (
    a.length === b.length &&
    a.every((skill, at) => {
      const other = b[at];
      return (
        other !== undefined &&
        skill.name === other.name &&
        skill.scope === other.scope &&
        skill.location === other.location &&
        skill.hash === other.hash &&
        skill.listed === other.listed
      );
    })
  );
}
