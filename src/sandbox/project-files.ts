import { lstatSync, readdirSync, readFileSync, realpathSync, rmdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { strictlyWithin } from "../paths.js";
import { homesIn, type MoreProtected, whyByNames } from "../protected/files.js";

/**
 * The bwrap mounts that keep, inside the sandbox, the protected files (`whyByNames`, the one set
 * in `src/protected/`) at the workspace's top read-only: in the `.git` folder (or the folder a
 * `.git` file names when it lies in the workspace, and its `commondir`) every entry git does not
 * write itself (`config`, `hooks/`, `info/`, `modules/`, …), the `.git` file itself, and each
 * other tool's file or folder at the top (`.mcp.json`, `.mini-agent/`, `.claude/`, `.vscode/`, …).
 * A folder holding them (`.git`, `.agents`) is bound onto itself, so it cannot be renamed away
 * and made again. Where `.git`'s `config` and `hooks/`, `.mcp.json`, `.mini-agent/`,
 * `.agents/skills/` or `.claude/` do not exist, an empty read-only folder stands in their place,
 * so they cannot be created: bwrap makes its mount point in the workspace, and `made` lists those
 * for `removeMountPoints` once the command is over. Deeper protected files are settled by the
 * check after the command (`guardProtected`): a mount each would make bwrap's start grow with
 * the square of their number. The session's own protected files (`more`: the files its hooks
 * run, a few) are each kept read-only where they are.
 */
export function protectedMounts(
  workspace: string,
  more?: MoreProtected,
): { args: string[]; made: string[] } {
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
    for (const name of names(folder)) {
      const lower = name.toLowerCase();
      if (lower === "config" || lower === "hooks") continue;
      const what = kind(join(folder, name));
      if (what !== "file" && what !== "folder") continue;
      if (whyByNames([".git", name], () => false, "sandboxed") !== undefined)
        readOnly(join(folder, name));
    }
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
  const top = names(workspace);
  for (const name of [".mcp.json", ".mini-agent", ".claude"])
    if (!top.includes(name)) keepOrRefuse(join(workspace, name));
  const agents = join(workspace, ".agents");
  if (kind(agents) !== "folder") keepOrRefuse(agents);
  else {
    args.push("--bind", agents, agents);
    keepOrRefuse(join(agents, "skills"));
    if (kind(join(agents, "commands")) !== "absent") readOnly(join(agents, "commands"));
  }
  const homes = homesIn(workspace);
  for (const name of top) {
    if (name === ".git" || name === ".agents") continue;
    const what = kind(join(workspace, name));
    // A folder is kept whole only where all of it is protected (`.vscode/`, not `.github/`).
    const mine =
      what === "folder"
        ? whyByNames([name, "x"], () => false, "tool", homes)
        : whyByNames([name], () => false, "tool", homes);
    // A link is left to the check after the command: bwrap would follow it.
    if (mine !== undefined && (what === "file" || what === "folder"))
      readOnly(join(workspace, name));
  }
  // The session's own protected files (the files its hooks run), each bound onto itself.
  const realWorkspace = realOf(workspace);
  for (const path of more?.keys() ?? []) {
    if (!strictlyWithin(realWorkspace, path)) continue;
    const at = join(workspace, relative(realWorkspace, path));
    if (kind(at) === "file") readOnly(at);
  }
  return { args, made };
}

function realOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The names in `folder`, none when it cannot be read. */
function names(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
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
