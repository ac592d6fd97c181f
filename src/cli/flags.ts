import { UsageError } from "../app/exit.js";
import { type Rule, RuleError, ruleWords } from "../rules/rule.js";

/** The command line's flags: their definitions (`--help` lists them) and their parser. */

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
  "allow-unsandboxed": { type: "string", multiple: true },
  sandbox: { type: "string" },
  "sandbox-hide": { type: "string", multiple: true },
  skill: { type: "string", multiple: true },
  image: { type: "string", multiple: true },
  "mcp-config": { type: "string", multiple: true },
  "no-mcp": { type: "boolean" },
  "sandbox-processes": { type: "string" },
  "sandbox-memory": { type: "string" },
  "sandbox-file-size": { type: "string" },
  continue: { type: "boolean", short: "c" },
  resume: { type: "string", short: "r" },
  sessions: { type: "boolean" },
  all: { type: "boolean" },
  "output-format": { type: "string" },
  "input-format": { type: "string" },
  "approval-timeout": { type: "string" },
  "token-budget": { type: "string" },
  "max-retries": { type: "string" },
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
  stdin: { type: "boolean" },
  "end-with-stdin": { type: "boolean" },
  debug: { type: "boolean" },
  version: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
} as const;

type Options = typeof options;
export type OptionName = keyof Options;

/** Each flag's value as given: a boolean, a string, or the strings of a flag given many times. */
export type FlagValues = {
  -readonly [Name in OptionName]?: Options[Name] extends { type: "boolean" }
    ? boolean
    : Options[Name] extends { multiple: true }
      ? string[]
      : string;
};

export interface ParsedFlags {
  values: FlagValues;
  /** The words that are no flag's: the command and the task. */
  positionals: string[];
  /** How many of them came before `--` (all, without one): a command is named only there. */
  beforeDashes: number;
  /** Every flag with a value, in the order given (`rulesFrom` keeps the rules' order). */
  tokens: { name: OptionName; value: string }[];
}

const shortNames = new Map<string, OptionName>(
  Object.entries(options).flatMap(([name, option]) =>
    "short" in option ? [[option.short, name as OptionName]] : [],
  ),
);

/**
 * Parses `argv` as Node's `util.parseArgs` does in strict mode with positionals (its module and
 * the checking of 45 option definitions cost about a millisecond of a short run's start), with
 * three changes: a value that starts with `-` followed by a digit is taken as the value
 * (`--max-turns -1`, then refused as a number), `--resume` (or `-r`) with no id after it asks for
 * the picker, and each mistake is one `UsageError` line with a hint.
 *
 * `--name=VALUE`, `--name VALUE`, `-xVALUE`, `-x VALUE`, `-abc` (boolean short flags together);
 * `--` ends the flags (`commandWords`); `-` alone is a word. A value of the next word is refused
 * when that word starts with `-` (write `--name=-VALUE`); a flag given twice keeps its last value,
 * or every value of a flag that takes many.
 */
export function parseFlags(argv: string[]): ParsedFlags {
  const parsed: ParsedFlags = { values: {}, positionals: [], beforeDashes: 0, tokens: [] };
  const values = parsed.values as Record<string, boolean | string | string[]>;
  const set = (name: OptionName, value: string) => {
    const earlier = values[name];
    values[name] =
      "multiple" in options[name] ? [...(Array.isArray(earlier) ? earlier : []), value] : value;
    parsed.tokens.push({ name, value });
  };
  for (let at = 0; at < argv.length; at++) {
    const arg = argv[at] ?? "";
    // The next word as `name`'s value: taken, or why it cannot be.
    const valueAfter = (name: OptionName) => {
      const next = argv[at + 1];
      const flagLike = next !== undefined && next.length > 1 && next.startsWith("-");
      if (name === "resume" && (next === undefined || next.startsWith("-"))) return set(name, "");
      if (next === undefined) throw new UsageError(`--${name} needs a value`);
      if (flagLike && !/^-\d/.test(next)) {
        throw new UsageError(
          `--${name} needs a value (to give one that starts with "-", write --${name}=VALUE)`,
        );
      }
      set(name, next);
      at++;
    };
    if (arg === "--") {
      parsed.beforeDashes = parsed.positionals.length;
      parsed.positionals.push(...argv.slice(at + 1));
      return parsed;
    }
    if (arg.length < 2 || !arg.startsWith("-")) {
      parsed.positionals.push(arg);
    } else if (arg.startsWith("--")) {
      const equals = arg.indexOf("=");
      const flag = equals === -1 ? arg.slice(2) : arg.slice(2, equals);
      const name = Object.hasOwn(options, flag) ? (flag as OptionName) : undefined;
      if (name === undefined) throw unknown(`--${flag}`);
      if (options[name].type === "boolean") {
        if (equals !== -1) throw new UsageError(`--${name} takes no value`);
        values[name] = true;
      } else if (equals !== -1) set(name, arg.slice(equals + 1));
      else valueAfter(name);
    } else {
      // `-x`, `-xVALUE`, or boolean short flags together (`-ch`).
      for (let letter = 1; letter < arg.length; letter++) {
        const name = shortNames.get(arg[letter] ?? "");
        if (name === undefined) throw unknown(`-${arg[letter]}`);
        if (options[name].type === "boolean") {
          if (arg[letter + 1] === "=") throw new UsageError(`-${arg[letter]} takes no value`);
          values[name] = true;
          continue;
        }
        const value = arg.slice(letter + 1);
        // `-o=-` is `=-` to Node's parser and to getopt, a file named `=-`: asked instead.
        if (value.startsWith("="))
          throw new UsageError(
            `-${arg[letter]}${value} is unclear: write -${arg[letter]} ${value.slice(1)} or --${name}${value}`,
          );
        if (value !== "") set(name, value);
        else valueAfter(name);
        break;
      }
    }
  }
  parsed.beforeDashes = parsed.positionals.length;
  return parsed;
}

/**
 * The words that may name a command (`trust`, `export`, `rules explain …`): none when `--` came
 * before the first word, so `mini-agent -- "$TASK"` runs the task whatever word it is.
 */
export function commandWords(parsed: ParsedFlags): string[] {
  return parsed.beforeDashes > 0 ? parsed.positionals : [];
}

const unknown = (flag: string) =>
  new UsageError(`unknown option ${flag} (mini-agent --help lists the options)`);

/**
 * `--allow`, `--deny` and `--allow-unsandboxed` rules in the order given: the order they are
 * listed and explained in.
 */
export function rulesFrom(tokens: ParsedFlags["tokens"]): Rule[] {
  const rules: Rule[] = [];
  for (const token of tokens) {
    if (token.name !== "allow" && token.name !== "deny" && token.name !== "allow-unsandboxed")
      continue;
    try {
      rules.push({ effect: token.name, words: ruleWords(token.value) });
    } catch (error) {
      throw error instanceof RuleError
        ? new UsageError(`--${token.name}: ${error.message}`)
        : error;
    }
  }
  return rules;
}
