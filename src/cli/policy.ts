import { bashDeniedReason, denyBashByDefault } from "../approval.js";
import type { Verdict } from "../rules/decide.js";
import { type Rule, showRule } from "../rules/rule.js";
import type { Approval, BeforeToolCall, ToolCall } from "../types.js";

/**
 * How the CLI decides on `bash`: `allow` (--allow-bash: every command no deny rule may match) or
 * `ask`: the rules decide, and what they cannot decide is asked of the person at the terminal;
 * with no terminal, asking means denying. Every other tool follows `denyBashByDefault`, which
 * approves it.
 */
export type BashMode = "allow" | "ask";
/**
 * `closed`: the person closed the input (Ctrl-D) instead of answering. `deny`: denied with this
 * reason, decided `by` something other than an answer (no answer in time, a program's input ended).
 */
export type Answer = "yes" | "no" | "always" | "closed" | { deny: string; by: string };

/** A question the rules could not answer: the command, why it is asked, what "always" saves. */
export type Question = Extract<Verdict, { decision: "ask" }>;

export interface Decision {
  toolCallId: string;
  tool: string;
  approved: boolean;
  /**
   * The rule or person that decided: `rule:allow npm test`, `rule:deny git push`,
   * `read-only set: ls`, `allow-bash-flag`, `user`, `user-always (saved: …)`, `no-terminal`,
   * `default-policy`; with JSON input on stdin, `approval-timeout` and `input-closed`.
   */
  by: string;
}

/** The rules in force: from the flags and the rules file; "always" adds to the file. */
export interface RuleBook {
  current(): readonly Rule[];
  save(rules: Rule[]): Promise<void>;
}

export interface CliPolicyOptions {
  bash: BashMode;
  rules?: RuleBook;
  /** The workspace's real path (redirects inside it are fine). */
  workspace?: string;
  /** Bash runs in the sandbox: the read-only set applies. */
  sandboxed?: boolean;
  /** Asks the person at the terminal; absent when there is none. */
  ask?: (call: ToolCall, question: Question) => Promise<Answer>;
  /** Tells the person what "always" saved. */
  tell?: (line: string) => void;
  /** Called with every decision before the call runs (the CLI writes it to the session). */
  record: (decision: Decision) => Promise<void>;
}

export const userDeniedReason = "the user denied this call";
export const inputClosedReason =
  "the user closed the input (Ctrl-D) instead of answering; the call did not run";

const noRules: RuleBook = { current: () => [], save: async () => {} };

/**
 * The approval rules' decision, for the CLI. Their shell parser is WebAssembly (tree-sitter):
 * V8's optimising compiler spends about half a second on it before the first decision, the
 * baseline compiler is plenty for short lines, so the CLI keeps WebAssembly on it. Set here, on
 * first need, and not at start-up: a turn that never decides a command does not load `node:v8`.
 */
export async function shellRules(): Promise<typeof import("../rules/decide.js")> {
  (await import("node:v8")).setFlagsFromString("--liftoff-only");
  return await import("../rules/decide.js");
}

export function cliPolicy(options: CliPolicyOptions): BeforeToolCall {
  const rules = options.rules ?? noRules;

  async function decide(call: ToolCall): Promise<[Approval, string]> {
    if (call.name !== "bash") return [denyBashByDefault(call), "default-policy"];
    const command = typeof call.input.command === "string" ? call.input.command : "";
    const { decideCommand } = await shellRules();
    const verdict = await decideCommand(command, {
      rules: rules.current(),
      workspace: options.workspace ?? process.cwd(),
      sandboxed: options.sandboxed ?? false,
      allowAll: options.bash === "allow",
    });
    if (verdict.decision === "allow") return [{ approved: true }, verdict.by];
    if (verdict.decision === "deny")
      return [{ approved: false, reason: verdict.reason }, verdict.by];
    if (!options.ask)
      return [{ approved: false, reason: noTerminalReason(verdict) }, "no-terminal"];
    const answer = await options.ask(call, verdict);
    if (typeof answer === "object") return [{ approved: false, reason: answer.deny }, answer.by];
    if (answer === "always") return [{ approved: true }, await always(verdict)];
    if (answer === "closed") return [{ approved: false, reason: inputClosedReason }, "user"];
    return answer === "yes"
      ? [{ approved: true }, "user"]
      : [{ approved: false, reason: userDeniedReason }, "user"];
  }

  /** Saves the narrowest rules for what was shown, or says why none can be saved. */
  async function always(question: Question): Promise<string> {
    if (question.save.length === 0) {
      options.tell?.(`mini-agent: allowed this once; no rule saved: ${question.noSave}\n`);
      return `user-always (not saved: ${question.noSave})`;
    }
    await rules.save(question.save);
    const saved = question.save.map(showRule).join("; ");
    options.tell?.(`mini-agent: saved rule: ${saved} (mini-agent rules lists and removes rules)\n`);
    return `user-always (saved: ${saved})`;
  }

  return async (call) => {
    const [approval, by] = await decide(call);
    await options.record({ toolCallId: call.id, tool: call.name, approved: approval.approved, by });
    return approval;
  };
}

/**
 * With no one to ask: the default denial, and what kept the rules from allowing the command when
 * it is more than a command no rule names (a substitution, a redirect outside the workspace).
 */
function noTerminalReason(question: Question): string {
  return question.reason.startsWith("no rule allows")
    ? bashDeniedReason
    : `${bashDeniedReason} (${question.reason})`;
}
