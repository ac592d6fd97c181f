import { type Dirent, lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { within } from "../paths.js";
import { foldersDown, projectRoot } from "../project/root.js";
import { quietly, smallTextFile } from "../skills/read.js";
import { systemErrorMeaning } from "../system-errors.js";
import { COMMAND_NAME, type CommandFile, commandBounds, parseCommand } from "./command.js";

/** Where a command came from: the user's own folder, or the project's. */
export type CommandScope = "user" | "project";

/** A command found and valid: `/name` sends its prompt. */
export interface UserCommand extends CommandFile {
  name: string;
  scope: CommandScope;
  /** Its file as found (not resolved): what the user is told. */
  path: string;
}

/** One line about one file or folder of commands: the command is not loaded, or overridden. */
export interface CommandWarning {
  /** `/name`, or the folder's path when it is about a folder. */
  about: string;
  path: string;
  reason: string;
}

export interface CommandSet {
  /** By name. */
  commands: UserCommand[];
  warnings: CommandWarning[];
}

export interface CommandPlaces {
  workspace: string;
  /** The user's home: no project folder above it. */
  home: string;
  /** The state folder: its `commands/` holds the user's commands. */
  state: string;
  /** The names a command may not take: the front ends' own commands. */
  reserved: ReadonlySet<string>;
}

/** How far a look goes: the command files looked at in all. */
export const commandLookBound = 1000;

/**
 * The user's commands for a working folder, found afresh: the user's from the state folder's
 * `commands/`, then the project's from `.agents/commands` and `.claude/commands` in each folder
 * from the project root down to the working folder. The project root is the one `AGENTS.md` is
 * read from (`projectRoot`: a git repository the user owns, else the working folder itself), so
 * a command in a foreign repository above the working folder is never read. A command is a file
 * `NAME.md` directly in such a folder (subfolders are not read); a link is followed only to a
 * file in the same folder, and a folder that is a link only to one inside the project. A later
 * place overrides an earlier one of the same name (the deeper project folder wins, a project
 * command beats the user's), with a warning. A name `reserved` is refused with a warning: a
 * user's command never shadows the front ends' own. Each bad file is one warning, and nothing
 * else is lost by it.
 */
export async function discoverCommands(places: CommandPlaces): Promise<CommandSet> {
  const home = await realOrResolved(places.home);
  const state = await realOrResolved(places.state);
  const root = await projectRoot(places.workspace, { home });
  const look: Look = { warnings: [], files: 0, projectRoot: root.path, reserved: places.reserved };
  const folders: { path: string; scope: CommandScope }[] = [
    { path: join(state, "commands"), scope: "user" },
    ...foldersDown(await realOrResolved(places.workspace), root.path, state).flatMap((folder) =>
      [".agents", ".claude"].map((dot) => ({
        path: join(folder, dot, "commands"),
        scope: "project" as const,
      })),
    ),
  ];
  const byName = new Map<string, UserCommand>();
  for (const folder of folders) {
    for (const command of commandsIn(look, folder.path, folder.scope)) {
      const earlier = byName.get(command.name);
      if (earlier)
        look.warnings.push({
          about: `/${command.name}`,
          path: earlier.path,
          reason: `overridden by the ${command.scope} command ${command.path}`,
        });
      byName.set(command.name, command);
    }
  }
  const commands = [...byName.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return { commands, warnings: look.warnings };
}

interface Look {
  warnings: CommandWarning[];
  files: number;
  projectRoot: string;
  reserved: ReadonlySet<string>;
}

/** The valid commands of one folder, in name order (its warnings go to `look`). */
function commandsIn(look: Look, folder: string, scope: CommandScope): UserCommand[] {
  if (!quietly(() => statSync(folder))?.isDirectory()) return [];
  const real = quietly(() => realpathSync(folder));
  if (real === undefined) return [];
  const warn = (about: string, path: string, reason: string) => {
    look.warnings.push({ about, path, reason });
    return undefined;
  };
  if (scope === "project" && !within(look.projectRoot, real)) {
    warn(folder, folder, "a link leading outside the project: not searched");
    return [];
  }
  const found: UserCommand[] = [];
  for (const entry of entriesOf(folder, look)) {
    if (entry.name.startsWith(".") || !entry.name.endsWith(".md")) continue;
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    if (++look.files > commandLookBound) {
      if (look.files === commandLookBound + 1)
        warn(folder, folder, `more than ${commandLookBound} command files: the rest not read`);
      break;
    }
    const command = loadCommand(look, { folder, real, name: entry.name, scope });
    if (command) found.push(command);
  }
  return found;
}

/** The entries of `folder` by name; a folder that cannot be read is a warning, not "no commands". */
function entriesOf(folder: string, look: Look): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    look.warnings.push({
      about: folder,
      path: folder,
      reason: `cannot be read (${systemErrorMeaning(code)}): the commands in it are not loaded`,
    });
    return [];
  }
}

/** One file `NAME.md` of a commands folder whose real path is `real`: its command, or a warning. */
function loadCommand(
  look: Look,
  found: { folder: string; real: string; name: string; scope: CommandScope },
): UserCommand | undefined {
  const name = found.name.slice(0, -".md".length);
  const asFound = `${found.folder}${sep}${found.name}`;
  const path = found.scope === "project" ? shownPath(asFound, look.projectRoot) : asFound;
  const warn = (reason: string) => {
    look.warnings.push({ about: `/${name}`, path, reason: `${reason}: not loaded` });
    return undefined;
  };
  if (!COMMAND_NAME.test(name) || name.length > commandBounds.name)
    return warn(
      `the name is not at most ${commandBounds.name} letters, digits, "-" and "_" (what /NAME can be)`,
    );
  if (look.reserved.has(name)) return warn(`named like the built-in /${name}`);
  let file = `${found.real}${sep}${found.name}`;
  if (quietly(() => lstatSync(file))?.isSymbolicLink()) {
    const target = quietly(() => realpathSync(file));
    if (target === undefined) return warn("a dangling link");
    if (dirname(target) !== found.real) return warn("a link leading out of its folder");
    file = target;
  }
  const read = smallTextFile(file, "the file", commandBounds.fileBytes);
  if ("refused" in read) return warn(read.refused);
  const parsed = parseCommand(read.text);
  if ("refused" in parsed) return warn(parsed.refused);
  return { name, scope: found.scope, path, ...parsed };
}

/** A project's file relative to its root when it lies there; else as found. */
function shownPath(path: string, root: string): string {
  return within(root, path) ? relative(root, path) : path;
}

async function realOrResolved(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}
