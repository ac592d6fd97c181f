import { realpathSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { homedir, userInfo } from "node:os";
import { isAbsolute, join, relative, sep } from "node:path";

/**
 * The protected-file set: the workspace's files that git, an MCP launcher, an editor or another
 * agent later runs, or reads as configuration that names a program, outside the sandbox. One
 * rule for every writer: `write` and `edit`, a redirect's target, the sandbox's read-only mounts
 * and the check after each sandboxed call all ask `protectedWhy` (or `whyByNames`, its pure core).
 * Names are compared without case (on a case-insensitive disk `.GIT/Config` is `.git/config`), at
 * any depth (a nested repository, a folder of clones, a subfolder that becomes a workspace).
 *
 * - A git folder (a folder named `.git`, or one holding a `HEAD` file or link: a bare repository,
 *   a submodule's or a linked worktree's folder) is protected whole, except what git writes while
 *   it adds, commits, stashes or merges (`gitWrites`): git reads every other file there as a
 *   location, as configuration or as a to-do list (`config*`, `commondir`, `gitdir`, `hooks/`,
 *   `info/`, `objects/info/alternates`, `rebase-merge/`, …), and a name git adds later is
 *   protected until it is known.
 * - A `.git` entry (a `gitdir:` file says where the repository is), and a `HEAD` that would make
 *   a folder a git folder.
 * - `toolFolders` and `toolFileNames`: mini-agent's own project files, and the files other tools
 *   start programs from when the project is opened or committed.
 */
export function whyByNames(
  names: readonly string[],
  gitFolder: (at: number) => boolean,
  writer: Writer = "tool",
  homes: Homes = [],
): string | undefined {
  return whyByLowerNames(
    names.map((name) => name.toLowerCase()),
    gitFolder,
    writer,
    homes,
  );
}

/**
 * Who writes: a `tool` (`write`, `edit`, a redirect the rules judge) has no reason to write in a
 * git folder at all, so all of it is protected; a `sandboxed` command may write what git writes
 * while it commits (`gitWrites`), because the check after it reads what those files now lead to
 * (`settleRefs`, `settleObjects`).
 */
export type Writer = "tool" | "sandboxed";

/** `whyByNames` of names already lower-cased (a walk lower-cases each folder's once). */
export function whyByLowerNames(
  lower: readonly string[],
  gitFolder: (at: number) => boolean,
  writer: Writer = "tool",
  homes: Homes = [],
): string | undefined {
  for (const home of homes)
    if (home === null) return homeWhy;
    else if (lower.length > home.length && home.every((name, at) => lower[at] === name)) {
      const first = lower[home.length] ?? "";
      if (first.startsWith(".") || first === "bin") return homeWhy;
    }
  // The deepest git folder the path lies in: its index in `names`, -1 for the root itself.
  for (let at = lower.length - 2; at >= -1; at--) {
    if (at >= 0 ? lower[at] === ".git" || gitFolder(at) : gitFolder(-1)) {
      const inner = lower.slice(at + 1);
      return gitFolderWhy(inner) ?? (writer === "tool" ? gitWritesWhy : undefined);
    }
  }
  const last = lower.at(-1) ?? "";
  if (last === ".git") return dotGitWhy;
  if (last === "head") return headWhy;
  return toolWhy(lower);
}

/**
 * The files one session protects beyond the rule of names, by real path, each with why: the
 * workspace files its hooks run (docs/hooks.md). A session makes it once and gives it wherever
 * it gives the workspace (the tools, the policy, the sandbox's entry), so every writer asks the
 * same set: `protectedWhy`, the read-only mounts (`protectedMounts`) and the check after each
 * sandboxed command (`guardProtected`). A library user who passes none protects the names alone.
 */
export type MoreProtected = ReadonlyMap<string, string>;

/** Why `path` is one of `more`'s paths or lies in a folder of them, or `undefined`. */
export function moreWhy(more: MoreProtected | undefined, path: string): string | undefined {
  if (more === undefined || more.size === 0) return undefined;
  for (let at = path.length; at > 0; at = path.lastIndexOf("/", at - 1)) {
    const why = more.get(path.slice(0, at));
    if (why !== undefined) return why;
  }
  return undefined;
}

/**
 * Why writing the real path `real`, inside the real workspace root `realRoot`, changes a
 * protected file, or `undefined`. A folder on its path is a git folder when it is named `.git` or
 * holds a `HEAD` now. `more`: the session's own protected files.
 */
export async function protectedWhy(
  realRoot: string,
  real: string,
  more?: MoreProtected,
): Promise<string | undefined> {
  const mine = moreWhy(more, real);
  if (mine !== undefined) return mine;
  const rel = relative(realRoot, real);
  if (rel === "") return undefined;
  const names = rel.split(sep);
  const heads = await Promise.all(
    names.slice(0, -1).map((_, at) => holdsHead(join(realRoot, ...names.slice(0, at + 1)))),
  );
  const rootHead = await holdsHead(realRoot);
  return whyByNames(
    names,
    (at) => (at === -1 ? rootHead : heads[at] === true),
    "tool",
    homesIn(realRoot),
  );
}

const homeWhy =
  "the user's own start-up and configuration files (the home folder's dot files and bin/): shells, git and other programs run what they name";

/**
 * Where the user's home folders (`$HOME` and the one the system's user database names, real
 * paths) lie under the real workspace root `realRoot`, each as lower-cased names (none: the root
 * is that folder); those the root does not hold are left out. A workspace that holds one
 * (mini-agent started in `~`, or above it) holds the user's own start-up and configuration files:
 * every entry at the home folder's top whose name begins with a dot (`.bashrc`, `.gitconfig`,
 * `.config/`, `.local/bin/`) and `bin/`, at any depth, are protected.
 */
export function homesIn(realRoot: string): Homes {
  const homes = new Set<string>();
  for (const home of [() => homedir(), () => userInfo().homedir])
    try {
      homes.add(realpathSync(home()));
    } catch {
      // No such folder: nothing of it lies in the workspace.
    }
  const found: (string[] | null)[] = [];
  for (const home of homes) {
    const rel = relative(realRoot, home);
    if (rel === "") found.push([]);
    else if (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`))
      found.push(rel.split(sep).map((name) => name.toLowerCase()));
    else {
      // The root inside the home folder's dot files or bin/ (`~/.config`, a dotfiles clone):
      // all of it is the user's configuration.
      const inside = relative(home, realRoot);
      const first = inside.split(sep)[0] ?? "";
      if (!isAbsolute(inside) && first !== ".." && (first.startsWith(".") || first === "bin"))
        found.push(null);
    }
  }
  return found;
}

/**
 * Where the user's home folders lie under a workspace root (`homesIn`): each as lower-cased
 * names, or `null` when the root itself lies among the home folder's start-up and configuration
 * files, all of it protected.
 */
export type Homes = readonly (readonly string[] | null)[];

/** A folder holding a `HEAD` file or link is a git folder, whatever its name (a folder named `HEAD` is not). */
async function holdsHead(folder: string): Promise<boolean> {
  const info = await lstat(join(folder, "HEAD")).catch(() => undefined);
  return info !== undefined && !info.isDirectory();
}

const dotGitWhy = "a .git file tells git where the repository and its configuration are";
const headWhy = "a HEAD file makes its folder a git repository, whose configuration git reads";
const hookWhy = "git runs the files in a hooks folder as programs";
const configWhy = "git reads it as configuration, which can name programs git runs";
const placeWhy = "git reads it as the place of the repository's files and configuration";
const gitWritesWhy =
  "git reads it for the commits and files a checkout writes, which can hold protected files";
const gitWhy = "git reads the files of a git folder as configuration, except what it writes itself";

/**
 * What git itself writes in a git folder while it adds, commits, stashes, merges, rebases,
 * cherry-picks, bisects, fetches into refs or packs objects: the one part of a git folder that
 * may change (and a split index's `sharedindex.*`). Not `shallow`: it hides commits from the
 * check after a command, which reads the history a ref newly leads to. By the first name inside
 * the git folder; `objects/` but its `info/` alternates.
 */
const gitWrites = new Set([
  "objects",
  "refs",
  "logs",
  "index",
  "head",
  "orig_head",
  "fetch_head",
  "merge_head",
  "merge_msg",
  "merge_mode",
  "merge_rr",
  "merge_autostash",
  "auto_merge",
  "cherry_pick_head",
  "revert_head",
  "rebase_head",
  "bisect_log",
  "bisect_start",
  "bisect_terms",
  "bisect_names",
  "bisect_expected_rev",
  "bisect_ancestors_ok",
  "bisect_first_parent",
  "commit_editmsg",
  "tag_editmsg",
  "squash_msg",
  "notes_editmsg",
  "packed-refs",
  "lfs",
  "gc.pid",
  "gc.log",
]);

/**
 * Whether `inner`, a path inside a git folder, is one of git's files that name commits a later
 * checkout, `stash pop`, `reset` or `restore` brings into the work tree: `refs/` (branches, tags,
 * the stash, replacements, notes), `logs/` (reflogs: `HEAD@{1}`), `packed-refs`, `HEAD` and the
 * other `*_HEAD`, `MERGE_AUTOSTASH`, bisect's, and the `index`. A lock file is not one.
 */
export function isRefFile(inner: string): boolean {
  const lower = inner.toLowerCase();
  if (lower.endsWith(".lock")) return false;
  if (/^(?:refs|logs)(?:\/|$)/.test(lower)) return true;
  // Every other file git writes at the top of its folder: git reads any of them as a ref when a
  // symbolic ref or a reflog's "moving from" names it (`ref: COMMIT_EDITMSG`, `git checkout -`).
  return !/\/|^objects|^lfs|^sharedindex\./.test(lower);
}

/** Why a path inside a git folder (`inner`: its lower-cased names there) is protected. */
function gitFolderWhy(inner: readonly string[]): string | undefined {
  const [first = "", second, third] = inner;
  const base = first.endsWith(".lock") ? first.slice(0, -".lock".length) : first;
  if (first === "objects")
    return second === "info" && (third === "alternates" || third === "http-alternates")
      ? "git reads objects from the folders it names"
      : undefined;
  if (gitWrites.has(base) || (second === undefined && base.startsWith("sharedindex.")))
    return undefined;
  const last = inner.at(-1) ?? "";
  if (inner.includes("hooks")) return hookWhy;
  if (last.startsWith("config")) return configWhy;
  if (last === "commondir" || last === "gitdir") return placeWhy;
  return gitWhy;
}

/**
 * Files other programs run, or read as configuration that starts programs, when the project is
 * opened, committed or given to an agent: by a folder name anywhere on the path (all inside it)
 * or a file name, each with why. docs/sandbox.md lists them.
 */
const toolFolders: ReadonlyMap<string, string> = new Map([
  [".mini-agent", "mini-agent reads it as the project's configuration"],
  [".claude", "Claude Code runs the hooks and MCP servers it names, and reads it as instructions"],
  [".gemini", "Gemini CLI runs the commands and MCP servers its settings name"],
  [".codex", "Codex reads it as configuration that names programs"],
  [".cursor", "Cursor starts the MCP servers and rules it names"],
  [".vscode", "the editor runs the tasks, launch and MCP servers its settings name"],
  [".zed", "Zed runs the tasks and context servers its settings name"],
  [".husky", "git runs these hooks when core.hooksPath names the folder (husky)"],
  [".opencode", "OpenCode runs the plugins, commands and MCP servers it names"],
  [".lefthook", "git's hooks run the scripts lefthook keeps there"],
  [".lefthook-local", "git's hooks run the scripts lefthook keeps there"],
  [".idea", "JetBrains editors run the run configurations and tools it names"],
  [".devcontainer", "the editor runs the commands a dev container's configuration names"],
  [".helix", "Helix starts the language servers its configuration names"],
  [".mise", "mise runs the tasks and hooks its configuration names"],
  [".qwen", "Qwen Code runs the commands and MCP servers its settings name"],
  [".iflow", "iFlow CLI runs the commands and MCP servers its settings name"],
  [".roo", "Roo Code starts the MCP servers it names"],
  [".kilocode", "Kilo Code starts the MCP servers it names"],
  [".kiro", "Kiro runs the hooks and MCP servers it names"],
  [".windsurf", "Windsurf runs the hooks it names"],
  [".clinerules", "Cline runs the hooks it keeps there"],
  [".continue", "Continue starts the MCP servers it names"],
  [".amazonq", "Amazon Q starts the MCP servers it names"],
  [".junie", "Junie starts the MCP servers it names"],
  [".factory", "Factory's agent starts the MCP servers it names"],
  [".sl", "Sapling runs the hooks its configuration names"],
  [".trae", "Trae starts the MCP servers it names"],
  [".augment", "Augment starts the MCP servers its settings name"],
  [".theia", "Theia runs the tasks and launch configurations it names"],
  [".fleet", "Fleet runs the run configurations it names"],
]);

const toolFileNames: ReadonlyMap<string, string> = new Map([
  [".mcp.json", "it names the MCP servers mini-agent starts"],
  [".pre-commit-config.yaml", "git's pre-commit hook runs the commands it names"],
  ["opencode.json", "OpenCode starts the MCP servers it names"],
  ["opencode.jsonc", "OpenCode starts the MCP servers it names"],
  ["crush.json", "Crush starts the MCP servers it names"],
  [".crush.json", "Crush starts the MCP servers it names"],
  [".aider.conf.yml", "aider runs the lint and test commands it names"],
  [".devcontainer.json", "the editor runs the commands a dev container's configuration names"],
  [".huskyrc", "git's hooks run the commands it names (husky 4)"],
  [".huskyrc.json", "git's hooks run the commands it names (husky 4)"],
  [".huskyrc.js", "git's hooks run the commands it names (husky 4)"],
  ["husky.config.js", "git's hooks run the commands it names (husky 4)"],
  ["hk.pkl", "git's hooks run the commands it names (hk)"],
  ["captainhook.json", "git's hooks run the commands it names (CaptainHook)"],
  ["grumphp.yml", "git's hooks run the commands it names (GrumPHP)"],
  ["prek.toml", "git's hooks run the commands it names (prek)"],
  [".rtx.toml", "mise runs the tasks and hooks it names"],
  [".yarnrc.yml", "yarn runs the program its yarnPath names, and the plugins it lists"],
  [".yarnrc", "yarn runs the program its yarn-path names"],
  [".npmrc", "npm runs the shell and git programs it names (script-shell, git)"],
  [".nvim.lua", "Neovim runs it when the folder is opened (exrc)"],
  [".exrc", "Vim and Neovim run it when the folder is opened (exrc)"],
  [".vimrc", "Vim runs it when the folder is opened (exrc)"],
  [".nvimrc", "Neovim runs it when the folder is opened (exrc)"],
  [".pnp.cjs", "yarn's Plug'n'Play loader: node loads it for every script yarn runs"],
  [".pnp.loader.mjs", "yarn's Plug'n'Play loader: node loads it for every script yarn runs"],
  [".pnpmfile.cjs", "pnpm runs it at every install"],
  ["pnpm-workspace.yaml", "pnpm reads settings from it that name programs it runs"],
  [
    "rust-analyzer.toml",
    "rust-analyzer runs the build commands it names when the project is opened",
  ],
  [".pdbrc", "Python's debugger runs it when it starts in the folder"],
  [".rprofile", "R and RStudio run it when they start in the folder"],
  [".irbrc", "irb and rails console run it when they start in the folder"],
  [".pryrc", "pry runs it when it starts in the folder"],
  [".octaverc", "Octave runs it when it starts in the folder"],
  ["rust-toolchain.toml", "rustup runs the cargo and rustc of the toolchain path it names"],
  ["rust-toolchain", "rustup runs the cargo and rustc of the toolchain path it names"],
  [".renviron", "R reads it when it starts in the folder, and runs the programs it names"],
  [".perldb", "Perl's debugger runs it when it starts in the folder"],
]);

/** mise's configuration files, each spelling it reads: `mise.toml`, `.mise.dev.toml`, `mise.local.toml`, … */
const mise = /^\.?mise(\.[\w-]+)?\.toml$/;

/** lefthook's configuration files, each spelling it reads: `lefthook.yml`, `.lefthook-local.toml`, … */
const lefthook = /^\.?lefthook(-local)?\.(ya?ml|toml|jsonc?)$/;

/** Files inside another program's own folder that it runs: Mercurial's `hgrc`, jj's configuration. */
function otherVcsWhy(lower: readonly string[]): string | undefined {
  const [folder, second, third] = lower.slice(-3);
  if (lower.at(-2) === ".hg" && lower.at(-1) === "hgrc")
    return "Mercurial runs the hooks its configuration names";
  if (lower.at(-2) === ".hg" && lower.at(-1) === "sharedpath")
    return "Mercurial reads the repository, and its configuration, at the path it names";
  if (lower.at(-2) === ".jj" && lower.at(-1) === "repo")
    return "jj reads the repository, and its configuration, at the path a repo file names";
  if (folder === ".jj" && second === "repo" && third === "config.toml")
    return "jj runs the programs its configuration names";
  if (lower.includes("mise") && lower.at(-1)?.endsWith(".toml"))
    return "mise runs the tasks and hooks its configuration names";
  if (lower.at(-2) === "hooks" && lower.at(-3) === ".github")
    return "GitHub Copilot's agent runs the hooks it names";
  return undefined;
}

const skillsWhy = "project skills become the agent's instructions";
const commandsWhy = "project commands become the agent's instructions";

/**
 * Folders of which only some files are protected (`.cargo/config.toml`, `.hg/hgrc`, …): a link or
 * a file of that name is protected itself, since a program reads the protected file through it
 * wherever it leads. A real folder of that name is not: what else it holds is the project's.
 */
const throughFolders: ReadonlyMap<string, string> = new Map([
  [".cargo", "cargo reads its configuration through it"],
  [".hg", "Mercurial reads its configuration through it"],
  [".jj", "jj reads its configuration through it"],
  [".yarn", "yarn runs the release and plugins it finds through it"],
  [".github", "GitHub Copilot's agent runs the hooks it finds through it"],
  [".config", "lefthook and mise read their configuration through it"],
  [".run", "JetBrains editors run the run configurations they find through it"],
  [".agents", "mini-agent reads the project's skills and commands through it"],
  [".mvn", "Maven reads its JVM and build options through it"],
]);

function toolWhy(lower: readonly string[]): string | undefined {
  for (const [at, name] of lower.entries()) {
    if (name === ".agents" || name === ".claude") {
      if (lower[at + 1] === "skills") return skillsWhy;
      if (lower[at + 1] === "commands") return commandsWhy;
    }
    if (name === ".yarn" && (lower[at + 1] === "releases" || lower[at + 1] === "plugins"))
      return "yarn runs the release and plugins its yarnPath and plugin list name";
    if (name === ".cargo" && (lower[at + 1] === "config" || lower[at + 1] === "config.toml"))
      return "cargo runs the programs it names (rustc-wrapper, runner, linker), also when rust-analyzer opens the project";
    if (name === ".run" && lower.at(-1)?.endsWith(".run.xml"))
      return "JetBrains editors run the run configurations kept there";
    const folder = toolFolders.get(name);
    if (folder !== undefined && at < lower.length - 1) return folder;
  }
  const last = lower.at(-1) ?? "";
  if (throughFolders.has(last)) return throughFolders.get(last);
  if (lower.at(-2) === ".mvn" && (last === "jvm.config" || last === "maven.config"))
    return "Maven reads the JVM and build options it names when it starts";
  if (lefthook.test(last)) return "git's hooks run the commands it names (lefthook)";
  if (mise.test(last)) return "mise runs the tasks and hooks it names";
  if (last.endsWith(".code-workspace"))
    return "the editor runs the tasks and launch configurations a workspace file names";
  return toolFileNames.get(last) ?? toolFolders.get(last) ?? otherVcsWhy(lower);
}
