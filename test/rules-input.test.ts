// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the cases are shell text, not templates
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { decideCommand, type RulesContext } from "../src/rules/decide.js";
import { type Rule, ruleWords } from "../src/rules/rule.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A redirect is part of what a command does: `cat < ~/.ssh/id_rsa` reads a secret and
 * `cat < /dev/tcp/host/port` opens a connection, whatever rule allows `cat`. An input redirect is
 * allowed only from a literal path whose real path (symlinks resolved) is inside the workspace,
 * or from `/dev/null`; every other input (a path known only at run time, a descriptor copied
 * from anything but the standard three, `<>`, a here-string that expands) asks, under an exact
 * rule, a prefix rule and the read-only set alike. Writes are held to the same real path.
 */

const tempDir = useTempDirs();
const rule = (effect: Rule["effect"], text: string, exact?: boolean): Rule => ({
  effect,
  words: ruleWords(text),
  ...(exact ? { exact } : {}),
});

let ws = "";
let outside = "";

beforeEach(async () => {
  const root = await tempDir();
  ws = join(root, "ws");
  outside = join(root, "outside");
  await mkdir(join(ws, "sub"), { recursive: true });
  await mkdir(join(outside, "dir"), { recursive: true });
  await writeFile(join(outside, "secret"), "secret\n");
  await writeFile(join(outside, "dir", "secret"), "secret\n");
  await writeFile(join(ws, "inside.txt"), "inside\n");
  await writeFile(join(ws, "sub", "data.txt"), "data\n");
  await symlink(join(outside, "secret"), join(ws, "link"));
  await symlink(join(outside, "dir"), join(ws, "dirlink"));
  await symlink(join(ws, "inside.txt"), join(ws, "goodlink"));
  await symlink("../../outside/secret", join(ws, "sub", "rel-link"));
  await symlink(join(outside, "not-yet"), join(ws, "dangling"));
  await symlink(join(outside, "no-dir", "x"), join(ws, "dangling-deep"));
});

/** Exact rules, prefix rules, and the read-only set (no rules, in the sandbox). */
function contexts(): [string, RulesContext][] {
  const exact = ["cat", "wc -l", "head -n 1", "echo x"].map((t) => rule("allow", t, true));
  return [
    ["exact rules", { rules: exact, workspace: ws, sandboxed: false }],
    [
      "prefix rules",
      {
        rules: ["cat", "wc", "head", "echo"].map((t) => rule("allow", t)),
        workspace: ws,
        sandboxed: false,
      },
    ],
    ["the read-only set", { rules: [], workspace: ws, sandboxed: true }],
  ];
}

const allowedInputs = [
  "cat < inside.txt",
  "cat <inside.txt",
  "cat 0< inside.txt",
  "cat 0<inside.txt",
  "cat 3< inside.txt",
  "cat < ./inside.txt",
  "cat < 'inside.txt'",
  'cat < "inside.txt"',
  "cat < sub/../inside.txt",
  "cat < goodlink",
  "cat < missing.txt",
  "cat < sub/missing.txt",
  "wc -l < sub/data.txt",
  "head -n 1 < inside.txt",
  "cat < /dev/null",
  "cat 0</dev/null",
  "cat <<< 'text'",
  "cat <<< text",
  'cat <<< "plain text"',
  "cat <&-",
  "cat 0<&0",
  "cat < inside.txt 2>&1",
  "{ cat; } < inside.txt",
];

const askedInputs = [
  // files outside the workspace, by their text
  "cat < ~/.ssh/id_rsa",
  "cat <~/.ssh/id_rsa",
  "cat 0< ~/.ssh/id_rsa",
  "cat < /etc/passwd",
  "cat </etc/passwd",
  "cat 0</etc/passwd",
  "cat 3< /etc/passwd",
  "cat < //etc/passwd",
  "cat < ../x",
  "cat < ../outside/secret",
  "cat < /dev/null/../../etc/passwd",
  "cat < /proc/self/environ",
  "cat < /dev/stdin",
  "cat < /dev/fd/3",
  "wc -l < /etc/shadow",
  "{ cat; } < /etc/passwd",
  "if cat; then echo x; fi < /etc/passwd",
  "cat < inside.txt < /etc/passwd",
  // network connections bash opens itself
  "cat < /dev/tcp/127.0.0.1/80",
  "cat </dev/tcp/example.com/443",
  "cat 0< /dev/tcp/10.0.0.1/22",
  "cat < /dev/udp/127.0.0.1/53",
  "echo x 3< /dev/udp/8.8.8.8/53",
  // files outside the workspace by their real path
  "cat < link",
  "cat < ./link",
  "cat < sub/rel-link",
  "cat < dirlink/secret",
  "cat < dirlink/../secret",
  "cat < dirlink/missing",
  "cat < missing-dir/x",
  "cat < dangling",
  "cat < dangling-deep",
  // paths known only when the shell runs
  "cat < $f",
  'cat < "$f"',
  "cat < ${f}",
  "cat < $HOME/.ssh/id_rsa",
  'cat < "$HOME/.netrc"',
  "cat < $(echo /etc/passwd)",
  "cat < `echo /etc/passwd`",
  "cat < *.txt",
  "cat < inside.tx?",
  "cat < {inside,x}.txt",
  "cat < $'/etc/passwd'",
  // descriptors: copied from anything but the standard three, moved, opened read-write
  "cat <& inside.txt",
  "cat <&inside.txt",
  "cat <&3",
  "cat <& 3",
  "cat 0<&3",
  "cat <&9",
  "cat <&3-",
  "cat <> inside.txt",
  "cat 0<> inside.txt",
  "cat 3<> /etc/passwd",
  // here-strings that expand, and process substitution
  "cat <<< $HOME",
  'cat <<< "$HOME"',
  'cat <<< "a${x}b"',
  "cat <<< ~",
  "cat <<< *",
  "cat <<< $(cat /etc/passwd)",
  "cat < <(cat /etc/passwd)",
  "cat 0< <(echo x)",
  // a relative path after a change of folder
  "cd / && cat < etc/passwd",
];

describe("input redirects", () => {
  it("holds the report's shapes", () => {
    expect(askedInputs).toContain("cat < ~/.ssh/id_rsa");
    expect(askedInputs).toContain("cat < /dev/tcp/127.0.0.1/80");
  });

  for (const [index, name] of ["exact rules", "prefix rules", "the read-only set"].entries()) {
    const context = () => (contexts()[index] as [string, RulesContext])[1];
    it.each(allowedInputs)(`allows %j under ${name}`, async (command) => {
      const verdict = await decideCommand(command, context());
      expect({ command, decision: verdict.decision }).toEqual({ command, decision: "allow" });
    });
    it.each(askedInputs)(`asks for %j under ${name}`, async (command) => {
      const verdict = await decideCommand(command, context());
      expect({ command, decision: verdict.decision }).toEqual({ command, decision: "ask" });
    });
  }

  it("saves no rule for an input it cannot allow, and says why", async () => {
    const [, context] = contexts()[0] as [string, RulesContext];
    const verdict = await decideCommand("cat < ~/.ssh/id_rsa", context);
    expect(verdict).toMatchObject({ decision: "ask", save: [] });
    expect(verdict.decision === "ask" && verdict.reason).toMatch(/~\/\.ssh\/id_rsa/);
  });

  it("names the real path it refused", async () => {
    const [, context] = contexts()[0] as [string, RulesContext];
    const verdict = await decideCommand("cat < link", context);
    expect(verdict.decision === "ask" && verdict.reason).toMatch(/outside the workspace/);
  });

  it("reads the workspace by its real path too", async () => {
    const alias = join(ws, "..", "alias");
    await symlink(ws, alias);
    const context: RulesContext = {
      rules: [rule("allow", "cat")],
      workspace: alias,
      sandboxed: false,
    };
    expect((await decideCommand("cat < inside.txt", context)).decision).toBe("allow");
    expect((await decideCommand("cat < link", context)).decision).toBe("ask");
  });

  it("decides on the real path when the command is decided: a symlink the line makes needs its own rule", async () => {
    const line = "ln -s ../outside/secret x; cat < x";
    const cat: RulesContext = { rules: [rule("allow", "cat")], workspace: ws, sandboxed: true };
    expect((await decideCommand(line, cat)).decision).toBe("ask");
    const ln: RulesContext = { ...cat, rules: [rule("allow", "cat"), rule("allow", "ln")] };
    expect((await decideCommand(line, ln)).decision).toBe("allow");
  });

  it("asks for a path that passes through /proc, which names another process's view for bash", async () => {
    // for this process /proc/self/cwd/.. is the workspace; for bash, started in the workspace, it is
    // the folder above it
    await writeFile(join(ws, "..", "inside.txt"), "secret\n");
    await symlink("/proc/self/cwd/../inside.txt", join(ws, "cwd-link"));
    await symlink("/proc/self/cwd", join(ws, "sub", "cwd-dir"));
    await symlink("/dev/stdin", join(ws, "stdin-link"));
    const before = process.cwd();
    process.chdir(join(ws, "sub"));
    try {
      const [, context] = contexts()[0] as [string, RulesContext];
      for (const line of ["cat < cwd-link", "cat < sub/cwd-dir/../inside.txt", "cat < stdin-link"])
        expect({ line, decision: (await decideCommand(line, context)).decision }).toEqual({
          line,
          decision: "ask",
        });
      expect((await decideCommand("echo x > cwd-link", context)).decision).toBe("ask");
    } finally {
      process.chdir(before);
    }
  });

  it("still denies what a deny rule names, and --allow-bash without deny rules allows", async () => {
    const deny: RulesContext = { rules: [rule("deny", "cat")], workspace: ws, sandboxed: false };
    expect((await decideCommand("cat < /etc/passwd", deny)).decision).toBe("deny");
    const all: RulesContext = { rules: [], workspace: ws, sandboxed: false, allowAll: true };
    expect((await decideCommand("cat < /etc/passwd", all)).decision).toBe("allow");
  });
});

const allowedWrites = [
  "echo x > out.txt",
  "echo x > sub/out.txt",
  "echo x >> inside.txt",
  "echo x > goodlink",
  "echo x > new/dir/out.txt",
  "echo x 2>&1",
  "echo x >&2",
  "echo x 1>&2",
  "echo x >&-",
  "echo x 2>/dev/null",
];

const askedWrites = [
  "echo x > link",
  "echo x >> link",
  "echo x > sub/rel-link",
  "echo x > dirlink/new",
  "echo x >| dirlink/secret",
  "echo x &> dirlink/new",
  "echo x > dirlink/../new",
  "echo x > dangling",
  "echo x >> dangling",
  "echo x > dangling-deep",
  "echo x >&3",
  "echo x 2>&3",
  "echo x >&9",
  "echo x >&3-",
  "echo x > /dev/tcp/127.0.0.1/80",
];

describe("output redirects", () => {
  const context = (): RulesContext => ({
    rules: [rule("allow", "echo x", true)],
    workspace: ws,
    sandboxed: false,
  });
  it.each(allowedWrites)("allows %j", async (command) => {
    expect({ command, decision: (await decideCommand(command, context())).decision }).toEqual({
      command,
      decision: "allow",
    });
  });
  it.each(askedWrites)("asks for %j", async (command) => {
    expect({ command, decision: (await decideCommand(command, context())).decision }).toEqual({
      command,
      decision: "ask",
    });
  });
});
