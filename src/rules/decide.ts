import { realpath } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { within } from "../paths.js";
import { type MoreProtected, protectedWhy } from "../protected/files.js";
import { allowedFolderChanges, type InsideCheck } from "./folder.js";
import { matchedWords, ruleGrant } from "./granted.js";
import { hiddenByVariable } from "./hidden-code.js";
import { type InsideReads, insideReads } from "./outside.js";
import { readOnlyEntry } from "./read-only.js";
import { realInside, realTarget } from "./real-path.js";
import { type Rule, showRule } from "./rule.js";
import { parseScript, type Script, type Word } from "./script.js";
import { type CommandView, type Run, viewCommand } from "./wrappers.js";
import { nowhere, type Written, writesNowhere, writtenProblems } from "./written.js";

export interface RulesContext {
  rules: readonly Rule[];
  /** The workspace's real path: a redirect may write inside it without a question. */
  workspace: string;
  /**
   * Bash runs in the sandbox: the read-only set applies as it stands. Without it, a read-only
   * command runs only when every path it reads lands inside the workspace (`insideReads`).
   */
  sandboxed: boolean;
  /** The state folder (`$MINI_AGENT_HOME`): without the sandbox, a read of it asks. */
  stateFolder?: string;
  /** Every command that no deny rule may match is allowed (`--allow-bash`). */
  allowAll?: boolean;
  /** The session's own protected files (the files its hooks run): a write into one asks. */
  moreProtected?: MoreProtected;
  /**
   * The command asks to run outside the sandbox: only `allow-unsandboxed` rules allow it, never
   * an `allow` rule, the read-only set or a `cd` inside the workspace.
   */
  unsandboxed?: boolean;
}

/**
 * The decision on one command line, with what made it. `by` names the deciding rule
 * (`rule:allow npm test`, `read-only set: ls`, `rule:deny git push`, `allow-bash-flag`). An `ask`
 * carries the narrowest rules "always" would save (`save`), or why none can be (`noSave`).
 */
export type Verdict =
  /** `writes`: a redirect in it writes a file (one inside the workspace; else it would ask). */
  | { decision: "allow"; by: string; writes?: true }
  | { decision: "deny"; by: string; reason: string }
  | { decision: "ask"; reason: string; save: Rule[]; noSave?: string };

/** Shell code inside shell code (`sh -c 'sh -c …'`) is read this deep for deny rules. */
const codeDepth = 3;

/**
 * Decides a bash command line: deny when a deny rule matches any command in it, through
 * wrappers; allow when every command in it is allowed by a rule (or the read-only set, under the
 * sandbox) and nothing in it is hidden from the rules; otherwise ask.
 */
export async function decideCommand(command: string, context: RulesContext): Promise<Verdict> {
  const denyRules = context.rules.filter((rule) => rule.effect === "deny");
  // --allow-bash with no deny rule allows everything but a redirect into a protected file: with
  // no `>` in the line there is nothing to read, no parser to load.
  if (context.allowAll && denyRules.length === 0 && !command.includes(">"))
    return { decision: "allow", by: "allow-bash-flag" };
  const script = await parseScript(command);
  if (!script) {
    if (context.allowAll && denyRules.length === 0)
      return { decision: "allow", by: "allow-bash-flag" };
    return ask("the command is not valid shell syntax, so the rules cannot read it");
  }
  return decideScript(script, context);
}

/** Decides a command line already read into a `Script` (what `decideCommand` does after parsing). */
export async function decideScript(script: Script, context: RulesContext): Promise<Verdict> {
  const denyRules = context.rules.filter((rule) => rule.effect === "deny");
  const views = script.commands.map((c) => viewCommand(c.words));
  const deny = await denyMatches(views, denyRules, codeDepth);
  if (deny.rule) {
    const shown = showRule(deny.rule);
    return { decision: "deny", by: `rule:${shown}`, reason: `denied by the rule "${shown}"` };
  }
  const hidden = [
    ...script.opaque,
    ...views.flatMap((view) => view.hidden),
    ...deny.maybe,
    ...script.commands.flatMap((c) => c.assigns.flatMap((name) => hiddenByVariable(name) ?? [])),
  ];
  const intoProtected = await protectedWrites(script, context);
  if (intoProtected.length > 0) return ask(`the rules cannot allow ${intoProtected[0]}`);
  if (context.allowAll) {
    const unread = [...hidden, ...(script.substitutions ?? [])];
    if (denyRules.length === 0 || unread.length === 0)
      return { decision: "allow", by: "allow-bash-flag" };
    return ask(`deny rules are set and the rules cannot see into ${unread[0]}`);
  }
  const reads = context.sandboxed
    ? undefined
    : await insideReads(script, views, context.workspace, context.stateFolder);
  const unseen = [
    ...hidden,
    ...views.flatMap((view) => view.blocked),
    ...script.commands.flatMap((c) => c.assigns.map((name) => `an assignment to ${name}`)),
    ...(await redirectProblems(script, context.workspace)),
    ...(reads?.problems ?? []),
  ];
  if (unseen.length > 0) return ask(`the rules cannot allow ${unseen[0]}`);
  if (script.commands.length === 0) return ask("the command runs nothing the rules can name");
  const folders = context.unsandboxed
    ? new Set<Run>()
    : (reads?.cds ??
      (await allowedFolderChanges(
        script,
        views,
        context.workspace,
        insideCheck(context.workspace),
      )));
  const allowed: string[] = [];
  const uncovered: Run[] = [];
  const written: Written[] = [];
  const refusals: string[] = [];
  for (const run of views.flatMap((view) => view.runs)) {
    const found = allowedBy(run, context, reads);
    const by = found.by ?? (folders.has(run) ? "read-only set: cd" : undefined);
    if (by) {
      allowed.push(by);
      written.push(...found.writes);
    } else {
      uncovered.push(run);
      if (found.refused) refusals.push(found.refused);
    }
  }
  if (uncovered.length === 0) {
    const outside = await writtenProblems(
      written,
      script,
      context.workspace,
      context.moreProtected,
    );
    if (outside.length > 0) return ask(`the rules cannot allow ${outside[0]}`);
    const writes = writesFile(script) || written.some((w) => !nowhere(w.file));
    return { decision: "allow", by: deciders(allowed), ...(writes && { writes: true }) };
  }
  const dynamic = uncovered.flatMap((run) => run.words).find((word) => word.kind === "dynamic");
  const held = refusals[0] === undefined ? "" : ` (${refusals[0]})`;
  const asked = `no rule allows ${uncovered.map((run) => shownWords(run.words)).join(", ")}${held}`;
  const odd = uncovered
    .flatMap((run) => run.words)
    .find((word) => word.kind === "static" && !plainWord.test(word.value));
  const noSave =
    dynamic?.kind === "dynamic"
      ? `${dynamic.text} is known only when the shell runs`
      : uncovered.some((run) => run.openArgs)
        ? "more arguments come from its input"
        : odd?.kind === "static"
          ? `${odd.value} is not plain ASCII text, which no allow rule matches`
          : undefined;
  if (noSave) return { decision: "ask", reason: asked, save: [], noSave };
  const save = uniqueRules(uncovered.map((run) => exactRule(run.words)));
  return { decision: "ask", reason: asked, save };
}

/** `rule:allow npm test; read-only set: ls, wc`: each rule once, then the read-only entries. */
function deciders(allowed: string[]): string {
  const prefix = "read-only set: ";
  const unique = [...new Set(allowed)];
  const rules = unique.filter((by) => !by.startsWith(prefix));
  const readOnly = unique
    .filter((by) => by.startsWith(prefix))
    .map((by) => by.slice(prefix.length));
  return [...rules, ...(readOnly.length > 0 ? [`${prefix}${readOnly.join(", ")}`] : [])].join("; ");
}

function ask(reason: string): Verdict {
  return { decision: "ask", reason, save: [], noSave: reason };
}

/**
 * The rule or read-only entry that allows `run`, as the session records it (`by`), with the
 * files the rule lets it write; without the sandbox the read-only set covers only the reads that
 * stay inside the workspace (`reads`). `refused`: why a rule whose words match does not grant it
 * (an option not known to be inert).
 */
function allowedBy(
  run: Run,
  context: RulesContext,
  reads: InsideReads | undefined,
): { by?: string; writes: Written[]; refused?: string } {
  let refused: string | undefined;
  const effect = context.unsandboxed ? "allow-unsandboxed" : "allow";
  for (const rule of context.rules) {
    if (rule.effect !== effect || !allowMatches(rule, run)) continue;
    const grant = ruleGrant(rule, run);
    const program = shownWords(run.words.slice(0, 1));
    if (grant.granted)
      return {
        by: `rule:${showRule(rule)}`,
        writes: grant.writes.map((file) => ({ program, file })),
      };
    refused ??= grant.why;
  }
  const readOnly = !context.unsandboxed && (context.sandboxed || reads?.runs.has(run));
  const entry = readOnly ? readOnlyEntry(run) : undefined;
  return {
    ...(entry && { by: `read-only set: ${entry}` }),
    writes: [],
    ...(refused && { refused }),
  };
}

/** Plain ASCII text, no control characters: the only words an allow rule can match. */
const plainWord = /^[\x20-\x7e]*$/;

function allowMatches(rule: Rule, run: Run): boolean {
  const { words } = run;
  const expected = matchedWords(rule);
  if (words.length < expected.length) return false;
  if (rule.exact && (words.length !== expected.length || run.openArgs)) return false;
  return expected.every((expected, i) => {
    const word = words[i];
    return word?.kind === "static" && plainWord.test(word.value) && word.value === expected;
  });
}

type Match = "yes" | "maybe" | "no";

/**
 * A deny rule against one form of a command: `yes` when its words are there, `maybe` when a
 * word known only at run time stands where they would be (it may become them, or shift them).
 * Program names compare without case (a file system may ignore it).
 */
function denyMatch(rule: Rule, form: Word[]): Match {
  const words = matchedWords(rule);
  for (let i = 0; i < words.length; i++) {
    const word = form[i];
    if (!word) return "no";
    if (word.kind === "dynamic") return "maybe";
    const expected = words[i] ?? "";
    const same =
      i === 0 ? word.value.toLowerCase() === expected.toLowerCase() : word.value === expected;
    if (!same) return "no";
  }
  return "yes";
}

/**
 * The words of `form` from `start` on, the first as a program name (a full path's last part): a
 * program the rules do not know to run another (`valgrind git push`) may still run them.
 */
function laterForm(form: Word[], start: number): Word[] {
  const [first, ...rest] = form.slice(start);
  if (first?.kind !== "static") return form.slice(start);
  return [{ kind: "static", value: first.value.slice(first.value.lastIndexOf("/") + 1) }, ...rest];
}

async function denyMatches(
  views: CommandView[],
  rules: readonly Rule[],
  depth: number,
): Promise<{ rule?: Rule; maybe: string[] }> {
  const maybe: string[] = [];
  if (rules.length === 0) return { maybe };
  for (const view of views) {
    for (const form of view.forms) {
      for (const rule of rules) {
        const match = denyMatch(rule, form);
        if (match === "yes") return { rule, maybe };
        if (match === "maybe")
          maybe.push(`${shownWords(form)}, which may be what "${showRule(rule)}" denies`);
        else if (form.slice(1).some((_, i) => denyMatch(rule, laterForm(form, i + 1)) === "yes"))
          maybe.push(
            `${shownWords(form)}, whose words hold what "${showRule(rule)}" denies (a program may run the rest)`,
          );
      }
    }
    for (const code of view.code) {
      const inner = depth > 0 ? await parseScript(code) : undefined;
      if (!inner) {
        maybe.push("shell code too deep or not valid shell syntax");
        continue;
      }
      const found = await denyMatches(
        inner.commands.map((c) => viewCommand(c.words)),
        rules,
        depth - 1,
      );
      if (found.rule) return found;
      maybe.push(...found.maybe);
    }
  }
  return { maybe };
}

/** Whether a folder a `cd` names lands inside `workspace`, links resolved (it may be missing). */
function insideCheck(workspace: string): InsideCheck {
  let real: Promise<string | undefined> | undefined;
  return async (path) => {
    real ??= realpath(workspace).catch(() => undefined);
    const realWorkspace = await real;
    return realWorkspace !== undefined && realInside(realWorkspace, workspace, path, Infinity);
  };
}

/** Whether a redirect of `script` writes a file: anything but `/dev/null`, stdout or stderr. */
function writesFile(script: Script): boolean {
  return script.writes.some(
    (word) => word.kind === "dynamic" || !writesNowhere.includes(word.value),
  );
}

/**
 * Redirects that read or write where the rules cannot vouch for: a path known only at run time,
 * a relative path after a change of folder, a path outside the workspace by its text or by its
 * real path (symlinks resolved). A read may name a missing file only in a folder that is inside;
 * a write may name missing folders under one that is inside (an earlier command may make them).
 */
async function redirectProblems(script: Script, workspace: string): Promise<string[]> {
  const movesAround = script.commands.some((c) => {
    const program = c.words[0];
    return program?.kind === "static" && /^(cd|pushd|popd)$/.test(program.value);
  });
  const targets = [
    ...script.writes.map((word) => ({ word, io: "write" as const })),
    ...script.reads.map((word) => ({ word, io: "read" as const })),
  ];
  if (targets.length === 0) return [];
  const realWorkspace = await realpath(workspace).catch(() => undefined);
  const problems: string[] = [];
  for (const { word, io } of targets) {
    const what = io === "write" ? "a redirect that writes" : "a redirect that reads";
    const named = io === "write" ? "a redirect to" : "a redirect from";
    if (word.kind === "dynamic") {
      problems.push(
        word.text.startsWith("~")
          ? `${what} outside the workspace (${word.text})`
          : `${named} ${word.text}, a path known only when the shell runs`,
      );
      continue;
    }
    const path = word.value;
    if (io === "write" ? writesNowhere.includes(path) : path === "/dev/null") continue;
    if (movesAround && !isAbsolute(path)) {
      problems.push(`${named} ${path} after a change of folder`);
      continue;
    }
    const inside =
      within(workspace, resolve(workspace, path)) &&
      realWorkspace !== undefined &&
      (await realInside(realWorkspace, workspace, path, io === "write" ? Infinity : 1));
    if (!inside) problems.push(`${what} outside the workspace (${path})`);
  }
  return problems;
}

/**
 * Redirects that write a protected file (`protectedWhy`: git's configuration and hooks, the
 * files other tools run), by the real path the shell will open: they ask in every configuration,
 * under the read-only set, an allow rule or `--allow-bash` alike. A target known only at run
 * time, or after a change of folder, is left to `redirectProblems` (it asks there, except under
 * `--allow-bash`, where the sandbox's check after the command is what remains).
 */
async function protectedWrites(script: Script, context: RulesContext): Promise<string[]> {
  const { workspace } = context;
  const allowAll = context.allowAll === true;
  if (script.writes.length === 0) return [];
  const realWorkspace = await realpath(workspace).catch(() => undefined);
  if (realWorkspace === undefined) return [];
  const problems: string[] = [];
  for (const word of script.writes) {
    if (word.kind === "dynamic" || writesNowhere.includes(word.value)) continue;
    const target = await realTarget(
      isAbsolute(word.value) ? word.value : join(workspace, word.value),
    );
    if (target === undefined || !within(realWorkspace, target.path)) continue;
    // A folder that does not exist yet may be made by an earlier command, as a link to one
    // (`--allow-bash` lets any command make one, and write through it too).
    if (target.missing > 1 && script.commands.length > 1 && !allowAll) {
      problems.push(
        `a redirect into ${word.value}, whose folder an earlier command may make (as a link to a protected folder, too)`,
      );
      continue;
    }
    const why = await protectedWhy(realWorkspace, target.path, context.moreProtected);
    if (why !== undefined)
      problems.push(`a redirect that writes the protected file ${word.value} (${why})`);
  }
  return problems;
}

function exactRule(words: Word[]): Rule {
  return {
    effect: "allow",
    words: words.map((word) => (word.kind === "static" ? word.value : word.text)),
    exact: true,
  };
}

function uniqueRules(rules: Rule[]): Rule[] {
  const seen = new Set<string>();
  return rules.filter((rule) => {
    const key = JSON.stringify(rule);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function shownWords(words: Word[]): string {
  return words.map((word) => (word.kind === "static" ? word.value : word.text)).join(" ");
}
