import { parseArgs } from "node:util";
import { type Rule, RuleError, ruleWords } from "../rules/rule.js";
import { UsageError } from "./usage.js";

/** The command line as Node's parser reads it, with one-line errors. */

export const options = {
  print: { type: "string", short: "p" },
  cwd: { type: "string" },
  provider: { type: "string" },
  model: { type: "string", short: "m" },
  "base-url": { type: "string" },
  "allow-bash": { type: "boolean" },
  mode: { type: "string" },
  allow: { type: "string", multiple: true },
  deny: { type: "string", multiple: true },
  sandbox: { type: "string" },
  "sandbox-hide": { type: "string", multiple: true },
  skill: { type: "string", multiple: true },
  image: { type: "string", multiple: true },
  "mcp-config": { type: "string", multiple: true },
  "no-mcp": { type: "boolean" },
  "sandbox-processes": { type: "string" },
  "sandbox-memory": { type: "string" },
  continue: { type: "boolean", short: "c" },
  resume: { type: "string", short: "r" },
  sessions: { type: "boolean" },
  all: { type: "boolean" },
  "output-format": { type: "string" },
  "input-format": { type: "string" },
  "approval-timeout": { type: "string" },
  "token-budget": { type: "string" },
  "max-turns": { type: "string" },
  "context-window": { type: "string" },
  thinking: { type: "string" },
  "hide-thinking": { type: "boolean" },
  format: { type: "string" },
  output: { type: "string", short: "o" },
  force: { type: "boolean" },
  revoke: { type: "boolean" },
  to: { type: "string" },
  "dry-run": { type: "boolean" },
  "files-only": { type: "boolean" },
  "conversation-only": { type: "boolean" },
  debug: { type: "boolean" },
  version: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
} as const;

function parse(argv: string[]) {
  return parseArgs({ args: argv, allowPositionals: true, strict: true, tokens: true, options });
}

export type ParsedFlags = ReturnType<typeof parse>;
export type FlagValues = ParsedFlags["values"];

/** Parses `argv`; a mistake Node's parser finds is one `UsageError` line with a hint. */
export function parseFlags(argv: string[]): ParsedFlags {
  try {
    return parse(withNegativeValues(argv));
  } catch (error) {
    throw parseError(error as Error & { code?: string });
  }
}

/** `--max-turns -1` means the value -1 (then refused as a number), not a missing value. */
function withNegativeValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const next = argv[i + 1];
    if (arg === "--") return [...out, ...argv.slice(i)];
    // `--resume` without an id (last, or before another option) asks for the picker.
    if ((arg === "--resume" || arg === "-r") && (next === undefined || next.startsWith("-"))) {
      out.push("--resume=");
      continue;
    }
    const flag = /^--([\w-]+)$|^-(\w)$/.exec(arg);
    const name = flag && optionName(flag[1] ?? flag[2] ?? "");
    if (name && options[name].type === "string" && next !== undefined && /^-\d/.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

type OptionName = keyof typeof options;

function optionName(flag: string): OptionName | undefined {
  if (flag in options) return flag as OptionName;
  const entry = Object.entries(options).find(
    ([, option]) => "short" in option && option.short === flag,
  );
  return entry?.[0] as OptionName | undefined;
}

/** Node's parser explains in three sentences; one line with a hint is enough. */
function parseError(error: Error & { code?: string }): UsageError {
  const quoted = /'(-[^' ,<]+)/.exec(error.message)?.[1] ?? "";
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    return new UsageError(`unknown option ${quoted} (mini-agent --help lists the options)`);
  }
  const long = /--([\w-]+)/.exec(error.message)?.[1];
  const name = `--${long ?? optionName(quoted.replace(/^-+/, "")) ?? quoted}`;
  if (/does not take an argument/.test(error.message))
    return new UsageError(`${name} takes no value`);
  if (/ambiguous/.test(error.message)) {
    return new UsageError(
      `${name} needs a value (to give one that starts with "-", write ${name}=VALUE)`,
    );
  }
  if (/argument missing/.test(error.message)) return new UsageError(`${name} needs a value`);
  return new UsageError(error.message.split("\n")[0] ?? "invalid arguments");
}

/** `--allow` and `--deny` rules in the order given: the order they are listed and explained in. */
export function rulesFrom(tokens: ParsedFlags["tokens"]): Rule[] {
  const rules: Rule[] = [];
  for (const token of tokens) {
    if (token.kind !== "option" || (token.name !== "allow" && token.name !== "deny")) continue;
    try {
      rules.push({ effect: token.name, words: ruleWords(token.value ?? "") });
    } catch (error) {
      throw error instanceof RuleError
        ? new UsageError(`--${token.name}: ${error.message}`)
        : error;
    }
  }
  return rules;
}
