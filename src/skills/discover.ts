import { type Dirent, lstatSync, readdirSync, realpathSync, type Stats, statSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { basename, join, relative, resolve, sep } from "node:path";
import { within } from "../paths.js";
import { foldersDown, projectRoot } from "../project/root.js";
import { systemErrorMeaning } from "../system-errors.js";
import { loadTrust, type TrustEntry, type WorkspaceTrust } from "../trust/trust.js";
import { SkillCache } from "./cache.js";
import type { SkillFile } from "./parse.js";
import { quietly, readSkill, skillFileBytes } from "./read.js";

/** Where a skill came from: the user's own folders, or the project's (trusted by hash). */
export type SkillScope = "user" | "project";

/** A skill found, valid and (for a project skill) trusted: what the catalog lists. */
export interface Skill extends Omit<SkillFile, "body" | "warning"> {
  scope: SkillScope;
  /** The real, absolute path of its `SKILL.md`: what the model reads. */
  location: string;
  /** The real path of its folder: a read-only root of the file tools and the sandbox. */
  folder: string;
  /** sha256 of its `SKILL.md`, as the trust record keeps it. */
  hash: string;
}

/** One line about one skill: `skill NAME (PATH): REASON`. The skill may still be loaded. */
export interface SkillWarning {
  name: string;
  /** The `SKILL.md` (or folder) it is about, as found (not resolved). */
  path: string;
  reason: string;
}

/** A project skill that was found and is valid but not trusted with its current content. */
export interface UntrustedSkill {
  name: string;
  path: string;
  /** What `mini-agent trust` records to load it. */
  entry: TrustEntry;
}

export interface SkillSet {
  /** Loaded skills, by name. */
  skills: Skill[];
  warnings: SkillWarning[];
  untrusted: UntrustedSkill[];
  /** The project root the project skills were looked for from. */
  projectRoot: string;
}

/** A skills folder a configuration file names (`skills.paths`), and whose skills it holds. */
export interface SkillFolder {
  path: string;
  scope: SkillScope;
}

export interface SkillPlaces {
  /** The working folder. */
  workspace: string;
  /** The user's home: `~/.agents/skills`, and no project folder above it. */
  home: string;
  /** The state folder: its `skills/` folder holds user skills. */
  state: string;
  /** The project root's trust record; read from the state folder when not given. */
  trust?: WorkspaceTrust;
  /**
   * More skills folders (`skills.paths`): the user's are looked at after the user's own places,
   * the project's after the project's (and trusted like them).
   */
  folders?: readonly SkillFolder[];
  /** The clock of the skill cache's entries (`Date.now` unless a test sets it). */
  now?: () => number;
  /**
   * Read every `SKILL.md` afresh, none through the cache: what `mini-agent trust` records is the
   * hash of the bytes on disk when the user approved them.
   */
  uncached?: boolean;
}

/** How far discovery looks: skill folders nest at most `depth` folders below a skills folder. */
export const discoveryBounds = { depth: 4, folders: 2000, fileBytes: skillFileBytes } as const;

const TRUST_HINT = "run `mini-agent trust` to trust it";

/**
 * The skills of a working folder, found afresh (called at start and for every turn). User skills
 * come from the state folder's `skills/`, then `~/.agents/skills`; project skills from
 * `.agents/skills` and `.claude/skills` in the project root and each folder down to the working
 * folder (as instruction files are found), each loaded only when the trust record holds its
 * `SKILL.md`'s hash. A skill folder is one holding `SKILL.md`, at most `discoveryBounds.depth`
 * folders below its skills folder; at most `discoveryBounds.folders` folders are looked at in
 * all. A later place overrides an earlier one of the same name (the deeper project folder wins,
 * a project skill beats a user skill), with a warning. Each bad skill is one warning.
 */
export async function discoverSkills(places: SkillPlaces): Promise<SkillSet> {
  const home = await realOrResolved(places.home);
  const state = await realOrResolved(places.state);
  const root = await projectRoot(places.workspace, { home });
  const trust = places.trust ?? (await loadTrust(state, root.path));
  const context: Context = {
    warnings: [],
    untrusted: [],
    folders: 0,
    projectRoot: root.path,
    trust,
    state,
    now: places.now ?? Date.now,
    uncached: places.uncached === true,
  };
  const configured = (scope: SkillScope) =>
    (places.folders ?? []).filter((folder) => folder.scope === scope);
  const homes: SkillFolder[] = [
    { path: join(state, "skills"), scope: "user" },
    { path: join(home, ".agents", "skills"), scope: "user" },
    ...configured("user"),
    ...foldersDown(await realOrResolved(places.workspace), root.path, state).flatMap((folder) =>
      [".agents", ".claude"].map((dot) => ({
        path: join(folder, dot, "skills"),
        scope: "project" as const,
      })),
    ),
    ...configured("project"),
  ];
  const byName = new Map<string, Skill>();
  for (const place of homes) {
    for (const skill of skillsIn(context, place.path, place.scope)) {
      const earlier = byName.get(skill.name);
      if (earlier)
        context.warnings.push({
          name: skill.name,
          path: earlier.location,
          reason: `overridden by the ${skill.scope} skill ${skill.location}`,
        });
      byName.set(skill.name, skill);
    }
  }
  if (trust.warning) context.warnings.push({ name: "-", path: root.path, reason: trust.warning });
  const skills = [...byName.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return {
    skills,
    warnings: context.warnings,
    untrusted: context.untrusted,
    projectRoot: root.path,
  };
}

interface Context {
  warnings: SkillWarning[];
  untrusted: UntrustedSkill[];
  folders: number;
  projectRoot: string;
  trust: WorkspaceTrust;
  state: string;
  now: () => number;
  uncached: boolean;
}

/**
 * The valid skills under one skills folder, in name order of their folders (its warnings and
 * untrusted skills go to `context`). The folders and files are read with synchronous calls:
 * they are small and local, and a look at 300 skills takes a tenth of the time it takes through
 * the thread pool's round trips (the first request waits for it either way). A folder is a
 * skill's when `lstat` finds its `SKILL.md`; a folder that is not a link has the real path of
 * its parent's, joined with its name. Each `SKILL.md` is read through the folder's cache.
 */
function skillsIn(context: Context, top: string, scope: SkillScope): Skill[] {
  if (!statOf(top)?.isDirectory()) return [];
  const realTop = realpathSync(top);
  if (scope === "project" && !within(context.projectRoot, realTop)) {
    context.warnings.push({
      name: "-",
      path: top,
      reason: "a link leading outside the project: not searched",
    });
    return [];
  }
  const cache = new SkillCache(context.state, realTop, context.now, { read: !context.uncached });
  // Whether every folder below the top that is not reached through a link passes the checks
  // of `loadSkill` as the top does: then they are not made again for each skill.
  const stateSkills = join(context.state, "skills");
  const belowIsChecked =
    scope === "project" ||
    within(stateSkills, realTop) ||
    (!within(context.state, realTop) && !within(realTop, context.state));
  const found: Skill[] = [];
  const seen = new Set<string>();
  const loading: Loading = { context, cache, scope, belowIsChecked };
  const visit = ({ path: folder, real: known, name }: Folder, depth: number): void => {
    if (++context.folders > discoveryBounds.folders) {
      if (context.folders === discoveryBounds.folders + 1)
        context.warnings.push({
          name: "-",
          path: folder,
          reason: `more than ${discoveryBounds.folders} folders: the rest not searched`,
        });
      return;
    }
    const real = known ?? realOf(folder);
    if (real === undefined || seen.has(real)) return;
    seen.add(real);
    const file = `${folder}${sep}SKILL.md`;
    const info = lstatOf(file);
    if (info) {
      const skill = loadSkill(loading, { file, name, real, linked: known === undefined }, info);
      if (skill) found.push(skill);
      return;
    }
    const subfolders = foldersOf(folder, real, entriesOf(folder, context));
    if (depth < discoveryBounds.depth) {
      for (const sub of subfolders) visit(sub, depth + 1);
      return;
    }
    for (const { path } of subfolders)
      if (hasSkillBelow(path))
        context.warnings.push({
          name: basename(path),
          path,
          reason: `nested deeper than ${discoveryBounds.depth} folders below ${top}: not searched`,
        });
  };
  for (const sub of foldersOf(top, realTop, entriesOf(top, context))) visit(sub, 1);
  cache.save();
  return found;
}

/** A folder to look in, its name, and its real path when known without asking (it is not a link). */
interface Folder {
  path: string;
  name: string;
  real?: string;
}

const statOf = (path: string) => quietly(() => statSync(path));
const realOf = (path: string) => quietly(() => realpathSync(path));
/**
 * The entries of `folder`; none where it is gone or no folder. One that is there but cannot be
 * read (no permission) is a warning in `context`: its skills are not taken for none.
 */
function entriesOf(folder: string, context?: Context): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    if (context && code !== "ENOENT" && code !== "ENOTDIR")
      context.warnings.push({
        name: "-",
        path: folder,
        reason: `cannot be read (${systemErrorMeaning(code)}): the skills in it are not loaded`,
      });
    return [];
  }
}

/** The folders (or links to folders) among `entries` of `folder` (real path `real`), but hidden ones, by name. */
function foldersOf(folder: string, real: string, entries: Dirent[]): Folder[] {
  const folders: Folder[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const { name } = entry;
    if (name.startsWith(".")) continue;
    // Names from `readdir` hold no separator: joined as they are, with nothing to normalise.
    const path = `${folder}${sep}${name}`;
    if (entry.isDirectory()) folders.push({ path, name, real: `${real}${sep}${name}` });
    else if (entry.isSymbolicLink() && statOf(path)?.isDirectory() === true)
      folders.push({ path, name });
  }
  return folders;
}

/** Whether a folder past the bound holds a `SKILL.md` anywhere within a few levels (for the warning). */
function hasSkillBelow(folder: string, levels = 4): boolean {
  const entries = entriesOf(folder);
  if (entries.some((entry) => entry.name === "SKILL.md")) return true;
  if (levels === 0) return false;
  return entries.some(
    (entry) => entry.isDirectory() && hasSkillBelow(join(folder, entry.name), levels - 1),
  );
}

/** How the skills of one skills folder are loaded. */
interface Loading {
  context: Context;
  cache: SkillCache;
  scope: SkillScope;
  /** Every folder below it not reached through a link passes the checks of where it lies. */
  belowIsChecked: boolean;
}

/** A skill's folder as found: its `SKILL.md` (not resolved), its name and real path. */
interface Found {
  file: string;
  name: string;
  real: string;
  /** Reached through a link: its real path is checked. */
  linked: boolean;
}

function loadSkill(
  { context, cache, scope, belowIsChecked }: Loading,
  { file, name: folderName, real: realFolder, linked }: Found,
  info: Stats,
): Skill | undefined {
  const warn = (reason: string, name = folderName) => {
    context.warnings.push({ name, path: file, reason });
    return undefined;
  };
  const checked = !linked && belowIsChecked;
  if (!checked && scope === "project" && !within(context.projectRoot, realFolder))
    return warn("its folder links outside the project: not loaded");
  if (
    !checked &&
    scope === "user" &&
    within(context.state, realFolder) &&
    !within(join(context.state, "skills"), realFolder)
  )
    return warn("its folder links into the state folder: not loaded");
  const location = `${realFolder}${sep}SKILL.md`;
  const read = readSkill({ file, location, info }, realFolder, folderName, cache);
  if ("refused" in read) return warn(`${read.refused}: not loaded`);
  const { hash, skill } = read;
  if (scope === "project") {
    const name = relative(context.projectRoot, location);
    // The trust record decides, by the hash of the content: never the cache.
    if (!context.trust.isTrusted("skill", name, hash)) {
      context.untrusted.push({
        name: skill.name,
        path: file,
        entry: { kind: "skill", name, hash },
      });
      return warn(
        `not trusted (new, or changed since it was trusted): not loaded; ${TRUST_HINT}`,
        skill.name,
      );
    }
  }
  if (skill.warning) warn(skill.warning, skill.name);
  return skillOf(skill, { scope, location, folder: realFolder, hash });
}

/** The skill a reading gave (its fields but the warning), where it was found. */
function skillOf(
  fields: Omit<SkillFile, "body">,
  found: Pick<Skill, "scope" | "location" | "folder" | "hash">,
): Skill {
  const { name, description, license, compatibility, metadata, allowedTools } = fields;
  const { scope, location, folder, hash } = found;
  const skill: Skill = { name, description, scope, location, folder, hash };
  // Set one by one (not spread): 300 skills are made at every look.
  if (license !== undefined) skill.license = license;
  if (compatibility !== undefined) skill.compatibility = compatibility;
  if (metadata !== undefined) skill.metadata = metadata;
  if (allowedTools !== undefined) skill.allowedTools = allowedTools;
  return skill;
}

const NO_THROW = { throwIfNoEntry: false } as const;

function lstatOf(path: string): Stats | undefined {
  try {
    return lstatSync(path, NO_THROW);
  } catch {
    return undefined;
  }
}

/** The trust entries that would load every valid project skill not trusted now. */
export function trustEntriesOf(set: Pick<SkillSet, "untrusted">): TrustEntry[] {
  return set.untrusted.map((skill) => skill.entry);
}

async function realOrResolved(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}
