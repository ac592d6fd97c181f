import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
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

/** The index at `path` with the cache-tree's root (the `TREE` extension) naming `tree`. */
async function poisonCacheTree(path: string, tree: string): Promise<Buffer> {
  const index = await readFile(path);
  const body = index.subarray(0, index.length - 20);
  const at = body.indexOf("TREE");
  if (at === -1) throw new Error("the index has no cache-tree");
  // The root entry: an empty path, NUL, "ENTRIES SUBTREES\n", then the tree's 20 bytes.
  const newline = body.indexOf(10, at + 8);
  const patched = Buffer.from(body);
  Buffer.from(tree, "hex").copy(patched, newline + 1);
  return Buffer.concat([patched, createHash("sha1").update(patched).digest()]);
}

describe.skipIf(!hasGit || !sandboxed)(
  "git's objects, index and refs as a hostile command leaves them",
  () => {
    it("undoes a swapped object, a cache-tree, refs in capitals, a tag of a tree, and refuses write into refs", async () => {
      const env = {
        PATH: process.env.PATH,
        HOME: "/nonexistent",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_AUTHOR_NAME: "u",
        GIT_AUTHOR_EMAIL: "u@example.com",
        GIT_COMMITTER_NAME: "u",
        GIT_COMMITTER_EMAIL: "u@example.com",
      };
      const prepared: Record<string, string> = {};
      // The rounds are built once the repository exists: they name its objects.
      const rounds = () => {
        const { te, upper, headTree, evilTree } = prepared;
        const commands = [
          // the index with its cache-tree naming a tree that holds .vscode/tasks.json
          "cp poisoned-index .git/index",
          // refs in capital hex, loose and packed, and ORIG_HEAD
          `printf '%s\\n' ${upper} > up && cp up .git/refs/heads/up1 && cp up .git/ORIG_HEAD && ` +
            `{ cat .git/packed-refs 2>/dev/null; printf '%s refs/heads/pk1\\n' ${upper}; } > p && cp p .git/packed-refs`,
          // an annotated tag of the tree itself
          `t=$(printf 'object ${te}\\ntype tree\\ntag inner\\ntagger a <a@b> 0 +0000\\n\\nm\\n' | git mktag) && git update-ref refs/tags/onetag $t`,
          // HEAD's tree object replaced by the bytes of the other tree
          `rm -f .git/objects/${headTree} && cp .git/objects/${evilTree} .git/objects/${headTree}`,
        ];
        return [
          call("toolu_w", "write", { path: ".git/refs/heads/w", content: `${upper}\n` }),
          ...commands.map((command, at) => call(`toolu_${at + 1}`, "bash", { command })),
          stream(turn({ text: ["done"] })),
        ];
      };
      const lazily = Array.from({ length: 6 }, (_, at) => () => rounds()[at] ?? []);
      const { server, workspace: outer, options } = await setup(lazily);
      const workspace = join(outer, "repo");
      await mkdir(workspace);
      const run = (...args: string[]) =>
        execFileSync("git", args, { cwd: workspace, env, encoding: "utf8" }).trim();
      run("init", "-q", "-b", "main");
      await writeFile(join(workspace, "README"), "readme\n");
      run("add", "README");
      run("commit", "-qm", "first");
      run("branch", "feature");
      const head = run("rev-parse", "HEAD^{tree}");
      await writeFile(join(outer, "t.json"), "{}\n");
      const blob = run("hash-object", "-w", join(outer, "t.json"));
      const vscode = execFileSync("git", ["mktree"], {
        cwd: workspace,
        env,
        input: `100644 blob ${blob}\ttasks.json\n`,
        encoding: "utf8",
      }).trim();
      const listing = run("ls-tree", "HEAD");
      const te = execFileSync("git", ["mktree"], {
        cwd: workspace,
        env,
        input: `${listing}\n040000 tree ${vscode}\t.vscode\n`,
        encoding: "utf8",
      }).trim();
      const evil = run("commit-tree", te, "-p", "HEAD", "-m", "x");
      run("read-tree", "HEAD");
      await writeFile(
        join(workspace, "poisoned-index"),
        await poisonCacheTree(join(workspace, ".git/index"), te),
      );
      Object.assign(prepared, {
        te,
        upper: evil.toUpperCase(),
        headTree: `${head.slice(0, 2)}/${head.slice(2)}`,
        evilTree: `${te.slice(0, 2)}/${te.slice(2)}`,
      });
      const ran = await runBin(["--allow-bash", "task"], { ...options, cwd: workspace });
      expect(ran.code).toBe(0);
      const results = toolResults(server.requests[5]?.body ?? {});
      expect(results.map((r) => r.isError)).toEqual([true, false, false, false, false]);
      expect(String(results[0]?.content)).toMatch(/\.git\/refs\/heads\/w is protected/);
      const notes = results.map((r) => String(r.content));
      expect(notes[2]).toMatch(/undid \.git\/refs\/heads\/up1/);
      expect(notes[2]).toMatch(/undid \.git\/ORIG_HEAD/);
      expect(notes[2]).toMatch(/undid \.git\/packed-refs/);
      expect(notes[3]).toMatch(/undid \.git\/refs\/tags\/onetag.*\.vscode\/tasks\.json/);
      expect(notes[4]).toMatch(/moved aside .* in git's objects/);

      // The user's git afterwards: the cache-tree names no other tree, no ref leads to the commit.
      const user = (...args: string[]) =>
        spawnSync("git", args, { cwd: workspace, env, encoding: "utf8" }).stdout.trim();
      expect(user("for-each-ref", "--format=%(refname)")).toBe(
        "refs/heads/feature\nrefs/heads/main",
      );
      expect(user("write-tree")).toBe(head);
      for (const args of [
        ["reset", "-q", "--hard"],
        ["checkout", "-q", "-f", "feature"],
        ["stash"],
        ["stash", "pop"],
      ])
        user(...args);
      expect(existsSync(join(workspace, ".vscode/tasks.json"))).toBe(false);
    });
  },
);

describe.skipIf(!hasGit || !sandboxed)(
  "git's other files as refs, a shallow file, a link for the objects",
  () => {
    it("undoes a symbolic ref to a message file, an abbreviated name, a history hidden by shallow, and a linked object store", async () => {
      const commands = [
        // COMMIT_EDITMSG holding the commit, and a branch naming it as a symbolic ref
        `${crafted}printf '%s\\n' $c > m && cp m .git/COMMIT_EDITMSG && printf 'ref: COMMIT_EDITMSG\\n' > r && cp r .git/refs/heads/feature2`,
        // BISECT_START with an abbreviated name: git bisect reset checks it out
        `${crafted}printf '%s\\n' $(echo $c | cut -c1-12) > b && cp b .git/BISECT_START`,
        // a clean commit on top of it, its history cut by shallow for the check, shallow then removed
        `${crafted}c2=$(git -c user.name=m -c user.email=m@example.com commit-tree HEAD^{tree} -p $c -m clean) && printf '%s\\n' $c2 > s && cp s .git/shallow && git update-ref refs/heads/main $c2`,
        "rm -f .git/shallow",
        // the object store moved into the workspace and linked back
        "cp -a .git/objects store && rm -rf .git/objects && ln -s ../store .git/objects",
      ];
      const { server, workspace, options } = await setup([
        ...commands.map((command, at) => call(`toolu_${at + 1}`, "bash", { command })),
        stream(turn({ text: ["done"] })),
      ]);
      const user = { ...options.env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@example.com" };
      const env = { ...user, GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@example.com" };
      execFileSync("git", ["init", "-q", "-b", "main"], { cwd: workspace, env });
      await writeFile(join(workspace, "README"), "readme\n");
      execFileSync("git", ["add", "README"], { cwd: workspace, env });
      execFileSync("git", ["commit", "-qm", "first"], { cwd: workspace, env });
      const head = await readFile(join(workspace, ".git/refs/heads/main"), "utf8");
      const run = await runBin(["--allow-bash", "task"], options);
      expect(run.code).toBe(0);
      const results = toolResults(server.requests[commands.length]?.body ?? {});
      const notes = results.map((r) => String(r.content));
      expect(notes[0]).toMatch(/undid \.git\/COMMIT_EDITMSG/);
      expect(notes[0]).toMatch(/undid \.git\/refs\/heads\/feature2/);
      expect(notes[1]).toMatch(/undid \.git\/BISECT_START: .*abbreviated/);
      expect(notes[2]).toMatch(/shallow/);
      expect(notes[2]).toMatch(/undid \.git\/refs\/heads\/main/);
      expect(notes[4]).toMatch(/moved aside objects in git's objects/);
      expect(existsSync(join(workspace, ".git/refs/heads/feature2"))).toBe(false);
      expect(existsSync(join(workspace, ".git/BISECT_START"))).toBe(false);
      expect(existsSync(join(workspace, ".git/shallow"))).toBe(false);
      expect(await readFile(join(workspace, ".git/refs/heads/main"), "utf8")).toBe(head);
      git(workspace, env, "reset", "-q", "--hard");
      git(workspace, env, "bisect", "reset");
      expect(existsSync(join(workspace, ".husky/pre-commit"))).toBe(false);
    });
  },
);

describe.skipIf(!hasGit || !sandboxed)(
  "revisions, refs named HEAD, submodules and the user's own stash",
  () => {
    it("undoes an expression in BISECT_START, a ref beside a HEAD among refs and a submodule bump, and keeps a stash of the user's own edit", async () => {
      const commands = [
        `${crafted}printf '%s^0\\n' $(echo $c | cut -c1-12) > b && cp b .git/BISECT_START`,
        `${crafted}mkdir -p .git/refs/x && git rev-parse HEAD > h && cp h .git/refs/x/HEAD && git update-ref refs/x/objects/hidden $c`,
        "git stash -q",
        `${crafted}git update-index --add --cacheinfo 160000,$c,sub && ${commit} -m sub`,
      ];
      const { server, workspace, options } = await setup([
        ...commands.map((command, at) => call(`toolu_${at + 1}`, "bash", { command })),
        stream(turn({ text: ["done"] })),
      ]);
      const user = { ...options.env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@example.com" };
      const env = { ...user, GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@example.com" };
      const git = (...args: string[]) =>
        execFileSync("git", args, { cwd: workspace, env, encoding: "utf8" });
      git("init", "-q", "-b", "main");
      await writeFile(join(workspace, "README"), "readme\n");
      await mkdir(join(workspace, ".vscode"));
      await writeFile(join(workspace, ".vscode/settings.json"), "{}\n");
      git("add", "-A");
      git("commit", "-qm", "first");
      const head = git("rev-parse", "HEAD");
      // The user's own work in progress, a protected file among it.
      await writeFile(join(workspace, ".vscode/settings.json"), '{ "editor.tabSize": 2 }\n');
      await writeFile(join(workspace, "README"), "readme, edited\n");
      const run = await runBin(["--allow-bash", "task"], options);
      expect(run.code).toBe(0);
      const results = toolResults(server.requests[commands.length]?.body ?? {});
      const notes = results.map((r) => String(r.content));
      expect(notes[0]).toMatch(/undid \.git\/BISECT_START: .*cannot follow/);
      expect(notes[1]).toMatch(/undid \.git\/refs\/x\/objects\/hidden.*\.husky\/pre-commit/);
      expect(notes[2]).not.toMatch(/undid/);
      expect(notes[3]).toMatch(/undid \.git\/refs\/heads\/main: .*submodule/);
      expect(existsSync(join(workspace, ".git/BISECT_START"))).toBe(false);
      expect(existsSync(join(workspace, ".git/refs/x/objects/hidden"))).toBe(false);
      expect(git("rev-parse", "main")).toBe(head);
      // The user's edit is kept: in the stash, and the protected file put back in the work tree.
      expect(git("stash", "list")).toMatch(/stash@\{0\}/);
      expect(git("show", "stash@{0}:README")).toBe("readme, edited\n");
    });
  },
);
