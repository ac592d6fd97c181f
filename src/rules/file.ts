import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { randomHex } from "../crypto.js";
import { type Rule, RuleError, sameRule, showRule } from "./rule.js";

/**
 * A rules file: `{"version":2,"rules":[{"effect":"allow","words":["npm","test"]}, …]}`, with a
 * rule for MCP tools as `{"effect":"allow","tool":"mcp__server__tool"}` (or `mcp__server__*`), kept by
 * the user's state, never in the workspace (where the agent could write itself a rule). Missing
 * (or under a path that is no folder) means no rules; anything else that is not such a file is an error naming the file.
 * Version 1 holds the same rules: it is a file whose allow rules were saved when a rule granted
 * every option of its program; the first run that reads it says once what they grant now
 * (`narrowedNotice`) and marks it version 2.
 */
export async function readRules(path: string): Promise<Rule[]> {
  return (await readRulesFile(path)).rules;
}

/** The rules of a file and its version (2 for a missing file: nothing to tell). */
export async function readRulesFile(path: string): Promise<{ version: 1 | 2; rules: Rule[] }> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { version: 2, rules: [] };
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RuleError(`the rules file ${path} is not valid JSON (fix it or remove it)`);
  }
  const rules = (parsed as { version?: unknown; rules?: unknown }).rules;
  const version = (parsed as { version?: unknown }).version;
  if ((version !== 1 && version !== 2) || !Array.isArray(rules))
    throw new RuleError(
      `the rules file ${path} is not a version 1 or 2 rules file (fix it or remove it)`,
    );
  return { version, rules: rules.map((rule, i) => checkedRule(rule, `${path}, rule ${i + 1}`)) };
}

/**
 * Said once per rules file of version 1 whose allow rules name a program with a table: what
 * those rules grant now. The file is then marked version 2, its rules kept as they are.
 * `undefined` when there is nothing to say.
 */
export async function narrowedNotice(path: string): Promise<string | undefined> {
  const { version, rules } = await readRulesFile(path);
  if (version === 2) return undefined;
  await writeRules(path, rules, 2);
  // the tables load only for this one notice, not with every run's rules file
  const { everyOption, ruleCovers } = await import("./granted.js");
  const narrowed = rules.filter((rule) => ruleCovers(rule) !== undefined);
  if (narrowed.length === 0) return undefined;
  const shown = narrowed.map((rule) => `"${showRule(rule)}"`).join(", ");
  const first = narrowed[0] as Rule;
  const every = showRule({ ...first, words: [...first.words, everyOption] });
  return `the saved rules ${shown} (${path}) now grant only the options known to be inert, as every allow rule for a program with a table does: an option that runs a program or writes outside the workspace asks. A rule that ends in ... grants every option ("${every}"). Said once.`;
}

/** An MCP tool rule's name: `mcp__server__tool`, or `mcp__server__*` for every tool of one. */
const TOOL = /^mcp__[A-Za-z0-9_-]+__(?:[A-Za-z0-9_-]+|\*)$/;

/** A rule as the file holds it: an MCP tool rule as `{effect, tool}`, any other by its words. */
function savedRule(rule: Rule): Rule | { effect: Rule["effect"]; tool: string } {
  const [word, ...more] = rule.words;
  const tool = rule.effect !== "allow-unsandboxed" && !rule.exact && more.length === 0;
  if (word !== undefined && tool && TOOL.test(word)) return { effect: rule.effect, tool: word };
  return rule;
}

function checkedRule(value: unknown, where: string): Rule {
  const tool = (value as { tool?: unknown } | null)?.tool;
  if (tool !== undefined) {
    const { effect, ...rest } = value as { effect?: unknown };
    if (
      (effect !== "allow" && effect !== "deny") ||
      typeof tool !== "string" ||
      !TOOL.test(tool) ||
      Object.keys(rest).length !== 1
    )
      throw new RuleError(
        `${where}: an MCP tool rule is {"effect": "allow" or "deny", "tool": "mcp__server__tool" or "mcp__server__*"}`,
      );
    return { effect, words: [tool] };
  }
  const rule = value as Partial<Rule> | null;
  const words = rule?.words;
  if (
    (rule?.effect !== "allow" && rule?.effect !== "deny" && rule?.effect !== "allow-unsandboxed") ||
    !Array.isArray(words) ||
    words.length === 0 ||
    !words.every((word) => typeof word === "string" && word !== "") ||
    (rule.exact !== undefined && typeof rule.exact !== "boolean")
  )
    throw new RuleError(
      `${where}: a rule is {"effect": "allow", "deny" or "allow-unsandboxed", "words": [non-empty strings], "exact"?: boolean}`,
    );
  return { effect: rule.effect, words: [...words], ...(rule.exact && { exact: true }) };
}

/** Adds the rules not already there, re-reading the file first; returns every rule now in it. */
export async function addRules(path: string, add: Rule[]): Promise<Rule[]> {
  const { version, rules } = await readRulesFile(path);
  for (const rule of add) if (!rules.some((known) => sameRule(known, rule))) rules.push(rule);
  await writeRules(path, rules, version);
  return rules;
}

/** Removes rule number `n` (from 1, as listed); returns it. */
export async function removeRule(path: string, n: number): Promise<Rule> {
  const { version, rules } = await readRulesFile(path);
  const [removed] = Number.isInteger(n) && n >= 1 ? rules.splice(n - 1, 1) : [];
  if (!removed) throw new RuleError(`there is no rule ${n} (mini-agent rules lists them)`);
  await writeRules(path, rules, version);
  return removed;
}

/** Written whole to a temporary file, then renamed: a reader sees the old file or the new one. */
async function writeRules(path: string, rules: Rule[], version: 1 | 2): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomHex(6)}.tmp`;
  try {
    await writeFile(
      temporary,
      `${JSON.stringify({ version, rules: rules.map(savedRule) }, null, 2)}\n`,
      {
        mode: 0o600,
        flag: "wx",
      },
    );
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}
