import { basename, join } from "node:path";
import { sha256Hex } from "../crypto.js";
import { addRules, readRules, removeRule } from "../rules/file.js";
import { type Rule, RuleError, ruleWords, showRule } from "../rules/rule.js";
import { resolveSandbox } from "../sandbox/bwrap.js";
import { stateHome } from "../session/store.js";
import { visible } from "../visible.js";
import { type CliArgs, exitCodes, UsageError } from "./args.js";
import { type RuleBook, serverPattern, shellRules, toolRuleVerdict } from "./policy.js";

/**
 * The rules file of a workspace: `$MINI_AGENT_HOME/workspaces/<name>-<hash>/rules.json`, in the
 * user's state (which the file tools refuse and the sandbox hides), never in the workspace.
 */
export function rulesFile(env: NodeJS.ProcessEnv, workspace: string): string {
  const hash = sha256Hex(workspace).slice(0, 12);
  const name = basename(workspace).replace(/[^\w.-]/g, "_") || "root";
  return join(stateHome(env), "workspaces", `${name}-${hash}`, "rules.json");
}

/** The rules of a run: the file's (read once, grown by "always"), then the flags'. */
export async function ruleBook(file: string, flags: Rule[]): Promise<RuleBook> {
  let saved = await asUsage(readRules(file));
  return {
    current: () => [...saved, ...flags],
    save: async (rules) => {
      saved = await addRules(file, rules);
    },
  };
}

/** `mini-agent rules [list]`, `rules remove N`, `rules explain "COMMAND"`. */
export async function rulesCommand(args: CliArgs, workspace: string): Promise<number> {
  const [action = "list", ...rest] = args.rulesCommand ?? [];
  const file = rulesFile(process.env, workspace);
  const out = (text: string) => process.stdout.write(text);
  if (action === "list" && rest.length === 0) {
    const rules = await asUsage(readRules(file));
    if (rules.length === 0) out(`no saved rules for this folder (${file})\n`);
    else out(rules.map((rule, i) => `${i + 1}  ${visible(showRule(rule))}\n`).join(""));
    return exitCodes.done;
  }
  if (action === "remove" && rest.length === 1) {
    const number = rest[0] ?? "";
    // Only digits: `Number` would take "0x1", "1.0" or "1e0" for rule 1.
    if (!/^\d+$/.test(number))
      throw new UsageError(
        `rules remove needs a rule's number, as mini-agent rules lists them, not ${JSON.stringify(number)}`,
      );
    const removed = await asUsage(removeRule(file, Number(number)));
    out(`removed: ${visible(showRule(removed))}\n`);
    return exitCodes.done;
  }
  if (action === "add" && rest.length === 2 && (rest[0] === "allow" || rest[0] === "deny")) {
    const rule: Rule = {
      effect: rest[0],
      words: await asUsage(Promise.resolve().then(() => ruleWords(rest[1] ?? ""))),
    };
    await asUsage(addRules(file, [rule]));
    out(`added: ${visible(showRule(rule))}\n`);
    return exitCodes.done;
  }
  if (action === "explain" && rest.length > 0) {
    out(await explain(rest.join(" "), args, workspace, await ruleBook(file, args.rules)));
    return exitCodes.done;
  }
  throw new UsageError(
    'usage: mini-agent rules [list | add allow|deny "WORDS" | remove N | explain "COMMAND"]',
  );
}

/** What the rules in force would decide for `command`, and the rule or reason behind it. */
async function explain(
  command: string,
  args: CliArgs,
  workspace: string,
  rules: RuleBook,
): Promise<string> {
  if (/^mcp__\S+$/.test(command)) return explainTool(command, rules);
  const sandbox = await resolveSandbox({ mode: args.sandbox, hide: args.sandboxHide });
  const sandboxed = sandbox.kind === "bwrap";
  const { decideCommand } = await shellRules();
  const verdict = await decideCommand(command, {
    rules: rules.current(),
    workspace,
    sandboxed,
    allowAll: args.allowBash,
  });
  const where = sandboxed
    ? "bash runs in the sandbox: the read-only set applies"
    : "bash runs without the sandbox: the read-only set does not apply";
  switch (verdict.decision) {
    case "allow":
      return `allow: ${visible(verdict.by)}\n(${where})\n`;
    case "deny":
      return `deny: ${visible(verdict.by)}\n(${where})\n`;
    case "ask": {
      const always =
        verdict.save.length > 0
          ? `"always" would save: ${verdict.save.map(showRule).join("; ")}`
          : `"always" would save no rule: ${verdict.noSave}`;
      return `ask: ${visible(verdict.reason)}\n${visible(always)}\n(${where}; with no terminal, ask means deny)\n`;
    }
  }
}

/** An MCP tool: the tool rule that decides it, or the question it gets (deny with no one to ask). */
function explainTool(tool: string, rules: RuleBook): string {
  const verdict = toolRuleVerdict(rules.current(), tool);
  if (verdict)
    return `${verdict.decision}: ${visible(verdict.by)}\n(an MCP tool: tool rules decide it, deny wins)\n`;
  const [name, server] = [visible(tool), visible(serverPattern(tool))];
  return `ask: ${name} is a tool of an MCP server and no rule names it\n"always" would save: allow ${name} (or allow '${server}' for every tool of the server)\n(with no terminal, ask means deny)\n`;
}

/** A rules file that cannot be read as rules is a configuration error: exit 2, one line. */
async function asUsage<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw error instanceof RuleError ? new UsageError(error.message) : error;
  }
}
