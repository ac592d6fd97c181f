import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bashTool } from "../src/tools/bash.js";
import { gitRepository } from "./support/repository.js";
import { realSandbox, useOutsideFolders } from "./support/sandbox.js";

const outsideFolder = useOutsideFolders();
const sandboxed = await realSandbox();
const hasGit = spawnSync("git", ["--version"]).status === 0;

const env = (home: string) => ({ PATH: process.env.PATH, HOME: home });

/** Runs `command` in the sandbox of `root`; its output and status, line by line. */
async function sandboxedRun(root: string, home: string, command: string): Promise<string[]> {
  const bash = bashTool(root, { env: env(home), sandbox: { mode: "required" } });
  return (await bash.execute({ command })).content.split("\n");
}

/** For each path: `path: ok` when the shell command on it succeeded, else `path: refused`. */
const each = (paths: string[], action: string) =>
  paths
    .map(
      (path) =>
        `if { ${action.replaceAll("P", `'${path}'`)}; } 2>/dev/null; then echo '${path}: ok'; else echo '${path}: refused'; fi`,
    )
    .join("; ");

describe.skipIf(!sandboxed)("files that become code outside the sandbox, in the sandbox", () => {
  it("keeps git's configuration and hooks and mini-agent's project files read-only where they exist", async () => {
    const home = await outsideFolder("home");
    const root = join(home, "project");
    await mkdir(root);
    const git = await gitRepository(root);
    const files = {
      ".git/config": "[core]\n",
      ".git/hooks/pre-commit.sample": "#!/bin/sh\n",
      ".mcp.json": "{}\n",
      ".mini-agent/config.json": "{}\n",
      ".agents/skills/a/SKILL.md": "a\n",
      ".claude/skills/b/SKILL.md": "b\n",
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(root, path, ".."), { recursive: true });
      await writeFile(join(root, path), text);
    }
    const paths = Object.keys(files);
    const output = await sandboxedRun(
      root,
      home,
      [
        each(paths, "echo forged >> P"),
        each(
          [
            ".git/hooks/post-checkout",
            ".mini-agent/new.json",
            ".agents/skills/c",
            ".claude/skills/d",
          ],
          "touch P",
        ),
        each(
          [".git", ".agents", ".claude", ".mini-agent", ".mcp.json", ".git/hooks"],
          "mv P P.moved",
        ),
        each([".git/objects/x", ".git/refs/heads/y", ".agents/notes.md", "notes.md"], "touch P"),
      ].join("; "),
    );
    expect(output).toEqual([
      ...paths.map((path) => `${path}: refused`),
      ".git/hooks/post-checkout: refused",
      ".mini-agent/new.json: refused",
      ".agents/skills/c: refused",
      ".claude/skills/d: refused",
      ...[".git", ".agents", ".claude", ".mini-agent", ".mcp.json", ".git/hooks"].map(
        (path) => `${path}: refused`,
      ),
      ".git/objects/x: ok",
      ".git/refs/heads/y: ok",
      ".agents/notes.md: ok",
      "notes.md: ok",
      "[exit code 0]",
    ]);
    for (const [path, text] of Object.entries(files))
      expect(await readFile(join(root, path), "utf8")).toBe(text);
    expect((await readdir(git)).sort()).toEqual(["HEAD", "config", "hooks", "objects", "refs"]);
  });

  it("refuses to create them where they do not exist, and leaves no trace of the refusal", async () => {
    const home = await outsideFolder("home");
    const root = join(home, "project");
    await mkdir(root);
    await writeFile(join(root, "main.ts"), "x\n");
    const created = [
      ".git/config",
      ".mcp.json",
      ".mini-agent/config.json",
      ".agents/skills/a",
      ".claude/skills/b",
    ];
    const output = await sandboxedRun(
      root,
      home,
      `${each(created, 'mkdir -p "$(dirname P)" && echo forged > P')}; ${each(["notes.md"], "touch P")}`,
    );
    expect(output).toEqual([
      ...created.map((path) => `${path}: refused`),
      "notes.md: ok",
      "[exit code 0]",
    ]);
    expect((await readdir(root)).sort()).toEqual(["main.ts", "notes.md"]);
  });

  it.skipIf(!hasGit)(
    "lets git work in the sandbox: commits are made, the configuration stays",
    async () => {
      const home = await outsideFolder("home");
      const root = join(home, "project");
      await mkdir(root);
      const gitEnv = { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: "1" };
      execFileSync("git", ["init", "-q"], { cwd: root, env: gitEnv });
      const config = await readFile(join(root, ".git/config"), "utf8");
      const output = await sandboxedRun(
        root,
        home,
        "echo x > a.txt && git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one && git log --format=%s; git config core.fsmonitor 'id' 2>&1 | sed 's/: .*//'",
      );
      expect(output).toEqual(["one", "error", "[exit code 0]"]);
      expect(await readFile(join(root, ".git/config"), "utf8")).toBe(config);
    },
  );

  it("fails the call, loudly, when what the command made could not all be checked", async () => {
    const home = await outsideFolder("home");
    const root = join(home, "project");
    await mkdir(root);
    // Past PATH_MAX (4,096 bytes) from the root, no folder can be listed by its full path.
    const name = "d".repeat(200);
    const bash = bashTool(root, { env: env(home), sandbox: { mode: "required" } });
    const result = await bash
      .execute({
        command: `for i in $(seq 24); do mkdir ${name} && cd ${name} || exit 1; done; mkdir .vscode && echo '{}' > .vscode/tasks.json`,
      })
      // rm walks by relative names, where the folder's cleanup stops at its full path's length.
      .finally(() => execFileSync("rm", ["-rf", name], { cwd: root }));
    const lines = result.content.split("\n");
    expect(result.isError).toBe(true);
    expect(lines.filter((line) => line.startsWith("- could not look into"))).toHaveLength(1);
    expect(lines.at(-1)).toBe(
      "[protected files: not all checked or put right (the lines above): look before you run git or open the project]",
    );
  });

  it("keeps the user's start-up files as they were when the workspace is the home folder", async () => {
    const home = await outsideFolder("home");
    await mkdir(join(home, ".ssh"));
    await writeFile(join(home, ".ssh/id"), "secret\n");
    await writeFile(join(home, ".bashrc"), "# mine\n");
    const was = process.env.HOME;
    process.env.HOME = home;
    try {
      const output = await sandboxedRun(
        home,
        home,
        `${each([".bashrc", ".profile", ".config/git/config"], 'mkdir -p "$(dirname P)" && echo evil >> P')}; cat .ssh/id; echo done`,
      );
      const why =
        "the user's own start-up and configuration files (the home folder's dot files and bin/): shells, git and other programs run what they name";
      expect(output).toEqual([
        ".bashrc: refused",
        ".profile: ok",
        ".config/git/config: ok",
        "cat: .ssh/id: No such file or directory",
        "done",
        "[exit code 0]",
        "[protected files: a command in the sandbox may not change what runs outside it; undone]",
        `- moved aside .profile, which the command created (${why}): now .profile.mini-agent-removed`,
        `- moved aside .config/git/config, which the command created (${why}): now config.mini-agent-removed`,
      ]);
      expect(await readFile(join(home, ".bashrc"), "utf8")).toBe("# mine\n");
      await expect(readFile(join(home, ".profile"))).rejects.toThrow(/ENOENT/);
      await expect(readFile(join(home, ".config/git/config"))).rejects.toThrow(/ENOENT/);
    } finally {
      process.env.HOME = was;
    }
  });
});
