import { lstat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { ToolError } from "./define.js";
import { displayPath, type Resolved } from "./path.js";

/**
 * Why writing the real path `real` (inside the real workspace root `realRoot`) changes a file
 * that becomes code or instructions outside the sandbox, or `undefined` for any other file:
 *
 * - git's configuration and hooks: `config`, `config.worktree` and everything under `hooks/` in
 *   a `.git` folder at any depth (`.git/modules/*` and `.git/worktrees/*` included), or in a
 *   folder holding a `HEAD` (a git folder a `gitdir:` file names); and a `.git` entry itself,
 *   which says where the repository is;
 * - mini-agent's project files: `.mcp.json`, `.mini-agent/**`, `.agents/skills/**`,
 *   `.claude/skills/**`, at any depth (a subfolder can become a workspace of its own).
 *
 * Names are compared without case: on a case-insensitive disk `.GIT/Config` is `.git/config`.
 */
export async function protectedWhy(realRoot: string, real: string): Promise<string | undefined> {
  const parts = relative(realRoot, real).split(sep);
  const names = parts.map((part) => part.toLowerCase());
  const last = names.at(-1) ?? "";
  if (last === ".git")
    return "a .git file tells git where the repository and its configuration are";
  if (last === ".mcp.json") return "it names the MCP servers mini-agent starts";
  if (names.includes(".mini-agent")) return "mini-agent reads it as the project's configuration";
  if (names.some((name, at) => isSkillsHome(name) && names[at + 1] === "skills"))
    return "project skills become the agent's instructions";
  const config = last === "config" || last === "config.worktree" ? [names.length - 1] : [];
  const hooks = names.flatMap((name, at) => (name === "hooks" ? [at] : []));
  for (const at of [...config, ...hooks]) {
    if (at === 0) continue;
    const why = names[at] === "hooks" ? hookWhy : configWhy;
    if (names.slice(0, at).includes(".git")) return why;
    if (await holdsHead(join(realRoot, ...parts.slice(0, at)))) return why;
  }
  return undefined;
}

const hookWhy = "git runs the files in a hooks folder as programs";
const configWhy = "git reads it as configuration, which can name programs git runs";
const isSkillsHome = (name: string) => name === ".agents" || name === ".claude";

/** A folder with a `HEAD` entry is a git folder, whatever its name. */
async function holdsHead(folder: string): Promise<boolean> {
  return (await lstat(join(folder, "HEAD")).catch(() => undefined)) !== undefined;
}

/**
 * Whether the call now running may change a protected file, by its real path: the CLI answers
 * yes only for the one file its policy asked the user about and the user approved.
 */
export type ProtectedWrites = (realPath: string) => boolean;

/**
 * Throws unless `target` (resolved to the real path the tool writes) is no protected file, or
 * `approved` says this call may change it. Called on the path that is then opened and verified,
 * so a link or a swapped folder leading to a protected file is that file.
 */
export async function refuseProtected(
  target: Resolved,
  verb: "edit" | "write",
  approved: ProtectedWrites = () => false,
): Promise<void> {
  const why = await protectedWhy(target.realRoot, target.path);
  if (why === undefined || approved(target.path)) return;
  const shown = displayPath(target.realRoot, target.path);
  throw new ToolError(
    `${shown} is protected (${why}): ${verb} changes it only in a call the user approved for it`,
  );
}
