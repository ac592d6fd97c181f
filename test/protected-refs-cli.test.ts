import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, toolResults, useCliSetup } from "./support/cli.js";
import { realSandbox } from "./support/sandbox.js";

/**
 * The second outside pass's finding: git's own files (objects, refs, the index) stay writable in
 * the sandbox, so a command can commit a protected file and point a branch, a tag, the stash, a
 * reflog or the index at it while the work tree holds nothing protected; the user's own
 * `git checkout`, `stash pop`, `restore` or `reset --hard HEAD@{1}` later writes it outside the
 * sandbox. Each case through the built CLI; then "the user" runs git and nothing protected appears.
 */
const setup = useCliSetup();
const hasGit = spawnSync("git", ["--version"]).status === 0;
const sandboxed = await realSandbox({ mode: "auto" });
const call = (id: string, name: string, input: Record<string, unknown>) =>
  stream(turn({ calls: [{ id, name, input }] }));
const commit = "git -c user.name=m -c user.email=m@example.com commit -q";
/** Redirects into protected files ask; a file moved into place is what the check after is for. */
/** A commit made without the work tree: a tree holding `.husky/pre-commit`, on top of HEAD. */
const crafted =
  "b=$(printf 'id > PWN\\n' | git hash-object -w --stdin) && " +
  "t=$(printf '100755 blob %s\\tpre-commit\\n' $b | git mktree) && " +
  "top=$(printf '040000 tree %s\\t.husky\\n' $t | git mktree) && " +
  "c=$(git -c user.name=m -c user.email=m@example.com commit-tree $top -p HEAD -m x) && ";

function git(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): string {
  const run = spawnSync("git", args, { cwd, env, encoding: "utf8" });
  return `${run.stdout}${run.stderr}`;
}

describe.skipIf(!hasGit || !sandboxed)(
  "a sandboxed command's commits never bring a protected file to the user's checkout",
  () => {
    it("undoes a branch, the stash, the index, a tag, a replacement and a reflog that lead to a protected file, and keeps a plain commit", async () => {
      const commands = [
        // a branch whose commit adds an editor's tasks, the work tree left clean
        `git checkout -q -b feature && printf '{}' > t && mkdir -p .vscode && mv t .vscode/tasks.json && git add .vscode/tasks.json && ${commit} -m tasks && git checkout -q main`,
        // the stash
        `printf '{}' > t && mkdir -p .zed && mv t .zed/settings.json && git add .zed && git stash -q`,
        // the index alone: the file removed, its entry kept for the user's git restore
        "printf '{}' > t && mkdir -p .cursor && mv t .cursor/mcp.json && git add .cursor && rm -rf .cursor",
        // a tag at a commit made without the work tree
        `${crafted}git tag v9 $c`,
        // a replacement of HEAD by that commit: git shows it wherever HEAD is read
        `${crafted}git replace HEAD $c`,
        // a commit undone at once: only the reflog (HEAD@{1}) leads to it
        `${crafted}git reset -q --hard $c && git reset -q --hard HEAD~1`,
        // a tag packed into packed-refs beside the user's refs
        `${crafted}git tag v8 $c && git pack-refs --all`,
        // a branch that is a link to a file the command wrote
        `${crafted}printf '%s\\n' $c > tip && ln -s ../../../tip .git/refs/heads/linked`,
        // an ordinary commit: kept
        `printf 'hello\\n' > notes.txt && git add notes.txt && ${commit} -m notes`,
      ];
      const { server, workspace, options } = await setup([
        ...commands.map((command, at) => call(`toolu_${at + 1}`, "bash", { command })),
        stream(turn({ text: ["done"] })),
      ]);
      const env = { ...options.env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@example.com" };
      const user = { ...env, GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@example.com" };
      execFileSync("git", ["init", "-q", "-b", "main"], { cwd: workspace, env: user });
      await writeFile(join(workspace, "README"), "readme\n");
      execFileSync("git", ["add", "README"], { cwd: workspace, env: user });
      execFileSync("git", ["commit", "-qm", "first"], { cwd: workspace, env: user });
      const run = await runBin(["--allow-bash", "task"], options);
      expect(run.code).toBe(0);
      const results = toolResults(server.requests[commands.length]?.body ?? {});
      expect(results.map((r) => r.isError)).toEqual(commands.map(() => false));
      const notes = results.map((r) =>
        String(r.content)
          .split("\n")
          .filter((line) => line.startsWith("- ")),
      );
      expect(notes[0]?.join("\n")).toMatch(/refs\/heads\/feature.*\.vscode\/tasks\.json/);
      expect(notes[1]?.join("\n")).toMatch(/refs\/stash.*\.zed\/settings\.json/);
      expect(notes[2]?.join("\n")).toMatch(/index.*\.cursor\/mcp\.json/);
      expect(notes[3]?.join("\n")).toMatch(/refs\/tags\/v9.*\.husky\/pre-commit/);
      expect(notes[4]?.join("\n")).toMatch(/refs\/replace\/.*\.husky\/pre-commit/);
      expect(notes[5]?.join("\n")).toMatch(/logs\/HEAD.*\.husky\/pre-commit/);
      expect(notes[6]?.join("\n")).toMatch(/packed-refs.*\.husky\/pre-commit/);
      expect(notes[7]?.join("\n")).toMatch(/refs\/heads\/linked/);
      expect(notes[8]).toEqual([]);

      // The user's own git, outside the sandbox, afterwards.
      expect(git(workspace, user, "branch", "--list", "feature")).toBe("");
      expect(git(workspace, user, "stash", "list")).toBe("");
      expect(git(workspace, user, "tag", "--list")).toBe("");
      expect(git(workspace, user, "branch", "--list", "linked")).toBe("");
      expect(git(workspace, user, "for-each-ref", "--format=%(refname)")).toBe("refs/heads/main\n");
      expect(git(workspace, user, "replace", "--list")).toBe("");
      expect(git(workspace, user, "log", "--format=%s", "main")).toBe("notes\nfirst\n");
      expect(await readFile(join(workspace, "notes.txt"), "utf8")).toBe("hello\n");
      git(workspace, user, "restore", ".");
      git(workspace, user, "checkout", "-q", "feature");
      git(workspace, user, "stash", "pop");
      git(workspace, user, "reset", "-q", "--hard", "HEAD@{1}");
      git(workspace, user, "checkout", "-q", "v9", "--", ".");
      git(workspace, user, "checkout", "-q", "v8", "--", ".");
      git(workspace, user, "checkout", "-q", "linked", "--", ".");
      for (const file of [".vscode/tasks.json", ".zed/settings.json", ".cursor/mcp.json"])
        expect(existsSync(join(workspace, file)), file).toBe(false);
      expect(existsSync(join(workspace, ".husky/pre-commit"))).toBe(false);
    });

    it("undoes a new repository's branch that leads to a protected file", async () => {
      const { server, workspace, options } = await setup([
        call("toolu_1", "bash", {
          command: `git init -q -b main sub && cd sub && printf '{}' > t && mkdir -p .claude && mv t .claude/settings.json && git add -A && ${commit} -m s && git rm -rq .claude && ${commit} -m clean`,
        }),
        stream(turn({ text: ["done"] })),
      ]);
      execFileSync("git", ["init", "-q", "-b", "main"], { cwd: workspace, env: options.env });
      const run = await runBin(["--allow-bash", "task"], options);
      expect(run.code).toBe(0);
      const results = toolResults(server.requests[1]?.body ?? {});
      expect(String(results[0]?.content)).toMatch(
        /sub\/\.git\/refs\/heads\/main.*\.claude\/settings\.json/,
      );
      const sub = join(workspace, "sub");
      git(sub, options.env, "checkout", "-q", "HEAD~1");
      expect(existsSync(join(sub, ".claude/settings.json"))).toBe(false);
    });
  },
);
