import type { Mode } from "../app/modes.js";
import { cliPolicy, type Question, serverPattern } from "../app/policy.js";
import { ruleCovers } from "../rules/granted.js";
import type { Rule } from "../rules/rule.js";
import { showRule } from "../rules/rule.js";
import type { ToolCall } from "../types.js";
import { visible } from "../visible.js";
import { isToolName } from "./commands.js";

/**
 * `mini-agent rules explain`: what a run in a given configuration would decide for one bash
 * command (or MCP tool), and the part that decided. The answer comes from the run's own policy
 * (`cliPolicy`), built as a run builds it and asked about one call: there is no second decision
 * path to drift from the first. Only its question is caught instead of asked.
 */

/** A rule in force and where it comes from: `--allow`, the rules file, a configuration file. */
export interface SourcedRule {
  rule: Rule;
  from: string;
}

/** What a run decides with: the workspace, the mode, where bash runs, `--allow-bash`, the rules. */
export interface Configuration {
  /** The workspace's real path. */
  workspace: string;
  mode: Mode;
  /** Bash runs in the sandbox: the read-only set applies. */
  sandboxed: boolean;
  allowBash: boolean;
  /** In the order a run holds them: the rules file's, the configuration files', the flags'. */
  rules: readonly SourcedRule[];
  /** Why bash runs nowhere here (`--sandbox required` and no sandbox): the policy still decides. */
  refused?: string;
}

/**
 * The answer. `by` is the part that decided: for allow and deny exactly what the session records
 * (`rule:allow npm test`, `read-only set: ls, wc`, `allow-bash-flag`, `rule:deny git push`,
 * `mode:plan`); for ask, which a run records as the person's answer or `no-terminal`: `mode:ask`
 * (ask mode asks), `sandbox:off` (in the sandbox the read-only set would allow it), `no-rule` (no
 * rule allows a command in it) or `rules` (the rules cannot allow something in it). `why` says it
 * in words, naming where each deciding rule comes from.
 */
export interface Explanation {
  decision: "allow" | "ask" | "deny";
  by: string;
  why: string;
  /** For ask: what "always" would save, or why it saves nothing. */
  always?: string;
  /**
   * In the sandbox, for bash: what the same command asking to leave it (`outside_sandbox`)
   * would get, in words (`ask; "always" would save: allow-unsandboxed npm install (exactly)`).
   */
  outside?: string;
}

/** What the policy of a run in `config` decides for `command`, with the part that decided. */
export async function explainCommand(command: string, config: Configuration): Promise<Explanation> {
  const explained = {
    ...(await explainDecision(command, config)),
    ...(config.sandboxed &&
      !isToolName(command) && { outside: await outsideWords(command, config) }),
  };
  if (config.refused === undefined || isToolName(command) || explained.decision === "deny")
    return explained;
  return { ...explained, why: `${explained.why}; but bash runs nothing here: ${config.refused}` };
}

async function explainDecision(command: string, config: Configuration): Promise<Explanation> {
  const outcome = await decideAsRun(command, config);
  const tool = isToolName(command);
  switch (outcome.decision) {
    case "allow":
      return { decision: "allow", by: outcome.by, why: allowedWhy(outcome.by, config) };
    case "deny": {
      const [rule] = rulesIn(outcome.by, config);
      const note = outcome.by === "mode:plan" ? await sandboxNote(command, config) : "";
      const from = rule ? ` (from ${rule.from})` : "";
      return { decision: "deny", by: outcome.by, why: `${outcome.reason}${from}${note}` };
    }
    case "ask": {
      const { question } = outcome;
      // Only a command no rule allows can be one the read-only set allows in the sandbox: what
      // the rules cannot allow (a redirect out, a substitution) they cannot allow there either.
      const uncovered = question.reason.includes("no rule allows");
      const note = uncovered ? await sandboxNote(command, config) : "";
      const by = note
        ? "sandbox:off"
        : config.mode === "ask"
          ? "mode:ask"
          : tool || question.reason.startsWith("no rule allows")
            ? "no-rule"
            : "rules";
      const always = alwaysWords(question, command);
      const unnamed = tool && config.mode === "code" ? " and no tool rule names it" : "";
      return { decision: "ask", by, why: `${question.reason}${unnamed}${note}`, always };
    }
  }
}

type Outcome =
  | { decision: "allow"; by: string }
  | { decision: "deny"; by: string; reason: string }
  | { decision: "ask"; question: Question };

/**
 * The run's policy, built as `cli/run.ts` builds it for this configuration and asked about one
 * call: what it records for an allow or a deny, or the question it would put to the person.
 */
async function decideAsRun(
  command: string,
  config: Configuration,
  boundary = true,
  outside = false,
): Promise<Outcome> {
  let question: Question | undefined;
  let by = "";
  const rules = config.rules.map((sourced) => sourced.rule);
  const policy = cliPolicy({
    bash: config.allowBash ? "allow" : "ask",
    rules: { current: () => rules, save: async () => {} },
    workspace: config.workspace,
    sandboxed: config.sandboxed,
    boundary,
    mode: () => config.mode,
    ask: async (_call, asked) => {
      question = asked;
      return { deny: asked.reason, by: "explain" };
    },
    record: async (decision) => {
      by = decision.by;
    },
  });
  const tool = isToolName(command);
  const input = outside ? { command, outside_sandbox: true, reason: "explain" } : { command };
  const call: ToolCall = { id: "explain", name: tool ? command : "bash", input: tool ? {} : input };
  const approval = await policy(call);
  if (question) return { decision: "ask", question };
  if (approval.approved) return { decision: "allow", by };
  return { decision: "deny", by, reason: approval.reason ?? "" };
}

/**
 * When bash runs without the sandbox and the same run with it would allow `command` (by the
 * read-only set), the sandbox is what held it back: said here, else "". The run with the sandbox
 * is asked through the same policy.
 */
async function sandboxNote(command: string, config: Configuration): Promise<string> {
  if (config.sandboxed || isToolName(command)) return "";
  // The read-only set's answer, not the boundary's (which would allow every command there).
  const inSandbox = await decideAsRun(command, { ...config, sandboxed: true }, false);
  return inSandbox.decision === "allow"
    ? `; without the sandbox the read-only set allows only reads whose every path is inside the workspace (in the sandbox: allow, by ${inSandbox.by})`
    : "";
}

/** The rules a `by` names (`rule:allow npm test; read-only set: ls`), in its order, each the first of its text. */
function rulesIn(by: string, config: Configuration): SourcedRule[] {
  return by.split("; ").flatMap((part) => {
    const found = config.rules.find(({ rule }) => part === `rule:${showRule(rule)}`);
    return found ? [found] : [];
  });
}

function allowedWhy(by: string, config: Configuration): string {
  if (by === "allow-bash-flag") return "--allow-bash allows every command no deny rule matches";
  if (by === "sandbox")
    return "the sandbox is the boundary: in code mode bash runs in it without asking once no deny rule matches (the workspace is writable, nothing else, no network)";
  const parts = by.split("; ").flatMap((part) => {
    if (part.startsWith("read-only set: "))
      return [`the read-only set (${part.slice("read-only set: ".length)})`];
    return part.startsWith("rule:") ? [] : [part];
  });
  const rules = rulesIn(by, config).map(({ rule, from }) => {
    const covers = ruleCovers(rule);
    return `the rule ${showRule(rule)} (from ${from}${covers ? `; it covers ${covers}` : ""})`;
  });
  return `allowed by ${[...rules, ...parts].join(" and ")}`;
}

/** What the command asking to run outside the sandbox would get, and what decided it. */
async function outsideWords(command: string, config: Configuration): Promise<string> {
  const outcome = await decideAsRun(command, config, true, true);
  if (outcome.decision === "allow") return `allow, by ${outcome.by}`;
  if (outcome.decision === "deny") return `deny, by ${outcome.by}`;
  const { question } = outcome;
  const always =
    question.save.length > 0
      ? `"always" would save: ${question.save.map(showRule).join("; ")}`
      : `"always" would save no rule: ${question.noSave ?? ""}`;
  return `ask, every time (with no one to ask: deny); ${always}`;
}

/** The "always" line of a question: the rules it would save, or why it saves none. */
function alwaysWords(question: Question, command: string): string {
  if (question.save.length === 0) return `"always" would save no rule: ${question.noSave ?? ""}`;
  const saved = question.save.map(showRule).join("; ");
  return isToolName(command)
    ? `"always" would save: ${saved} (or allow '${serverPattern(command)}' for every tool of the server)`
    : `"always" would save: ${saved}`;
}

/** The explanation as `rules explain` prints it on a terminal: the same fields as `--stdin`'s. */
export function explanationText(
  explanation: Explanation,
  command: string,
  config: Configuration,
): string {
  const where = isToolName(command)
    ? "an MCP tool: tool rules decide it, deny wins"
    : config.refused !== undefined
      ? `bash is refused here: ${config.refused}`
      : config.sandboxed
        ? config.mode === "code"
          ? "bash runs in the sandbox, the boundary: what no deny rule matches runs"
          : "bash runs in the sandbox: the read-only set applies"
        : "bash runs without the sandbox: the read-only set applies to reads inside the workspace";
  const lines = [
    `${explanation.decision}: ${explanation.by}`,
    `why: ${explanation.why}`,
    ...(explanation.always ? [explanation.always] : []),
    ...(explanation.outside
      ? [`outside the sandbox (outside_sandbox: true): ${explanation.outside}`]
      : []),
    `(${config.mode} mode; ${where}${explanation.decision === "ask" ? "; with no terminal, ask means deny" : ""})`,
  ];
  return lines.map((line) => `${visible(line)}\n`).join("");
}
