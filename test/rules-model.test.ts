// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the cases are shell text, not templates
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Language, type Node, Parser } from "web-tree-sitter";
import { decideCommand, decideScript, type RulesContext } from "../src/rules/decide.js";
import { type Rule, ruleWords } from "../src/rules/rule.js";
import { modelledTokens, modelledTypes, readTree, unmodelled } from "../src/rules/script.js";
import { wrappers } from "../src/rules/wrapper-table.js";

/**
 * The rules allow only the shell syntax they model: every other node kind of the grammar (an
 * arithmetic command, a descriptor kept in a variable, anything a later grammar adds) asks, in
 * every place it can stand, under an allow rule, the read-only set and --allow-bash with deny
 * rules alike.
 */

const rule = (effect: Rule["effect"], text: string): Rule => ({ effect, words: ruleWords(text) });
/** A real folder: the rules place redirects by the real paths they resolve to. */
const workspace = realpathSync(mkdtempSync(join(tmpdir(), "mini-agent-model-")));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));
const contexts: [string, RulesContext][] = [
  [
    "an allow rule",
    { rules: [rule("allow", "ls"), rule("allow", "true")], workspace, sandboxed: false },
  ],
  ["the read-only set", { rules: [], workspace, sandboxed: true }],
  [
    "--allow-bash with a deny rule",
    { rules: [rule("deny", "rm")], workspace, sandboxed: true, allowAll: true },
  ],
];

/** The report's shapes: `$_` names `x[$(CMD)]`, and arithmetic evaluates it. */
const arithmetic = [
  "ls 'x[$(rm -rf victim)]' 2>/dev/null; ((_))",
  "ls 'x[$(rm -rf victim)]'; ls {a[_]}>/dev/null",
  "ls 'x[$(rm -rf victim)]'; ls {a[_]}</dev/null",
  "ls x; ls {fd}>/dev/null",
  "true 'x[$(rm -rf victim)]'; ((_))",
  "ls; ((_)) | cat",
  "ls; { ((_)); }",
  "ls; ( ((_)) )",
  "ls; if ((_)); then true; fi",
  "ls; while ((_)); do true; done",
  "ls; until ((_)); do true; done",
  "ls; ((_)) && true",
  "ls; ((_)) &",
  "ls; ((_)) > x",
  "ls; ! ((_))",
  "echo hi; ((x=1))",
  "true 'x[$(rm -rf victim)]'; let _",
  "ls; let x=1",
  "ls\n((_))",
  "cat <<EOF\n${a[_]}\nEOF",
  "ls > /dev/null -la victim",
  "ls 2>&1 victim",
];

describe("syntax the rules do not model", () => {
  for (const [name, context] of contexts)
    it.each(arithmetic)(`asks for %j under ${name}`, async (command) => {
      expect((await decideCommand(command, context)).decision).toBe("ask");
    });

  it("names the arithmetic command in the question", async () => {
    expect(await decideCommand("ls; ((_))", contexts[0]?.[1] as RulesContext)).toEqual({
      decision: "ask",
      reason:
        "the rules cannot allow an arithmetic command ((…)), which evaluates variables as code",
      save: [],
      noSave:
        "the rules cannot allow an arithmetic command ((…)), which evaluates variables as code",
    });
  });
});

const require = createRequire(import.meta.url);
await Parser.init({ locateFile: () => require.resolve("web-tree-sitter/web-tree-sitter.wasm") });
const bash = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));

/** Every visible node kind of the grammar: its name and whether it is a named node. */
function grammarKinds(): [string, boolean][] {
  const kinds = new Map<string, [string, boolean]>();
  for (let id = 0; id < bash.nodeTypeCount; id++) {
    const type = bash.nodeTypeForId(id);
    if (!type || !bash.nodeTypeIsVisible(id)) continue;
    const named = bash.nodeTypeIsNamed(id);
    kinds.set(`${named}:${type}`, [type, named]);
  }
  return [...kinds.values()];
}

/**
 * A syntax tree `ls; <kind>` built by hand, so that every node kind stands in a list beside an
 * allowed command, whatever source text would produce it.
 */
function treeWith(type: string, named: boolean): Node {
  const node = (fields: Record<string, unknown>): Node => fields as unknown as Node;
  const leaf = (t: string, text: string, start: number) =>
    node({
      type: t,
      isNamed: true,
      text,
      children: [],
      namedChildren: [],
      startIndex: start,
      endIndex: start + text.length,
      childForFieldName: () => null,
      previousSibling: null,
    });
  const word = leaf("word", "ls", 0);
  const name = node({ ...word, type: "command_name", children: [word], namedChildren: [word] });
  const command = node({ ...name, type: "command", children: [name], namedChildren: [name] });
  const separator = node({ ...leaf(";", ";", 2), isNamed: false });
  const stranger = node({ ...leaf(type, "x", 4), isNamed: named, previousSibling: separator });
  const program = node({
    ...leaf("program", "ls; x", 0),
    children: [command, separator, stranger],
    namedChildren: [command, ...(named ? [stranger] : [])],
  });
  return program;
}

describe("the grammar's node kinds", () => {
  const kinds = grammarKinds();
  const unknown = kinds.filter(([type, named]) => unmodelled(type, named) !== undefined);

  it("models only kinds the grammar has, and not the arithmetic ones", () => {
    const names = new Set(kinds.filter(([, named]) => named).map(([type]) => type));
    const tokens = new Set(kinds.filter(([, named]) => !named).map(([type]) => type));
    expect([...modelledTypes].filter((type) => !names.has(type))).toEqual([]);
    expect([...modelledTokens].filter((token) => !tokens.has(token))).toEqual([]);
    for (const kind of ["((", "$((", "$[", "[[", "$(", "`", "<(", ">("])
      expect(unmodelled(kind, false)).toBeDefined();
    for (const kind of ["arithmetic_expansion", "subscript", "command_substitution"])
      expect(unmodelled(kind, true)).toBeDefined();
    expect(unknown.length).toBeGreaterThan(90);
  });

  it.each([...unknown, ["a_kind_from_a_later_grammar", true] as [string, boolean]])(
    "asks when %j (named: %s) stands beside an allowed command",
    async (type, named) => {
      const script = readTree(treeWith(type, named));
      for (const [, context] of contexts)
        expect((await decideScript(script, context)).decision).toBe("ask");
    },
  );

  it("allows the same hand-built tree with a modelled kind in that place", async () => {
    const script = readTree(treeWith("comment", true));
    expect(await decideScript(script, contexts[0]?.[1] as RulesContext)).toEqual({
      decision: "allow",
      by: "rule:allow ls",
    });
  });
});

/** An allow rule for `ls` and what a wrapper may do around it. */
const lsRule: RulesContext = { rules: [rule("allow", "ls")], workspace, sandboxed: false };

describe("wrappers", () => {
  it.each([
    "strace -o '|touch PWN' ls",
    "strace --output='!touch PWN' ls",
    "strace -o/dev/null ls",
    "strace -o /root/.bashrc ls",
    "strace -E LD_PRELOAD=./x.so ls",
    "strace -p 1 -e inject=all:error=EPERM ls",
    "strace -e trace=open ls",
    "strace -u nobody ls",
    "ltrace -o '|touch PWN' ls",
    "ltrace --output=x ls",
    "ltrace -p 1 ls",
    "flock /tmp/outside-lock ls",
    "flock -n lockfile ls",
    "env -C / ls",
    "env -u HOME ls",
    "ionice -p 1 ls",
    "prlimit -p 1 ls",
    "chroot / ls",
    "unshare -r ls",
    "nsenter -t 1 -m ls",
    "setpriv --reuid=0 ls",
    "script -q ls",
    "xargs --process-slot-var=LD_PRELOAD ls",
    "time -o out ls",
    "pkexec ls",
    "systemd-run --user ls",
    "parallel ls ::: a",
    "sudo ls",
    "doas ls",
    "su -c ls",
    "runuser -u nobody ls",
    "watch ls",
  ])("asks for %j: the wrapper or its option is not known to be inert", async (command) => {
    expect((await decideCommand(command, lsRule)).decision).toBe("ask");
  });

  it.each([
    "timeout 5 ls",
    "timeout -k 1 -s KILL --preserve-status 5 ls",
    "nice -n 5 ls",
    "nice -5 ls",
    "nohup ls",
    "command -p ls",
    "exec -a name ls",
    "time -p ls",
    "stdbuf -oL -e0 ls",
    "env -i ls",
    "setsid -w ls",
    "ionice -c3 ls",
    "taskset -c 0 ls",
    "chrt -i 0 ls",
    "prlimit --nofile=10 ls",
    "strace -f -c -q ls",
    "strace -s 100 -tt ls",
    "ltrace -c ls",
    "xargs -0 -n1 ls",
  ])("looks through %j, whose options are inert", async (command) => {
    expect((await decideCommand(command, lsRule)).decision).toBe("allow");
  });
});

describe("every entry of the wrapper table", () => {
  const cases = Object.entries(wrappers).flatMap(([name, table]) => {
    const operands = Array(table.operands ?? 0).fill("1");
    const through = !table.notThrough && !table.shell && !table.shellString && name !== "coproc";
    return [...table.valued, ...table.flags, ...(table.more ?? [])].map((option) => {
      const words = [name, option, ...(table.valued.includes(option) ? ["1"] : []), ...operands];
      const inert =
        through && (table.inert ?? []).includes(option) && !table.code?.includes(option);
      return [[...words, "ls"].join(" "), inert ? "allow" : "ask"] as const;
    });
  });

  it("has an inert option or a reason for every wrapper", () => {
    expect(cases.length).toBeGreaterThan(300);
  });

  it.each(cases)("decides %j: %s", async (command, expected) => {
    expect((await decideCommand(command, lsRule)).decision).toBe(expected);
  });

  it.each(Object.keys(wrappers))("asks when %s is given an option nobody vetted", async (name) => {
    expect((await decideCommand(`${name} --not-an-option ls`, lsRule)).decision).toBe("ask");
  });
});
