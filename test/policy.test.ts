import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type Answer,
  type CliPolicyOptions,
  cliPolicy,
  type Decision,
  type Question,
  type RuleBook,
} from "../src/app/policy.js";
import { ruleBook } from "../src/app/rules.js";
import { decideCommand } from "../src/rules/decide.js";
import { addRules, readRules, removeRule } from "../src/rules/file.js";
import { prefixRule, type Rule, RuleError, ruleWords, showRule } from "../src/rules/rule.js";
import { toolCall } from "../src/testing/fake-client.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const bash = (id: string, command = "make") => toolCall(id, "bash", { command });
/** A real folder: the rules place redirects by the real paths they resolve to. */
const workspace = realpathSync(mkdtempSync(join(tmpdir(), "mini-agent-policy-")));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

/** Rules kept in memory, as the CLI keeps the file's and the flags'. */
function memoryBook(rules: Rule[] = []): RuleBook & { saved: Rule[] } {
  const book = {
    saved: [] as Rule[],
    current: () => [...book.saved, ...rules],
    save: async (add: Rule[]) => void book.saved.push(...add),
  };
  return book;
}

function policyWith(options: Partial<CliPolicyOptions> & { answers?: Answer[] }) {
  const decisions: Decision[] = [];
  const asked: [string, Question][] = [];
  const told: string[] = [];
  const answers = options.answers ?? [];
  const policy = cliPolicy({
    bash: "ask",
    workspace,
    ask: async (call, question) => {
      asked.push([call.id, question]);
      return answers.shift() ?? "no";
    },
    tell: (line) => void told.push(line),
    record: async (decision) => void decisions.push(decision),
    ...options,
  });
  const by = () => decisions.map((d) => `${d.toolCallId} ${d.approved} ${d.by}`);
  return { policy, decisions, asked, told, by };
}

const readOnlyCorpus = [
  "ls",
  "ls -la src",
  "cat package.json",
  "head -n 20 README.md",
  "tail -5 notes.txt",
  "wc -l src/*.ts",
  "pwd",
  "echo hello",
  "git status",
  "git status --short",
  "git diff",
  "git diff --stat HEAD~1",
  "git log --oneline -10",
  "git log -p -- src/a.ts | head -50",
  "git show HEAD",
  "git branch",
  "git branch -a",
  "rg TODO src",
  "grep -rn foo src",
  "find . -name '*.ts'",
  "find src -type f | wc -l",
  "sort names.txt | uniq -c",
  "cat a.txt | sort | uniq",
  "ls 2>/dev/null",
  "du -sh .",
  "which node",
  "command -v npm",
  "[ -f package.json ] && cat package.json",
  "diff a.txt b.txt",
  "wc -c < file.txt",
  "ls src > listing.txt",
  "cat README.md | grep -i install",
];

describe("the read-only set", () => {
  it.each(readOnlyCorpus)("runs %j without a question under the sandbox", async (command) => {
    const { policy, asked, decisions } = policyWith({ sandboxed: true });
    expect(await policy(bash("b1", command))).toEqual({ approved: true });
    expect(asked).toEqual([]);
    expect(decisions[0]?.by).toMatch(/^read-only set: /);
  });

  /**
   * Without the sandbox a glob and a `[ … ]` test ask (the rules cannot tell their paths),
   * and so do `which` and `command -v` (they search `PATH`, outside the workspace).
   */
  const pathsUnknown = (command: string) => /^\[| src\/\*|^which |^command /.test(command);

  it.each(readOnlyCorpus.filter((command) => !pathsUnknown(command)))(
    "runs %j without a question without the sandbox: its paths are inside the workspace",
    async (command) => {
      const { policy, asked, decisions } = policyWith({ sandboxed: false });
      expect(await policy(bash("b1", command))).toEqual({ approved: true });
      expect(asked).toEqual([]);
      expect(decisions[0]?.by).toMatch(/^read-only set: /);
    },
  );

  it.each(["cat /etc/passwd", "ls ..", ...readOnlyCorpus.filter(pathsUnknown)])(
    "asks before %j without the sandbox",
    async (command) => {
      const { policy, asked } = policyWith({ sandboxed: false });
      expect(await policy(bash("b1", command))).toEqual({
        approved: false,
        reason: "the user denied this call",
      });
      expect(asked.map(([id]) => id)).toEqual(["b1"]);
    },
  );

  it("names each entry that allowed a pipeline, once", async () => {
    expect(
      await decideCommand("git log | head; ls | head", { rules: [], workspace, sandboxed: true }),
    ).toEqual({ decision: "allow", by: "read-only set: git log, head, ls" });
  });

  it.each([
    "sort -o out.txt names.txt",
    "sort -ro out.txt names.txt",
    "uniq in.txt out.txt",
    "rg --pre ./x TODO",
    "git branch new-branch",
    "git branch -D main",
    "git diff --output=/tmp/x",
    "find . -name x -delete",
    "find . $FLAG",
    "sort $FLAGS names.txt",
    "git log $X",
    "env",
  ])("asks before %j, which writes or runs something", async (command) => {
    const verdict = await decideCommand(command, { rules: [], workspace, sandboxed: true });
    expect(verdict.decision).toBe(command === "env" ? "allow" : "ask");
  });
});

describe("rules", () => {
  const allow = (text: string): Rule => ({ effect: "allow", words: ruleWords(text) });
  const deny = (text: string): Rule => ({ effect: "deny", words: ruleWords(text) });

  it("allows a command by its leading words and names the rule", async () => {
    const context = { rules: [allow("npm test")], workspace, sandboxed: false };
    expect(await decideCommand("npm test -- --watch > out.txt 2>&1", context)).toEqual({
      decision: "allow",
      by: "rule:allow npm test",
      writes: true,
    });
    expect(await decideCommand("npm test > /dev/null", context)).toEqual({
      decision: "allow",
      by: "rule:allow npm test",
    });
    expect((await decideCommand("npm install", context)).decision).toBe("ask");
    expect((await decideCommand("npm", context)).decision).toBe("ask");
  });

  it("lets a deny rule win over an allow rule and over --allow-bash", async () => {
    const rules = [allow("git"), deny("git push")];
    const expected = {
      decision: "deny",
      by: "rule:deny git push",
      reason: 'denied by the rule "deny git push"',
    };
    expect(await decideCommand("git push -f", { rules, workspace, sandboxed: true })).toEqual(
      expected,
    );
    expect(
      await decideCommand("git push", { rules, workspace, sandboxed: true, allowAll: true }),
    ).toEqual(expected);
    expect(await decideCommand("git pull", { rules, workspace, sandboxed: true })).toEqual({
      decision: "allow",
      by: "rule:allow git",
    });
  });

  it("under --allow-bash, asks when deny rules are set and the command hides its commands", async () => {
    const context = { rules: [deny("git push")], workspace, sandboxed: false, allowAll: true };
    expect(await decideCommand("touch x && make", context)).toEqual({
      decision: "allow",
      by: "allow-bash-flag",
    });
    expect((await decideCommand('sh -c "$CMD"', context)).decision).toBe("ask");
    expect(await decideCommand('sh -c "$CMD"', { ...context, rules: [] })).toEqual({
      decision: "allow",
      by: "allow-bash-flag",
    });
  });

  it("asks about a relative redirect after a change of folder, which the rules cannot place", async () => {
    const context = { rules: [allow("cd"), allow("ls")], workspace, sandboxed: false };
    expect(await decideCommand("ls > listing.txt", context)).toEqual({
      decision: "allow",
      by: "rule:allow ls",
      writes: true,
    });
    expect(await decideCommand("cd sub && ls > listing.txt", context)).toMatchObject({
      decision: "ask",
      reason: "the rules cannot allow a redirect to listing.txt after a change of folder",
    });
    expect(await decideCommand(`cd sub && ls > ${workspace}/l.txt`, context)).toEqual({
      decision: "allow",
      by: "rule:allow cd; rule:allow ls",
      writes: true,
    });
  });

  it("under xargs, lets only read-only programs that take any arguments through", async () => {
    const context = { rules: [], workspace, sandboxed: true };
    expect(await decideCommand("find . -name '*.ts' | xargs grep -n TODO", context)).toEqual({
      decision: "allow",
      by: "read-only set: find, grep",
    });
    expect((await decideCommand("ls | xargs sort", context)).decision).toBe("ask");
    expect((await decideCommand("ls | xargs git log", context)).decision).toBe("ask");
  });

  it("matches an exact rule only on exactly its words", async () => {
    const exact: Rule = { effect: "allow", words: ["rm", "-rf", "build"], exact: true };
    const context = { rules: [exact], workspace, sandboxed: false };
    expect(await decideCommand("rm -rf build", context)).toEqual({
      decision: "allow",
      by: "rule:allow rm -rf build (exactly)",
    });
    expect((await decideCommand("rm -rf build /", context)).decision).toBe("ask");
  });

  it("reads rule words with quotes and escapes, and shows them so they read back", () => {
    expect(ruleWords(`  git  commit -m "a \\"b\\"" 'c d' e\\ f `)).toEqual([
      "git",
      "commit",
      "-m",
      'a "b"',
      "c d",
      "e f",
    ]);
    const rule: Rule = { effect: "allow", words: ["echo", "it's here"] };
    expect(showRule(rule)).toBe("allow echo 'it'\\''s here'");
    expect(ruleWords(showRule(rule)).slice(1)).toEqual(rule.words);
    expect(() => ruleWords("  ")).toThrow(RuleError);
    expect(() => ruleWords("git 'push")).toThrow("unclosed ' in the rule \"git 'push\"");
  });
});

describe("the prefix rule", () => {
  it("is the program and its first word that is not an option", () => {
    const allow = (...words: string[]): Rule => ({ effect: "allow", words, exact: true });
    expect(prefixRule(allow("npm", "test", "--", "--watch"))).toEqual({
      effect: "allow",
      words: ["npm", "test"],
    });
    expect(prefixRule(allow("make"))).toEqual({ effect: "allow", words: ["make"] });
    expect(prefixRule(allow("ls", "-la"))).toEqual({ effect: "allow", words: ["ls"] });
  });
});

describe("the CLI approval policy", () => {
  it("sends the user's reason for a no to the model and records it", async () => {
    const { policy, decisions } = policyWith({ answers: [{ no: "use pnpm instead" }] });
    expect(await policy(bash("b1", "npm install"))).toEqual({
      approved: false,
      reason: "the user denied this call: use pnpm instead",
    });
    expect(decisions).toEqual([
      { toolCallId: "b1", tool: "bash", approved: false, by: "user", reason: "use pnpm instead" },
    ]);
  });

  it("saves the rule the user chose on always, a prefix included", async () => {
    const rules = memoryBook();
    const prefix: Rule = { effect: "allow", words: ["npm", "test"] };
    const { policy, asked, by } = policyWith({ rules, answers: [{ always: [prefix] }] });
    expect(await policy(bash("b1", "npm test -- --watch"))).toEqual({ approved: true });
    expect(await policy(bash("b2", "npm test"))).toEqual({ approved: true });
    expect(asked.map(([id]) => id)).toEqual(["b1"]);
    expect(rules.saved).toEqual([prefix]);
    expect(by()).toEqual([
      "b1 true user-always (saved: allow npm test)",
      "b2 true rule:allow npm test",
    ]);
  });

  it("asks for bash, honours yes and no, and saves the narrowest rule on always", async () => {
    const rules = memoryBook();
    const { policy, asked, told, by } = policyWith({ rules, answers: ["yes", "no", "always"] });
    const outcomes = [];
    for (const id of ["b1", "b2", "b3", "b4"]) outcomes.push(await policy(bash(id)));
    outcomes.push(await policy(bash("b5", "make install")));
    outcomes.push(await policy(toolCall("r1", "read", { path: "a" })));
    expect(asked.map(([id]) => id)).toEqual(["b1", "b2", "b3", "b5"]);
    expect(outcomes).toEqual([
      { approved: true },
      { approved: false, reason: "the user denied this call" },
      { approved: true },
      { approved: true },
      { approved: false, reason: "the user denied this call" },
      { approved: true },
    ]);
    expect(rules.saved).toEqual([{ effect: "allow", words: ["make"], exact: true }]);
    expect(told).toEqual([
      "mini-agent: saved rule: allow make (exactly) (mini-agent rules lists and removes rules)\n",
    ]);
    expect(by()).toEqual([
      "b1 true user",
      "b2 false user",
      "b3 true user-always (saved: allow make (exactly))",
      "b4 true rule:allow make (exactly)",
      "b5 false user",
      "r1 true default-policy",
    ]);
  });

  it("saves one rule per simple command shown for a compound command", async () => {
    const rules = memoryBook([{ effect: "allow", words: ["npm", "test"] }]);
    const { policy, asked, by } = policyWith({ rules, answers: ["always"] });
    expect(await policy(bash("b1", "npm test && cargo check | tee log.txt"))).toEqual({
      approved: true,
    });
    expect(asked[0]?.[1]).toEqual({
      decision: "ask",
      reason: "no rule allows cargo check, tee log.txt",
      save: [
        { effect: "allow", words: ["cargo", "check"], exact: true },
        { effect: "allow", words: ["tee", "log.txt"], exact: true },
      ],
    });
    expect(by()).toEqual([
      "b1 true user-always (saved: allow cargo check (exactly); allow tee log.txt (exactly))",
    ]);
  });

  it("refuses to save a rule for what no rule can cover, says why, and allows it once", async () => {
    const rules = memoryBook();
    const { policy, asked, told, by } = policyWith({ rules, answers: ["always", "always"] });
    expect(await policy(bash("b1", "cargo check > ~/.zshrc"))).toEqual({ approved: true });
    expect(await policy(bash("b2", "cargo check > ~/.zshrc"))).toEqual({ approved: true });
    expect(asked.map(([id]) => id)).toEqual(["b1", "b2"]);
    expect(rules.saved).toEqual([]);
    const why = "the rules cannot allow a redirect that writes outside the workspace (~/.zshrc)";
    expect(told[0]).toBe(`mini-agent: allowed this once; no rule saved: ${why}\n`);
    expect(by()).toEqual([
      `b1 true user-always (not saved: ${why})`,
      `b2 true user-always (not saved: ${why})`,
    ]);
  });

  it("denies by a deny rule without asking, and records the rule", async () => {
    const rules = memoryBook([{ effect: "deny", words: ["git", "push"] }]);
    const { policy, asked, decisions } = policyWith({ rules, bash: "allow" });
    expect(await policy(bash("b1", "sudo env X=1 git -c a=b push origin"))).toEqual({
      approved: false,
      reason: 'denied by the rule "deny git push"',
    });
    expect(asked).toEqual([]);
    expect(decisions).toEqual([
      { toolCallId: "b1", tool: "bash", approved: false, by: "rule:deny git push" },
    ]);
  });

  it("denies bash with the default reason when there is no one to ask", async () => {
    const decisions: Decision[] = [];
    const policy = cliPolicy({
      bash: "ask",
      workspace,
      record: async (decision) => void decisions.push(decision),
    });
    expect(await policy(bash("b1"))).toEqual({
      approved: false,
      reason:
        'bash is denied by default: run mini-agent with --allow "make" to let the agent run this command (--allow-bash allows every command)',
    });
    expect(await policy(bash("b4", "npm test -- --watch && tee log"))).toEqual({
      approved: false,
      reason:
        'bash is denied by default: run mini-agent with --allow "npm test" --allow "tee log" to let the agent run this command (--allow-bash allows every command)',
    });
    expect(await policy(bash("b2", "make $TARGET"))).toEqual({
      approved: false,
      reason:
        "bash is denied by default: run mini-agent with --allow-bash to let the agent run shell commands",
    });
    expect(await policy(bash("b3", "ls $(make)"))).toEqual({
      approved: false,
      reason:
        "bash is denied by default: run mini-agent with --allow-bash to let the agent run shell commands",
    });
    expect(decisions.map((d) => d.by)).toEqual([
      "no-terminal",
      "no-terminal",
      "no-terminal",
      "no-terminal",
    ]);
  });

  it("allows bash without asking under --allow-bash", async () => {
    const { policy, decisions } = policyWith({ bash: "allow", answers: [] });
    expect(await policy(bash("b1"))).toEqual({ approved: true });
    expect(decisions).toEqual([
      { toolCallId: "b1", tool: "bash", approved: true, by: "allow-bash-flag" },
    ]);
  });

  it("records closing the input at the question as a denial by the user, saying so", async () => {
    const { policy, decisions } = policyWith({ answers: ["closed"] });
    expect(await policy(bash("b1"))).toEqual({
      approved: false,
      reason: "the user closed the input (Ctrl-D) instead of answering; the call did not run",
    });
    expect(decisions).toEqual([{ toolCallId: "b1", tool: "bash", approved: false, by: "user" }]);
  });
});

describe("the rules file", () => {
  it("adds rules once, removes by number, and is written 0600", async () => {
    const file = join(await tempDir(), "ws", "rules.json");
    expect(await readRules(file)).toEqual([]);
    const npm: Rule = { effect: "allow", words: ["npm", "test"] };
    const push: Rule = { effect: "deny", words: ["git", "push"] };
    await addRules(file, [npm, push]);
    expect(await addRules(file, [npm])).toEqual([npm, push]);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ version: 2, rules: [npm, push] });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await removeRule(file, 1)).toEqual(npm);
    expect(await readRules(file)).toEqual([push]);
    await expect(removeRule(file, 2)).rejects.toThrow(
      "there is no rule 2 (mini-agent rules lists them)",
    );
  });

  it("refuses a file that is not a rules file, naming it", async () => {
    const file = join(await tempDir(), "rules.json");
    await writeFile(file, '{"version":1,"rules":[{"effect":"allow","words":[]}]}');
    await expect(readRules(file)).rejects.toThrow(`${file}, rule 1: a rule is {"effect"`);
    await writeFile(file, "{");
    await expect(readRules(file)).rejects.toThrow(`the rules file ${file} is not valid JSON`);
  });

  it("puts the file's rules before the flags' and grows the file on save", async () => {
    const file = join(await tempDir(), "rules.json");
    const flag: Rule = { effect: "deny", words: ["rm"] };
    const book = await ruleBook(file, [flag]);
    const saved: Rule = { effect: "allow", words: ["make"], exact: true };
    await book.save([saved]);
    expect(book.current()).toEqual([saved, flag]);
    expect(await readRules(file)).toEqual([saved]);
  });
});

describe("session modes", () => {
  const write = toolCall("w1", "write", { path: "notes.txt", content: "x" });
  const edit = toolCall("e1", "edit", { path: "notes.txt", oldText: "a", newText: "b" });
  const read = toolCall("r1", "read", { path: "notes.txt" });
  const mcp = toolCall("m1", "mcp__srv__run", {});
  const allowAll = memoryBook([
    { effect: "allow", words: ["make"] },
    { effect: "allow", words: ["mcp__srv__run"] },
    { effect: "deny", words: ["cat"] },
  ]);

  it("in plan mode, denies every change whatever the allow rules and --allow-bash say", async () => {
    const { policy, asked, by } = policyWith({
      mode: () => "plan",
      rules: allowAll,
      bash: "allow",
      sandboxed: true,
    });
    for (const call of [write, edit, mcp, bash("b1", "make")]) {
      const approval = await policy(call);
      expect(approval.approved).toBe(false);
      expect(approval.approved === false && approval.reason).toMatch(
        new RegExp(`^the session is in plan mode: ${call.name} `),
      );
    }
    expect(await policy(read)).toEqual({ approved: true });
    expect(await policy(bash("b2", "ls -la"))).toEqual({ approved: true });
    expect(await policy(bash("b3", "cat a.txt"))).toEqual({
      approved: false,
      reason: 'denied by the rule "deny cat"',
    });
    expect(asked).toEqual([]);
    expect(by()).toEqual([
      "w1 false mode:plan",
      "e1 false mode:plan",
      "m1 false mode:plan",
      "b1 false mode:plan",
      "r1 true default-policy",
      "b2 true read-only set: ls",
      "b3 false rule:deny cat",
    ]);
  });

  it("counts a read-only command whose redirect writes a file as a change: plan denies it, ask asks", async () => {
    const writes = [
      bash("b1", "echo pwned > important.ts"),
      bash("b2", "true > notes.md"),
      bash("b3", "cat a.txt >> b.txt"),
      bash("b4", "ls 2> errors.txt"),
    ];
    const plan = policyWith({ mode: () => "plan", sandboxed: true });
    for (const call of writes) expect((await plan.policy(call)).approved).toBe(false);
    expect(await plan.policy(bash("b5", "ls > /dev/null 2>&1"))).toEqual({ approved: true });
    expect(plan.by()).toEqual([
      "b1 false mode:plan",
      "b2 false mode:plan",
      "b3 false mode:plan",
      "b4 false mode:plan",
      "b5 true read-only set: ls",
    ]);
    const ask = policyWith({ mode: () => "ask", sandboxed: true, answers: ["no"] });
    expect(await ask.policy(writes[0] ?? bash("", ""))).toEqual({
      approved: false,
      reason: "the user denied this call",
    });
    expect(ask.asked.map(([id, question]) => [id, question.reason, question.save])).toEqual([
      ["b1", "the session is in ask mode: a redirect in the command writes a file", []],
    ]);
    // In code mode, a write inside the workspace is what the write tool may do unasked.
    const code = policyWith({ mode: () => "code", sandboxed: true });
    expect(await code.policy(writes[0] ?? bash("", ""))).toEqual({ approved: true });
  });

  it("in plan mode without the sandbox, runs reads of the workspace and denies reads outside it", async () => {
    const { policy, by } = policyWith({ mode: () => "plan", sandboxed: false });
    expect((await policy(bash("b1", "ls"))).approved).toBe(true);
    expect((await policy(bash("b2", "cat /etc/passwd"))).approved).toBe(false);
    expect(by()).toEqual(["b1 true read-only set: ls", "b2 false mode:plan"]);
  });

  it("in ask mode, asks before every change whatever the allow rules say, and saves no rule", async () => {
    const { policy, asked, by } = policyWith({
      mode: () => "ask",
      rules: allowAll,
      bash: "allow",
      sandboxed: true,
      answers: ["yes", "no", "yes", "always"],
    });
    expect(await policy(write)).toEqual({ approved: true });
    expect(await policy(edit)).toEqual({ approved: false, reason: "the user denied this call" });
    expect(await policy(mcp)).toEqual({ approved: true });
    expect(await policy(bash("b1", "make"))).toEqual({ approved: true });
    expect(await policy(bash("b2", "ls"))).toEqual({ approved: true });
    expect(await policy(bash("b3", "cat a.txt"))).toMatchObject({ approved: false });
    expect(await policy(read)).toEqual({ approved: true });
    expect(asked.map(([id, question]) => [id, question.reason, question.save])).toEqual([
      ["w1", "the session is in ask mode: write changes files", []],
      ["e1", "the session is in ask mode: edit changes files", []],
      ["m1", "the session is in ask mode: mcp__srv__run is a tool of an MCP server", []],
      ["b1", "the session is in ask mode: no rule allows make", []],
    ]);
    expect(allowAll.saved).toEqual([]);
    expect(by()).toEqual([
      "w1 true user",
      "e1 false user",
      "m1 true user",
      "b1 true user-always (not saved: the session is in ask mode, which asks before every change)",
      "b2 true read-only set: ls",
      "b3 false rule:deny cat",
      "r1 true default-policy",
    ]);
  });

  it("in ask mode with no one to ask, denies every change", async () => {
    const decisions: Decision[] = [];
    const policy = cliPolicy({
      bash: "allow",
      workspace,
      mode: () => "ask",
      record: async (decision) => void decisions.push(decision),
    });
    expect(await policy(write)).toEqual({
      approved: false,
      reason: "the session is in ask mode: write changes files, and no one can be asked here",
    });
    expect(decisions.map((d) => d.by)).toEqual(["no-terminal"]);
  });

  it("follows the mode as it changes between calls", async () => {
    let mode: "code" | "plan" = "plan";
    const { policy } = policyWith({ mode: () => mode });
    expect((await policy(write)).approved).toBe(false);
    mode = "code";
    expect(await policy(write)).toEqual({ approved: true });
  });
});
