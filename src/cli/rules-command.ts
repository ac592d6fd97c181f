import { asUsage, rulesFile } from "../app/rules.js";
import { addRules, readRules, removeRule } from "../rules/file.js";
import { type Rule, ruleWords, showRule } from "../rules/rule.js";
import { resolveSandbox } from "../sandbox/bwrap.js";
import { visible } from "../visible.js";
import { exitCodes, UsageError } from "./args.js";
import type { Configured } from "./configured.js";
import { explainCommand, explanationText, type SourcedRule } from "./explain.js";
import { type ExplainSetup, explainLines } from "./explain-lines.js";

/** `mini-agent rules [list]`, `rules remove N`, `rules explain "COMMAND"` or `--stdin`. */
export async function rulesCommand(
  configured: Pick<Configured, "args" | "workspace" | "files">,
  configure: (cwd: string) => Promise<Configured>,
): Promise<number> {
  const { args, workspace } = configured;
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
  const effect = rest[0];
  if (
    action === "add" &&
    rest.length === 2 &&
    (effect === "allow" || effect === "deny" || effect === "allow-unsandboxed")
  ) {
    const rule: Rule = {
      effect,
      words: await asUsage(Promise.resolve().then(() => ruleWords(rest[1] ?? ""))),
    };
    await asUsage(addRules(file, [rule]));
    out(`added: ${visible(showRule(rule))}\n`);
    return exitCodes.done;
  }
  if (action === "explain") {
    const setup = await explainSetup(configured);
    if (args.stdin) {
      const folders = new Map<string, Promise<ExplainSetup>>();
      const forFolder = (cwd: string) => {
        let made = folders.get(cwd);
        if (!made) {
          made = configure(cwd).then(explainSetup);
          folders.set(cwd, made);
        }
        return made;
      };
      await explainLines(process.stdin, out, { setup, forFolder });
      return exitCodes.done;
    }
    const command = rest.join(" ");
    const config = setup.config;
    out(explanationText(await explainCommand(command, config), command, config));
    return exitCodes.done;
  }
  throw new UsageError(
    'usage: mini-agent rules [list | add allow|deny|allow-unsandboxed "WORDS" | remove N | explain "COMMAND" | explain --stdin]',
  );
}

/**
 * What `rules explain` decides with, as a run in this folder would: the rules file's rules, the
 * configuration files', the flags' (each with where it comes from), the mode, `--allow-bash`, and
 * whether bash runs in the sandbox here.
 */
async function explainSetup(
  configured: Pick<Configured, "args" | "workspace" | "files">,
): Promise<ExplainSetup> {
  const { args, workspace, files } = configured;
  const file = rulesFile(process.env, workspace);
  const saved = await asUsage(readRules(file));
  const sandbox = await resolveSandbox({ mode: args.sandbox, hide: args.sandboxHide });
  const kept: SourcedRule[] = [
    ...saved.map((rule) => ({ rule, from: `the rules file ${file}` })),
    ...files.rules.map(({ value, file }) => ({
      rule: value,
      from: `the configuration file ${file}`,
    })),
  ];
  // `args.rules` holds the configuration files' rules, then the flags' (`resolveArgs`).
  const flags = args.rules
    .slice(files.rules.length)
    .map((rule) => ({ rule, from: `--${rule.effect}` }));
  return {
    kept,
    config: {
      workspace,
      mode: args.mode,
      sandboxed: sandbox.kind === "bwrap",
      allowBash: args.allowBash,
      rules: [...kept, ...flags],
      ...(sandbox.kind === "unavailable" &&
        sandbox.mode === "required" && {
          refused: `--sandbox required, but ${sandbox.reason}`,
        }),
    },
  };
}
