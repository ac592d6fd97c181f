import { gitSubcommandAt } from "./git.js";
import { readWords, type WordsVerdict } from "./read-only.js";
import { gitPrograms, readOnlyPrograms } from "./read-only-table.js";
import { type Rule, showRule } from "./rule.js";
import {
  awkUnderRule,
  findUnderRule,
  gitConfigUnderRule,
  jqUnderRule,
  screenUnderRule,
  sedUnderRule,
  sqliteUnderRule,
  tarUnderRule,
  tmuxUnderRule,
} from "./rule-grammars.js";
import { ruleOnlyPrograms } from "./rule-table.js";
import type { Word } from "./script.js";
import type { Run } from "./wrappers.js";

/**
 * An allow rule grants what it names, no more (issue 51, item 3). A rule for a program that has
 * a table (the read-only set's programs, git's subcommands, and `rule-table.ts`) allows it only
 * with the options and operands its table knows to be inert, and the files its options and
 * operands write (`sort -o FILE`), which are judged as a redirect is. A program with no table
 * (`npm test`, `cargo check`) is granted by its words, as before. The rule's own words are granted
 * as they are; an exact rule names every word; and a rule whose last word is `...` grants every
 * option (`allow sort ...`).
 */

/** A rule's last word that grants every option: `allow sort ...`. */
export const everyOption = "...";

export type Grant = { granted: true; writes: Word[] } | { granted: false; why: string };

/** Whether `rule` grants every option of what it names (its last word is `...`). */
export function grantsEvery(rule: Rule): boolean {
  return !rule.exact && rule.words.length > 1 && rule.words.at(-1) === everyOption;
}

/** The words a command must start with to match `rule` (its `...` left off). */
export function matchedWords(rule: Rule): string[] {
  return grantsEvery(rule) ? rule.words.slice(0, -1) : rule.words;
}

/** How a program's arguments are read under a rule, and where they start in the command. */
interface Reader {
  name: string;
  start: number;
  read: (args: Word[], said: number) => WordsVerdict;
  openArgs?: boolean;
}

const grammars: Record<string, (args: Word[], said: number) => WordsVerdict> = {
  sed: sedUnderRule,
  find: findUnderRule,
  awk: awkUnderRule,
  gawk: awkUnderRule,
  mawk: awkUnderRule,
  nawk: awkUnderRule,
  jq: jqUnderRule,
  sqlite3: sqliteUnderRule,
  tmux: tmuxUnderRule,
  tar: tarUnderRule,
  screen: screenUnderRule,
};

/** The reader of a command's words: its program's table, or git's subcommand's. */
function readerFor(words: Word[]): Reader | undefined {
  const program = words[0];
  if (program?.kind !== "static") return undefined;
  const name = program.value.slice(program.value.lastIndexOf("/") + 1);
  if (name === "git") {
    const at = gitSubcommandAt(words);
    const sub = words[at];
    if (sub?.kind !== "static") return undefined;
    const start = at + 1;
    if (sub.value === "config") return { name: "git config", start, read: gitConfigUnderRule };
    const spec = gitPrograms[sub.value];
    return (
      spec && { name: `git ${sub.value}`, start, read: (a, s) => readWords(spec, a, { said: s }) }
    );
  }
  const grammar = grammars[name];
  if (grammar) return { name, start: 1, read: grammar };
  const spec = readOnlyPrograms[name] ?? ruleOnlyPrograms[name];
  if (!spec || spec.anyWords) return undefined;
  return {
    name,
    start: 1,
    read: (args, said) => readWords(spec, args, { said }),
    openArgs: spec.openArgs === true,
  };
}

/** What `rule`, which matches `run` by its words, grants of it. */
export function ruleGrant(rule: Rule, run: Run): Grant {
  if (rule.exact || grantsEvery(rule)) return { granted: true, writes: [] };
  const reader = readerFor(run.words);
  if (!reader) return { granted: true, writes: [] };
  const refused = (why: string): Grant => ({
    granted: false,
    why: `the rule "${showRule(rule)}" covers ${reader.name} only with the options known to be inert: ${why}; "${showRule({ ...rule, words: [...rule.words, everyOption] })}" would cover every option`,
  });
  if (run.openArgs && !reader.openArgs)
    return refused("more arguments come from its input, and they may be options");
  const verdict = reader.read(run.words.slice(reader.start), rule.words.length - reader.start);
  return verdict.ok ? { granted: true, writes: verdict.writes } : refused(verdict.why);
}

/**
 * What a rule covers, as `rules explain` says it: `undefined` when it covers every command that
 * starts with its words (a program with no table).
 */
export function ruleCovers(rule: Rule): string | undefined {
  if (rule.effect !== "allow" || rule.exact) return undefined;
  const words = matchedWords(rule);
  const named = words.join(" ");
  const hasTable =
    readerFor(words.map((value) => ({ kind: "static", value }))) !== undefined ||
    (words.length === 1 && words[0] === "git");
  if (!hasTable) return undefined;
  if (grantsEvery(rule)) return `${named} with every option`;
  return `${named} with the options known to be inert; "${showRule({ ...rule, words: [...words, everyOption] })}" covers every option`;
}
