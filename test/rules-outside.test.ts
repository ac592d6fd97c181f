import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decideCommand, type RulesContext } from "../src/rules/decide.js";

/**
 * The read-only set without the sandbox (`--sandbox off`): a read whose every path and redirect
 * lands inside the workspace runs; any other path asks. `<ws>` stands for the workspace's real
 * path, `<state>` for the state folder's.
 */

const root = realpathSync(mkdtempSync(join(tmpdir(), "mini-agent-outside-")));
const workspace = join(root, "ws");
const state = join(root, "state");
mkdirSync(join(workspace, "src/sub"), { recursive: true });
mkdirSync(join(workspace, ".git"));
mkdirSync(state);
writeFileSync(join(workspace, "src/a.py"), "x\n");
writeFileSync(join(workspace, ".git/config"), "[core]\n");
writeFileSync(join(state, "auth.json"), "{}\n");
symlinkSync("/etc", join(workspace, "etc-link"));
symlinkSync("/etc/passwd", join(workspace, "src/passwd-link"));
symlinkSync(state, join(workspace, "state-link"));
symlinkSync(workspace, join(workspace, "src/ws-link"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const context: RulesContext = { rules: [], workspace, sandboxed: false, stateFolder: state };

const decide = async (command: string) =>
  (await decideCommand(command.replaceAll("<ws>", workspace).replaceAll("<state>", state), context))
    .decision;

describe("the read-only set outside the sandbox", () => {
  it.each([
    "ls",
    "ls -la src",
    "ls -R src",
    "cat src/a.py",
    "cat <ws>/src/a.py",
    "cat -n src/a.py | head -20",
    "head -n 5 src/a.py",
    "tail -5 src/a.py src/missing.py",
    "wc -l src/a.py",
    "nl -ba src/a.py | sed -n '10,20p'",
    "sed -n '1,40p' src/a.py",
    "sed -n -e '1p' -e '3p' src/a.py",
    "grep -n 'def main' src/a.py",
    "grep -rn TODO",
    "grep -rn TODO src",
    "grep -e /etc/passwd src/a.py",
    "grep -f src/a.py src",
    "rg -n foo src",
    "rg --files src",
    "find . -name '*.py'",
    "find src -type f -newer src/a.py",
    "find",
    "stat src/a.py",
    "du -sh src",
    "tree src",
    "file src/a.py",
    "diff src/a.py src/b.py",
    "cat src/a.py > /dev/null",
    "cat < src/a.py",
    "cd src && cat a.py",
    "cd src && ls sub",
    "cd <ws>/src && grep -n x a.py",
    "echo hello",
    "pwd",
    "cat nothing/here.txt",
    "cat src/./a.py",
    "cat src/../src/a.py",
    "git status",
    "git diff --stat HEAD~1",
    "git log --oneline -5 -- src/a.py",
    "git show HEAD:src/a.py",
    "cd src && git blame a.py",
    "git grep -n foo",
    "git --version",
  ])("allows %s", async (command) => {
    expect(await decide(command)).toBe("allow");
  });

  it.each([
    ["an absolute path outside", "cat /etc/passwd"],
    ["an absolute folder outside", "ls /"],
    ["a path under /proc", "cat /proc/self/environ"],
    ["a device", "head -c 10 /dev/urandom"],
    ["a `..` out", "cat ../outside.txt"],
    ["a `..` out, deeper", "cat src/../../x"],
    ["a `..` through a missing folder", "cat missing/../../x"],
    ["a symlink to a folder outside", "ls etc-link"],
    ["a file through a symlink out", "cat etc-link/passwd"],
    ["a symlink to a file outside", "cat src/passwd-link"],
    ["a glob", "cat src/*.py"],
    ["a brace expansion", "cat src/{a,b}.py"],
    ["a substitution", "cat $(echo src/a.py)"],
    ["a variable", "cat $HOME/x"],
    ["a `~`", "cat ~/.ssh/id_rsa"],
    ["grep -R", "grep -R x src"],
    ["grep --dereference-recursive", "grep --dereference-recursive x"],
    ["find -L", "find -L . -name x"],
    ["find -follow", "find . -follow"],
    ["rg -L", "rg -L foo"],
    ["rg --follow", "rg --follow foo src"],
    ["ls -L", "ls -RL src"],
    ["tree -l", "tree -l"],
    ["du -L", "du -L src"],
    ["diff -r", "diff -r src src"],
    ["the state folder", "cat <state>/auth.json"],
    ["the state folder through a link", "ls state-link"],
    ["a protected file", "cat .git/config"],
    ["a protected file by a redirect", "cat < .git/config"],
    ["a read redirect outside", "cat < /etc/passwd"],
    ["a grep file outside", "grep -f /etc/passwd src"],
    ["a grep path after its pattern", "grep -n root /etc/passwd"],
    ["a sed file outside", "sed -n 1p /etc/passwd"],
    ["a sed file after -e", "sed -n -e 1p /etc/passwd"],
    ["a find start outside", "find / -name x"],
    ["a find -newer outside", "find . -newer /etc/passwd"],
    ["a found path given to a program", "find . -name '*.py' -exec cat {} \\;"],
    ["cd outside, then a read", "cd /etc && cat passwd"],
    ["cd up, then a read", "cd .. && ls"],
    ["a `..` judged from the workspace too (the `cd` may not happen)", "cd src/sub && ls .."],
    ["cd through a link out", "cd etc-link && cat passwd"],
    ["a read of a folder cd may leave", "cd src; cat ../../x"],
    ["a program outside the read-only set", "python3 src/a.py"],
    ["git grep reading a file outside", "git grep -f /etc/passwd"],
    ["git grep --no-index", "git grep --no-index foo"],
    ["git in a folder cd leaves for", "cd /etc && git status"],
    ["names read from a file, by wc", "wc --files0-from=src/a.py"],
    ["names read from a file, by du", "du --files0-from src/a.py"],
    ["names read from a file, by sort", "sort --files0-from=src/a.py"],
    ["names read from a file, by file", "file -f src/a.py"],
    ["names read from a file, by a checksum", "sha256sum -c src/a.py"],
    ["diff of two folders (it follows the links in them)", "diff src src/sub"],
    ["a landing a link gives, judged too", "cd src/ws-link/.. && cat ../x"],
    ["a search of PATH", "which python3"],
    ["the environment", "printenv"],
    ["the environment, by env", "env | grep -i key"],
    ["the system", "uname -a"],
    ["a variable echoed", "echo $PATH | grep bin"],
    ["who runs it", "id"],
  ])("asks for %s", async (_, command) => {
    expect(await decide(command)).toBe("ask");
  });

  it("asks for every read when the workspace holds the state folder", async () => {
    const inner: RulesContext = { ...context, stateFolder: join(workspace, "src/sub") };
    expect((await decideCommand("ls", inner)).decision).toBe("ask");
    expect((await decideCommand("grep -r x src", inner)).decision).toBe("ask");
    expect((await decideCommand("cat src/a.py", inner)).decision).toBe("allow");
  });

  it("asks before git when the repository is not the workspace's own", async () => {
    const outer = join(root, "outer");
    mkdirSync(join(outer, ".git"), { recursive: true });
    mkdirSync(join(outer, "ws"));
    const nested: RulesContext = { ...context, workspace: join(outer, "ws") };
    expect((await decideCommand("git log", nested)).decision).toBe("ask");
    expect((await decideCommand("cat a.txt", nested)).decision).toBe("allow");
    const worktree = join(root, "worktree");
    mkdirSync(worktree);
    writeFileSync(join(worktree, ".git"), "gitdir: /elsewhere/.git/worktrees/w\n");
    const linked: RulesContext = { ...context, workspace: worktree };
    expect((await decideCommand("git status", linked)).decision).toBe("ask");
    const bare = join(root, "none");
    mkdirSync(bare);
    const plain: RulesContext = { ...context, workspace: bare };
    expect((await decideCommand("git status", plain)).decision).toBe("allow");
  });

  it("names the read-only entry that allowed the read", async () => {
    expect(await decideCommand("cat src/a.py | wc -l", context)).toEqual({
      decision: "allow",
      by: "read-only set: cat, wc",
    });
  });

  it("leaves the sandbox's decisions as they were", async () => {
    const sandboxed: RulesContext = { ...context, sandboxed: true };
    expect((await decideCommand("cat /etc/hostname", sandboxed)).decision).toBe("allow");
    expect((await decideCommand("cat src/*.py", sandboxed)).decision).toBe("allow");
  });

  it("asks for a missing name another command of the line may make as a link out", async () => {
    const allow = (...words: string[][]) =>
      words.map((w) => ({ effect: "allow" as const, words: w }));
    const ruled: RulesContext = {
      ...context,
      rules: allow(["ln"], ["git", "checkout"], ["mkdir"]),
    };
    const decided = async (command: string) => (await decideCommand(command, ruled)).decision;
    expect(await decided("ln -s /etc/passwd x && cat x")).toBe("ask");
    expect(await decided("ln -s / d2 && cd d2 && cat etc/passwd")).toBe("ask");
    expect(await decided("git checkout other -- link && cat link")).toBe("ask");
    expect(await decided("mkdir -p out && ls out/missing")).toBe("ask");
    // Alone, or beside reads only, a missing name still reads nothing.
    expect(await decided("cat x")).toBe("allow");
    expect(await decided("cat x; cat src/a.py")).toBe("allow");
    expect(await decided("ln -s src y && cat src/a.py")).toBe("allow");
  });
});
