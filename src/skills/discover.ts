import { constants, type Dirent } from "node:fs";
import { lstat, open, readdir, realpath, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { within } from "../paths.js";
import { foldersDown, projectRoot } from "../project/root.js";
import { firstInvalidUtf8 } from "../tools/utf8.js";
import { contentHash, loadTrust, type TrustEntry, type WorkspaceTrust } from "../trust/trust.js";
import { parseSkill, type SkillFile } from "./parse.js";

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
}

/** How far discovery looks: skill folders nest at most `depth` folders below a skills folder. */
export const discoveryBounds = { depth: 4, folders: 2000, fileBytes: 256 * 1024 } as const;

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
    for (const skill of await skillsIn(context, place.path, place.scope)) {
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
}

/** What one folder of a skills folder gave, in the order it was found. */
interface Sink {
  skills: Skill[];
  warnings: SkillWarning[];
  untrusted: UntrustedSkill[];
}

const emptySink = (): Sink => ({ skills: [], warnings: [], untrusted: [] });

/** `parts` appended to `into`, each list in the order of `parts`. */
function gather(into: Sink, parts: readonly Sink[]): Sink {
  for (const part of parts) {
    into.skills.push(...part.skills);
    into.warnings.push(...part.warnings);
    into.untrusted.push(...part.untrusted);
  }
  return into;
}

/**
 * The valid skills under one skills folder, in name order of their folders (its warnings and
 * untrusted skills go to `context`). Sibling folders are looked at concurrently, their results
 * joined in name order: 300 skills cost a few round trips to the disk, not 2,000 in a row.
 */
async function skillsIn(context: Context, top: string, scope: SkillScope): Promise<Skill[]> {
  const info = await stat(top).catch(() => undefined);
  if (!info?.isDirectory()) return [];
  const realTop = await realpath(top);
  if (scope === "project" && !within(context.projectRoot, realTop)) {
    context.warnings.push({
      name: "-",
      path: top,
      reason: "a link leading outside the project: not searched",
    });
    return [];
  }
  const seen = new Set<string>();
  const visit = async (folder: string, depth: number): Promise<Sink> => {
    const sink = emptySink();
    if (++context.folders > discoveryBounds.folders) {
      if (context.folders === discoveryBounds.folders + 1)
        sink.warnings.push({
          name: "-",
          path: folder,
          reason: `more than ${discoveryBounds.folders} folders: the rest not searched`,
        });
      return sink;
    }
    const real = await realpath(folder).catch(() => undefined);
    if (real === undefined || seen.has(real)) return sink;
    seen.add(real);
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => [] as Dirent[]);
    if (entries.some((entry) => entry.name === "SKILL.md")) {
      const skill = await loadSkill(context, sink, folder, real, scope);
      if (skill) sink.skills.push(skill);
      return sink;
    }
    const subfolders = await foldersOf(folder, entries);
    if (subfolders.length === 0) return sink;
    if (depth === discoveryBounds.depth) {
      for (const path of subfolders)
        if (await hasSkillBelow(path))
          sink.warnings.push({
            name: basename(path),
            path,
            reason: `nested deeper than ${discoveryBounds.depth} folders below ${top}: not searched`,
          });
      return sink;
    }
    return gather(sink, await Promise.all(subfolders.map((path) => visit(path, depth + 1))));
  };
  const entries = await readdir(top, { withFileTypes: true }).catch(() => [] as Dirent[]);
  const found = gather(
    emptySink(),
    await Promise.all((await foldersOf(top, entries)).map((path) => visit(path, 1))),
  );
  context.warnings.push(...found.warnings);
  context.untrusted.push(...found.untrusted);
  return found.skills;
}

/** The folders (or links to folders) among `entries` of `folder`, but hidden ones, by name. */
async function foldersOf(folder: string, entries: Dirent[]): Promise<string[]> {
  const sorted = entries
    .filter((entry) => !entry.name.startsWith("."))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const kept = await Promise.all(
    sorted.map(
      async (entry) =>
        entry.isDirectory() ||
        (entry.isSymbolicLink() &&
          (await stat(join(folder, entry.name)).catch(() => undefined))?.isDirectory() === true),
    ),
  );
  return sorted.filter((_, index) => kept[index]).map((entry) => join(folder, entry.name));
}

/** Whether a folder past the bound holds a `SKILL.md` anywhere within a few levels (for the warning). */
async function hasSkillBelow(folder: string, levels = 4): Promise<boolean> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => [] as Dirent[]);
  if (entries.some((entry) => entry.name === "SKILL.md")) return true;
  if (levels === 0) return false;
  for (const entry of entries)
    if (entry.isDirectory() && (await hasSkillBelow(join(folder, entry.name), levels - 1)))
      return true;
  return false;
}

async function loadSkill(
  context: Context,
  sink: Sink,
  folder: string,
  realFolder: string,
  scope: SkillScope,
): Promise<Skill | undefined> {
  const file = join(folder, "SKILL.md");
  const folderName = basename(folder);
  const warn = (reason: string, name = folderName) => {
    sink.warnings.push({ name, path: file, reason });
    return undefined;
  };
  if (scope === "project" && !within(context.projectRoot, realFolder))
    return warn("its folder links outside the project: not loaded");
  if (
    scope === "user" &&
    within(context.state, realFolder) &&
    !within(join(context.state, "skills"), realFolder)
  )
    return warn("its folder links into the state folder: not loaded");
  const read = await readSkillFile(file, realFolder);
  if (typeof read === "string") return warn(`${read}: not loaded`);
  const parsed = parseSkill(read.text, folderName);
  if ("refused" in parsed) return warn(`${parsed.refused}: not loaded`);
  const hash = contentHash(read.bytes);
  const location = join(realFolder, "SKILL.md");
  if (scope === "project") {
    const name = relative(context.projectRoot, location);
    if (!context.trust.isTrusted("skill", name, hash)) {
      sink.untrusted.push({
        name: parsed.name,
        path: file,
        entry: { kind: "skill", name, hash },
      });
      return warn(
        `not trusted (new, or changed since it was trusted): not loaded; ${TRUST_HINT}`,
        parsed.name,
      );
    }
  }
  if (parsed.warning) warn(parsed.warning, parsed.name);
  const { body: _body, warning: _warning, ...fields } = parsed;
  return { ...fields, scope, location, folder: realFolder, hash };
}

/** A `SKILL.md` as bytes and text, or why it is not read. */
async function readSkillFile(
  file: string,
  realFolder: string,
): Promise<{ bytes: Buffer; text: string } | string> {
  const info = await lstat(file).catch(() => undefined);
  if (!info) return "SKILL.md is gone";
  let real = file;
  if (info.isSymbolicLink()) {
    real = await realpath(file).catch(() => "");
    if (real === "") return "SKILL.md is a dangling link";
    if (dirname(real) !== realFolder) return "SKILL.md is a link leading out of its folder";
  } else real = join(realFolder, "SKILL.md");
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return `SKILL.md cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`;
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) return "SKILL.md is not a regular file";
    if (opened.size > discoveryBounds.fileBytes)
      return `SKILL.md is ${opened.size} bytes (at most ${discoveryBounds.fileBytes})`;
    const bytes = await handle.readFile();
    if (bytes.includes(0) || firstInvalidUtf8(bytes) !== -1) return "SKILL.md is not UTF-8 text";
    return { bytes, text: bytes.toString("utf8") };
  } finally {
    await handle.close();
  }
}

/** The trust entries that would load every valid project skill not trusted now. */
export function trustEntriesOf(set: Pick<SkillSet, "untrusted">): TrustEntry[] {
  return set.untrusted.map((skill) => skill.entry);
}

async function realOrResolved(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}
