import { lstatSync, readFileSync, rmdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { strictlyWithin } from "../paths.js";

/**
 * The bwrap mounts that keep, inside the sandbox, the workspace's files that become code or
 * instructions outside it read-only: git's `config` and `hooks/` (of the `.git` folder, or of
 * the folder a `.git` file names when it lies in the workspace, and of its `commondir`), the
 * `.git` file itself, and mini-agent's project files (`.mcp.json`, `.mini-agent/`,
 * `.agents/skills/`, `.claude/skills/`). A folder holding them (`.git`, `.agents`, `.claude`)
 * is bound onto itself, so it cannot be renamed away and made again. One that does not exist
 * gets an empty read-only folder, so it cannot be created: bwrap makes its mount point in the
 * workspace, and `made` lists those for `removeMountPoints` once the command is over. A
 * repository's `modules/` (submodules) is kept read-only where it exists.
 */
export function protectedMounts(workspace: string): { args: string[]; made: string[] } {
  const args: string[] = [];
  const made: string[] = [];
  const readOnly = (path: string) => args.push("--ro-bind", path, path);
  const keepOrRefuse = (path: string) => {
    if (kind(path) !== "absent") return readOnly(path);
    args.push("--tmpfs", path, "--remount-ro", path);
    made.push(path);
  };
  const gitFolder = (folder: string) => {
    args.push("--bind", folder, folder);
    keepOrRefuse(join(folder, "config"));
    keepOrRefuse(join(folder, "hooks"));
    for (const name of ["config.worktree", "modules"])
      if (kind(join(folder, name)) !== "absent") readOnly(join(folder, name));
  };
  const dotGit = join(workspace, ".git");
  const git = kind(dotGit);
  if (git === "folder") gitFolder(dotGit);
  else if (git === "absent") keepOrRefuse(dotGit);
  else {
    readOnly(dotGit);
    for (const folder of gitFolders(dotGit, git))
      if (strictlyWithin(workspace, folder)) gitFolder(folder);
  }
  keepOrRefuse(join(workspace, ".mcp.json"));
  keepOrRefuse(join(workspace, ".mini-agent"));
  for (const home of [".agents", ".claude"]) {
    const path = join(workspace, home);
    if (kind(path) !== "folder") keepOrRefuse(path);
    else {
      args.push("--bind", path, path);
      keepOrRefuse(join(path, "skills"));
    }
  }
  return { args, made };
}

/** Removes the empty mount points bwrap made for `protectedMounts`, deepest first. */
export function removeMountPoints(made: string[]): void {
  for (const path of [...made].reverse()) {
    try {
      rmdirSync(path);
    } catch {
      // Not empty, or gone: someone else's now.
    }
  }
}

type Kind = "absent" | "folder" | "file" | "link" | "other";

function kind(path: string): Kind {
  const info = (() => {
    try {
      return lstatSync(path);
    } catch {
      return undefined;
    }
  })();
  if (info === undefined) return "absent";
  if (info.isDirectory()) return "folder";
  if (info.isFile()) return "file";
  return info.isSymbolicLink() ? "link" : "other";
}

/** The git folder a `.git` file names, and its `commondir` (a linked worktree's repository). */
function gitFolders(dotGit: string, what: Kind): string[] {
  if (what !== "file") return [];
  const named = /^gitdir: (.+?)\r?\n?$/.exec(smallText(dotGit) ?? "")?.[1];
  if (named === undefined) return [];
  const folder = resolve(join(dotGit, ".."), named);
  if (kind(folder) !== "folder") return [];
  const common = smallText(join(folder, "commondir"))?.trim();
  const commonFolder = common ? resolve(folder, common) : undefined;
  return commonFolder && kind(commonFolder) === "folder" ? [folder, commonFolder] : [folder];
}

function smallText(path: string): string | undefined {
  try {
    return kind(path) === "file" ? readFileSync(path, "utf8").slice(0, 4096) : undefined;
  } catch {
    return undefined;
  }
}
