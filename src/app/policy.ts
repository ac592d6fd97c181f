import { bashDeniedReason, denyBashByDefault } from "../approval.js";
import type { HookOpinion } from "../hooks/compose.js";
import { type MoreProtected, protectedWhy } from "../protected/files.js";
import { lowSpace } from "../rewind/free-space.js";
import type { Verdict } from "../rules/decide.js";
import { prefixRule, type Rule, showRule } from "../rules/rule.js";
import { stateHome } from "../state-home.js";
import { asksOutside } from "../tools/bash.js";
import { resolveInWorkspace } from "../tools/path.js";
import type { Approval, BeforeToolCall, ToolCall } from "../types.js";
import { askModeNoSave, type Mode, planDenial } from "./modes.js";

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
 * `no`: a no with the user's reason, for the model. `always`: with the rules the user chose to
 * save (plain `always` saves the question's own, the narrowest).
 */
export type Answer =
  | "yes"
  | "no"
  | "always"
  | "closed"
  | { deny: string; by: string }
  | { no: string }
  | { always: Rule[] };

/**
 * A question the rules could not answer: the command, why it is asked, what "always" saves.
 * `outside`: the call asks to run outside the sandbox, with the user's full rights (the model's
 * `reason` for it): a front end says so plainly, offers no broader "always" than `save`, and
 * never lets an answer meant for an ordinary question approve it.
 */
export type Question = Extract<Verdict, { decision: "ask" }> & { outside?: { reason: string } };

export interface Decision {
  toolCallId: string;
  tool: string;
  approved: boolean;
  /**
   * The rule or person that decided: `rule:allow npm test`, `rule:deny git push`,
   * `read-only set: ls`, `allow-bash-flag`, `user`, `user-always (saved: …)`, `no-terminal`,
   * `default-policy`; with JSON input on stdin, `approval-timeout`, `input-closed` and `interrupted`.
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
  /**
   * The sandbox is the boundary (only with `sandboxed`): in `code` mode a bash command no deny
   * rule matches runs without asking, recorded as decided by `sandbox` (a redirect into a
   * protected file still asks). A call that asks to leave the sandbox (`asksOutside`: the bash
   * tool's `outside_sandbox`, where `BashOptions.outsideSandbox` offers it) is refused in plan
   * mode, allowed only by an `allow-unsandboxed` rule (never `--allow-bash`, an `allow` rule or
   * the read-only set), else asked as a `Question` with `outside`, and denied where no one can
   * be asked.
   */
  boundary?: boolean;
  /** Asks the person at the terminal; absent when there is none. */
  ask?: (call: ToolCall, question: Question) => Promise<Answer>;
  /** Tells the person what "always" saved. */
  tell?: (line: string) => void;
  /** Called with every decision before the call runs (the CLI writes it to the session). */
  record: (decision: Decision) => Promise<void>;
  /**
   * `write` and `edit` of a protected file (`protectedWhy`) are asked; with every decision this
   * hears the real path of the protected file the user approved for the call about to run, or
   * `undefined`, and the tools (`protectedWrites`) change no other protected file.
   */
  protectedFiles?: {
    stateDir?: string;
    approved(realPath: string | undefined): void;
    /** The session's own protected files (the files its hooks run), in the one set. */
    more?: MoreProtected;
  };
  /** An MCP tool's annotations in words (`read-only, idempotent`), shown when it is asked. */
  mcpHints?: (tool: string) => string | undefined;
  /** The session's mode at each call (`code` when absent): after the deny rules, before the rest. */
  mode?: () => Mode;
  /**
   * Why a call that would run without asking (`bash`, `write`, `edit`) is asked instead, when
   * the disk is nearly full; by default `lowSpace` of the workspace and `$MINI_AGENT_HOME`.
   */
  lowSpace?: () => string | undefined;
  /**
   * What a `PreToolUse` hook said of the call (docs/hooks.md): `allow` skips only a question an
   * allow rule could skip (a command no rule allows, an MCP tool no rule names, in `code` mode);
   * `ask` asks about a call that would run unasked (denied with no one to ask). Neither lifts a
   * deny rule, a mode, a protected file or the low-disk question.
   */
  hookOpinion?: (call: ToolCall) => HookOpinion | undefined;
}

/**
 * The one protected file the policy's last decision approved, shared by the policy (which hears
 * it) and the tools (whose `protectedWrites` asks it): every next decision forgets it.
 */
export function approvedWrites(stateDir: string) {
  let approvedPath: string | undefined;
  return {
    stateDir,
    approved: (path: string | undefined) => {
      approvedPath = path;
    },
    allows: (realPath: string) => realPath === approvedPath,
  };
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
export function shellRules(): Promise<typeof import("../rules/decide.js")> {
  // Once: each `import()` of a loaded module still goes through the module loader, a cost that
  // `rules explain --stdin` would pay per line.
  loadingRules ??= (async () => {
    (await import("node:v8")).setFlagsFromString("--liftoff-only");
    return await import("../rules/decide.js");
  })();
  return loadingRules;
}
let loadingRules: Promise<typeof import("../rules/decide.js")> | undefined;

/** What a decision gives: the approval, who made it, and the user's own reason for a no. */
type Decided = [Approval, string, string?];

export function cliPolicy(options: CliPolicyOptions): BeforeToolCall {
  const rules = options.rules ?? noRules;
  const saving: Saving = { rules, tell: options.tell };
  const boundary = options.sandboxed === true && options.boundary === true;
  /** Whether the call is bash asking to leave a working sandbox (offered the way out or not). */
  const leaving = (call: ToolCall) => call.name === "bash" && boundary && asksOutside(call.input);
  const outsideWhy = (call: ToolCall) =>
    typeof call.input.reason === "string" ? call.input.reason.trim() : "";
  const personAsk = options.ask;
  // Every question about a call that leaves the sandbox says so, whatever raised it (a hook, a
  // nearly full disk): no answer meant for an ordinary question may approve it.
  const ask =
    personAsk &&
    ((call: ToolCall, question: Question) =>
      personAsk(
        call,
        leaving(call) ? { ...question, outside: { reason: outsideWhy(call) } } : question,
      ));

  const spaceLow =
    options.lowSpace ??
    (() =>
      lowSpace({
        workspace: options.workspace ?? process.cwd(),
        stateDir: stateHome(process.env),
      }));

  /** A call that would run without asking, asked instead when the disk is nearly full. */
  async function unlessLow(call: ToolCall, decided: Decided): Promise<Decided> {
    if (!decided[0].approved) return decided;
    const low = spaceLow();
    if (low === undefined) return decided;
    const noSave = "a call is asked about while the disk is nearly full";
    return asked(call, { decision: "ask", reason: low, save: [], noSave });
  }

  async function decide(call: ToolCall): Promise<Decided> {
    options.protectedFiles?.approved(undefined);
    const mode = options.mode?.() ?? "code";
    if (call.name === "write" || call.name === "edit") {
      const decided = await decideFile(call, options, mode);
      return decided[1] === "default-policy" ? unlessLow(call, decided) : decided;
    }
    if (call.name.startsWith("mcp__")) return decideMcp(call, mode);
    if (call.name !== "bash") return [denyBashByDefault(call), "default-policy"];
    const command = typeof call.input.command === "string" ? call.input.command : "";
    if (leaving(call)) return decideOutside(call, command, mode);
    const { decideCommand } = await shellRules();
    // Outside `code` only the deny rules and the read-only set decide before the mode.
    const verdict = inMode(
      await decideCommand(command, {
        rules: rules.current().filter((rule) => mode === "code" || rule.effect === "deny"),
        workspace: options.workspace ?? process.cwd(),
        sandboxed: options.sandboxed ?? false,
        stateFolder: options.protectedFiles?.stateDir ?? stateHome(process.env),
        allowAll: mode === "code" && options.bash === "allow",
        ...(options.protectedFiles?.more && { moreProtected: options.protectedFiles.more }),
      }),
      mode,
    );
    if (verdict.decision === "allow") return unlessLow(call, [{ approved: true }, verdict.by]);
    if (verdict.decision === "deny")
      return [{ approved: false, reason: verdict.reason }, verdict.by];
    // Inside the sandbox, the sandbox is the boundary; a redirect into a protected file still asks.
    if (boundary && mode === "code" && !verdict.reason.includes("writes the protected file"))
      return unlessLow(call, [{ approved: true }, "sandbox"]);
    const hook = options.hookOpinion?.(call);
    // What an allow rule could allow: a command of words, in code mode.
    if (hook?.decision === "allow" && mode === "code" && verdict.save.length > 0)
      return unlessLow(call, [{ approved: true }, hook.by]);
    if (mode === "plan") return planDenied(call);
    if (mode === "ask") return asked(call, inAskMode(verdict.reason));
    if (!ask) return [{ approved: false, reason: noTerminalReason(verdict) }, "no-terminal"];
    return answered(await ask(call, verdict), verdict, verdict.save, saving);
  }

  /**
   * Bash asking to run outside the sandbox: refused in plan mode; a deny rule denies it; in
   * `code` mode an `allow-unsandboxed` rule covering every command in it allows it; else the
   * person is asked (in ask mode without saving a rule), and with no one to ask it is denied.
   */
  async function decideOutside(call: ToolCall, command: string, mode: Mode): Promise<Decided> {
    if (mode === "plan") return planDenied(call);
    const why = outsideWhy(call);
    if (why === "") return [{ approved: false, reason: outsideUnexplained }, "sandbox"];
    const { decideCommand } = await shellRules();
    const verdict = await decideCommand(command, {
      rules: rules.current().filter((rule) => mode === "code" || rule.effect === "deny"),
      workspace: options.workspace ?? process.cwd(),
      sandboxed: false,
      stateFolder: options.protectedFiles?.stateDir ?? stateHome(process.env),
      unsandboxed: true,
    });
    if (verdict.decision === "allow") return unlessLow(call, [{ approved: true }, verdict.by]);
    if (verdict.decision === "deny")
      return [{ approved: false, reason: verdict.reason }, verdict.by];
    const save = mode === "code" ? verdict.save.map(unsandboxedRule) : [];
    const question: Question = {
      decision: "ask",
      reason: `${outsideWords}; the model's reason: ${why}`,
      save,
      ...(save.length === 0 && {
        noSave: mode === "code" ? (verdict.noSave ?? verdict.reason) : askModeNoSave,
      }),
      outside: { reason: why },
    };
    if (!ask) return [{ approved: false, reason: outsideNoOne(save) }, "no-terminal"];
    const answer = await ask(call, question);
    // "Always" saves at most the exact commands asked about, whatever else was chosen.
    const exact = typeof answer === "object" && "always" in answer ? "always" : answer;
    return answered(exact, question, save, saving);
  }

  /**
   * An MCP tool: a tool rule decides (deny wins), else the user is asked; with no one to ask it
   * is denied. The server's annotations are shown in the question, never taken as approval.
   */
  async function decideMcp(call: ToolCall, mode: Mode): Promise<Decided> {
    const ruled = toolRuleVerdict(rules.current(), call.name);
    if (ruled?.decision === "deny") return [{ approved: false, reason: ruled.reason }, ruled.by];
    if (mode === "plan") return planDenied(call);
    const hints = options.mcpHints?.(call.name);
    const reason = `${call.name} is a tool of an MCP server${hints ? ` (the server says: ${hints})` : ""}`;
    if (mode === "ask") return asked(call, inAskMode(reason));
    if (ruled) return [{ approved: true }, ruled.by];
    const hook = options.hookOpinion?.(call);
    if (hook?.decision === "allow") return [{ approved: true }, hook.by];
    if (!ask) {
      const allowIt = `--allow ${call.name}, or --allow '${serverPattern(call.name)}'`;
      return [
        {
          approved: false,
          reason: `${reason}: MCP calls need approval and no one can be asked here (${allowIt})`,
        },
        "no-terminal",
      ];
    }
    const save: Rule[] = [{ effect: "allow", words: [call.name] }];
    const question: Question = { decision: "ask", reason, save, noSave: "" };
    return answered(await ask(call, question), question, save, saving);
  }

  /** A question of ask mode: asked, or denied when no one can be asked; it saves no rule. */
  async function asked(call: ToolCall, question: Question): Promise<Decided> {
    if (!ask)
      return [
        { approved: false, reason: `${question.reason}, and no one can be asked here` },
        "no-terminal",
      ];
    return answered(await ask(call, question), question, [], saving);
  }

  /**
   * A `PreToolUse` hook's `ask`: a call the rules let run without a person is asked about (one a
   * person already answered, or that is denied, stays as it is).
   */
  async function hookAsks(call: ToolCall, decided: Decided): Promise<Decided> {
    const hook = options.hookOpinion?.(call);
    if (hook?.decision !== "ask" || !decided[0].approved || decided[1].startsWith("user"))
      return decided;
    const why = hook.reason ? `: ${hook.reason}` : "";
    const reason = `a PreToolUse hook asks about this call (${hook.by})${why}`;
    const noSave = "a hook's question saves no rule";
    return asked(call, { decision: "ask", reason, save: [], noSave });
  }

  return async (call) => {
    const [approval, by, reason] = await hookAsks(call, await decide(call));
    const { approved } = approval;
    await options.record({
      toolCallId: call.id,
      tool: call.name,
      approved,
      by,
      ...(reason && { reason }),
    });
    return approval;
  };
}

/**
 * A write or edit: denied in plan mode; asked in ask mode and when the real path it names is a
 * protected file.
 */
async function decideFile(call: ToolCall, options: CliPolicyOptions, mode: Mode): Promise<Decided> {
  if (mode === "plan") return planDenied(call);
  const file = await protectedTarget(call, options.workspace ?? process.cwd(), options);
  if (file === undefined && mode !== "ask") return [{ approved: true }, "default-policy"];
  const reason = file
    ? `${file.shown} is protected (${file.why}): changing it needs the user's approval`
    : inAskMode(`${call.name} changes files`).reason;
  if (!options.ask)
    return [{ approved: false, reason: `${reason}, and no one can be asked here` }, "no-terminal"];
  const noSave = file ? "a protected file is asked about every time" : askModeNoSave;
  const answer = await options.ask(call, { decision: "ask", reason, save: [], noSave });
  if (typeof answer === "object" && "no" in answer) return userNo(answer.no);
  if (typeof answer === "object" && "deny" in answer)
    return [{ approved: false, reason: answer.deny }, answer.by];
  if (answer === "closed") return [{ approved: false, reason: inputClosedReason }, "user"];
  if (answer === "no") return [{ approved: false, reason: userDeniedReason }, "user"];
  options.protectedFiles?.approved(file?.path);
  return [{ approved: true }, "user"];
}

/**
 * The verdict as the mode sees it: outside `code`, a read-only command whose redirect writes a
 * file changes something, so it is held back like any change.
 */
function inMode(verdict: Verdict, mode: Mode): Verdict {
  if (verdict.decision !== "allow" || !verdict.writes || mode === "code") return verdict;
  const reason = "a redirect in the command writes a file";
  return { decision: "ask", reason, save: [], noSave: reason };
}

/** Plan mode's denial of a call that may change something. */
function planDenied(call: ToolCall): Decided {
  return [{ approved: false, reason: planDenial(call.name) }, "mode:plan"];
}

/** Ask mode's question: why it is asked, and that "always" saves no rule. */
function inAskMode(why: string): Question {
  return {
    decision: "ask",
    reason: `the session is in ask mode: ${why}`,
    save: [],
    noSave: askModeNoSave,
  };
}

/** Where an "always" answer saves its rules, and where it says so. */
interface Saving {
  rules: RuleBook;
  tell: CliPolicyOptions["tell"];
}

/** What the person's answer means for the call; "always" saves `save` (or what they chose). */
async function answered(
  answer: Answer,
  question: Question,
  save: Rule[],
  saving: Saving,
): Promise<Decided> {
  if (typeof answer === "object" && "always" in answer)
    return [{ approved: true }, await always(question, answer.always, saving)];
  if (typeof answer === "object" && "no" in answer) return userNo(answer.no);
  if (typeof answer === "object") return [{ approved: false, reason: answer.deny }, answer.by];
  if (answer === "always") return [{ approved: true }, await always(question, save, saving)];
  if (answer === "closed") return [{ approved: false, reason: inputClosedReason }, "user"];
  return answer === "yes"
    ? [{ approved: true }, "user"]
    : [{ approved: false, reason: userDeniedReason }, "user"];
}

/** Saves the rules chosen for what was shown, or says why none can be saved. */
async function always(question: Question, chosen: Rule[], saving: Saving): Promise<string> {
  const { rules, tell } = saving;
  if (chosen.length === 0) {
    tell?.(`mini-agent: allowed this once; no rule saved: ${question.noSave}\n`);
    return `user-always (not saved: ${question.noSave})`;
  }
  await rules.save(chosen);
  const saved = chosen.map(showRule).join("; ");
  tell?.(`mini-agent: saved rule: ${saved} (mini-agent rules lists and removes rules)\n`);
  return `user-always (saved: ${saved})`;
}

/** A no with the user's reason: the model reads it in the receipt; the session records it. */
function userNo(why: string): [Approval, string, string?] {
  const reason = why.trim();
  if (reason === "") return [{ approved: false, reason: userDeniedReason }, "user"];
  return [{ approved: false, reason: `${userDeniedReason}: ${reason}` }, "user", reason];
}

/**
 * The protected file a `write` or `edit` call names, by the real path the tool will open; none
 * when the path does not resolve inside the workspace (the tool then refuses it on its own).
 */
async function protectedTarget(
  call: ToolCall,
  workspace: string,
  options: CliPolicyOptions,
): Promise<{ path: string; shown: string; why: string } | undefined> {
  if (typeof call.input.path !== "string") return undefined;
  const boundary = { stateDir: options.protectedFiles?.stateDir };
  const target = await resolveInWorkspace(workspace, call.input.path, boundary).catch(
    () => undefined,
  );
  if (target === undefined) return undefined;
  const why = await protectedWhy(target.realRoot, target.path, options.protectedFiles?.more);
  return why === undefined ? undefined : { path: target.path, shown: target.shown, why };
}

/**
 * With no one to ask: the default denial, and what kept the rules from allowing the command when
 * it is more than a command no rule names (a substitution, a redirect outside the workspace).
 */
function noTerminalReason(question: Question): string {
  // No flag allows a redirect into a protected file: only a person's yes does.
  if (question.reason.includes("writes the protected file"))
    return `bash is denied: ${question.reason}; changing it needs the user's approval, and no one can be asked here`;
  if (!question.reason.startsWith("no rule allows"))
    return `${bashDeniedReason} (${question.reason})`;
  const words = question.save.map((rule) => prefixRule(rule).words);
  if (words.length === 0 || !words.flat().every((word) => simpleWord.test(word)))
    return bashDeniedReason;
  const flags = words.map((rule) => `--allow "${rule.join(" ")}"`).join(" ");
  return `bash is denied by default: run mini-agent with ${flags} to let the agent run this command (--allow-bash allows every command)`;
}

/** What every question about a call that leaves the sandbox says first. */
export const outsideWords =
  "this command asks to run OUTSIDE the sandbox, with the user's full rights: every file the user can change, the network, the credential stores";

const outsideUnexplained =
  "bash outside the sandbox needs a reason: set reason to why the command cannot run inside the sandbox (the user reads it), or run it without outside_sandbox";

/** The exact rule "always" saves for a command run outside the sandbox. */
function unsandboxedRule(rule: Rule): Rule {
  return { effect: "allow-unsandboxed", words: rule.words, exact: true };
}

/** With no one to ask: a run outside the sandbox is denied, with the rule that would allow it. */
function outsideNoOne(save: Rule[]): string {
  const words = save.map((rule) => rule.words);
  const simple = words.length > 0 && words.flat().every((word) => simpleWord.test(word));
  const flags = simple
    ? `; the user may allow exactly this with ${words.map((rule) => `--allow-unsandboxed "${rule.join(" ")}"`).join(" ")}`
    : "";
  return `bash outside the sandbox needs the user's approval, and no one can be asked here: run the command inside the sandbox (without outside_sandbox)${flags}`;
}

/** A word `--allow "…"` reads as it is, with no quoting to explain. */
const simpleWord = /^[\w@%+=:,./-]+$/;
/**
 * Whether a rule names this MCP tool: one word, `mcp__server__tool` exactly, or `mcp__server__*`
 * for every tool of the server (the `*` only as the whole tool part).
 */
export function matchesTool(rule: Rule, tool: string): boolean {
  const [word, ...more] = rule.words;
  if (rule.effect === "allow-unsandboxed") return false;
  if (word === undefined || more.length > 0 || !word.startsWith("mcp__")) return false;
  if (word === tool) return true;
  return word.endsWith("__*") && serverPattern(tool) === word;
}

/** What the tool rules decide for an MCP tool (deny wins), or `undefined` when none names it. */
export function toolRuleVerdict(
  rules: readonly Rule[],
  tool: string,
): { decision: "allow" | "deny"; by: string; reason: string } | undefined {
  const matching = rules.filter((rule) => matchesTool(rule, tool));
  const rule = matching.find((candidate) => candidate.effect === "deny") ?? matching[0];
  if (!rule || rule.effect === "allow-unsandboxed") return undefined;
  const shown = showRule(rule);
  return {
    decision: rule.effect,
    by: `rule:${shown}`,
    reason: `the rule ${shown} ${rule.effect === "deny" ? "denies" : "allows"} ${tool}`,
  };
}

/** `mcp__server__*` for `mcp__server__tool`. */
export function serverPattern(tool: string): string {
  const server = tool.slice("mcp__".length).split("__")[0] ?? "";
  return `mcp__${server}__*`;
}
