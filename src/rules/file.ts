import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { randomHex } from "../crypto.js";
import { type Rule, RuleError, sameRule } from "./rule.js";

/**
 * A rules file: `{"version":1,"rules":[{"effect":"allow","words":["npm","test"]}, …]}`, with a
 * rule for MCP tools as `{"effect":"allow","tool":"mcp__server__tool"}` (or `mcp__server__*`), kept by
 * the user's state, never in the workspace (where the agent could write itself a rule). Missing
 * (or under a path that is no folder) means no rules; anything else that is not such a file is an error naming the file.
 */
export async function readRules(path: string): Promise<Rule[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RuleError(`the rules file ${path} is not valid JSON (fix it or remove it)`);
  }
  const rules = (parsed as { version?: unknown; rules?: unknown }).rules;
  if ((parsed as { version?: unknown }).version !== 1 || !Array.isArray(rules))
    throw new RuleError(
      `the rules file ${path} is not a version 1 rules file (fix it or remove it)`,
    );
  return rules.map((rule, i) => checkedRule(rule, `${path}, rule ${i + 1}`));
}

/** An MCP tool rule's name: `mcp__server__tool`, or `mcp__server__*` for every tool of one. */
const TOOL = /^mcp__[A-Za-z0-9_-]+__(?:[A-Za-z0-9_-]+|\*)$/;

/** A rule as the file holds it: an MCP tool rule as `{effect, tool}`, any other by its words. */
function savedRule(rule: Rule): Rule | { effect: Rule["effect"]; tool: string } {
  const [word, ...more] = rule.words;
  if (word !== undefined && more.length === 0 && !rule.exact && TOOL.test(word))
    return { effect: rule.effect, tool: word };
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
    (rule?.effect !== "allow" && rule?.effect !== "deny") ||
    !Array.isArray(words) ||
    words.length === 0 ||
    !words.every((word) => typeof word === "string" && word !== "") ||
    (rule.exact !== undefined && typeof rule.exact !== "boolean")
  )
    throw new RuleError(
      `${where}: a rule is {"effect": "allow" or "deny", "words": [non-empty strings], "exact"?: boolean}`,
    );
  return { effect: rule.effect, words: [...words], ...(rule.exact && { exact: true }) };
}

/** Adds the rules not already there, re-reading the file first; returns every rule now in it. */
export async function addRules(path: string, add: Rule[]): Promise<Rule[]> {
  const rules = await readRules(path);
  for (const rule of add) if (!rules.some((known) => sameRule(known, rule))) rules.push(rule);
  await writeRules(path, rules);
  return rules;
}

/** Removes rule number `n` (from 1, as listed); returns it. */
export async function removeRule(path: string, n: number): Promise<Rule> {
  const rules = await readRules(path);
  const [removed] = Number.isInteger(n) && n >= 1 ? rules.splice(n - 1, 1) : [];
  if (!removed) throw new RuleError(`there is no rule ${n} (mini-agent rules lists them)`);
  await writeRules(path, rules);
  return removed;
}

/** Written whole to a temporary file, then renamed: a reader sees the old file or the new one. */
async function writeRules(path: string, rules: Rule[]): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomHex(6)}.tmp`;
  try {
    await writeFile(
      temporary,
      `${JSON.stringify({ version: 1, rules: rules.map(savedRule) }, null, 2)}\n`,
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
