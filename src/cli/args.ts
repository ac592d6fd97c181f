import { isAbsolute, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type Rule, RuleError, ruleWords } from "../rules/rule.js";
import type { SandboxLimits } from "../sandbox/bwrap.js";
import type { ThinkingLevel } from "../types.js";
import { shownURL } from "../url.js";

/**
 * Exit codes, documented in docs/cli.md. A run stopped from outside exits 128 + the signal's
 * number, as a shell reports it: Ctrl-C (SIGINT) 130, SIGHUP 129, SIGTERM 143, and 141 (SIGPIPE)
 * when the reader of stdout went away.
 */
export const exitCodes = {
  done: 0,
  error: 1,
  usage: 2,
  maxTurns: 3,
  compactionFailed: 4,
  budgetExceeded: 5,
  hangup: 129,
  interrupted: 130,
  outputClosed: 141,
  terminated: 143,
} as const;

/** A mistake in how mini-agent was called or configured: one line, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export type OutputFormat = "text" | "json" | "stream-json";

export interface ExportArgs {
  /** The session to export; the newest of the folder when absent. */
  id?: string;
  /** From `--format`, else from the extension of `-o`, else html. */
  format: "html" | "md";
  /** `-o FILE`; `-` is stdout. Absent: html goes to `<id>.html`, Markdown to stdout. */
  output?: string;
  /** Replace an existing file. */
  force: boolean;
}
export type SandboxFlag = "auto" | "required" | "off";

export interface CliArgs {
  task?: string;
  cwd: string;
  /** `openai`: Chat Completions; `openai-responses`: OpenAI's Responses API. */
  provider: "anthropic" | "openai" | "openai-responses";
  model?: string;
  baseURL?: string;
  allowBash: boolean;
  /** Rules from --allow and --deny, in the order given. */
  rules: Rule[];
  /** `mini-agent rules …`: the words after `rules`. */
  rulesCommand?: string[];
  /** `mini-agent export [ID] [--format html|md] [-o FILE] [--force]`. */
  exportCommand?: ExportArgs;
  /** `mini-agent acp`: an Agent Client Protocol agent on stdio, for an editor. */
  acpCommand?: true;
  sandbox: SandboxFlag;
  /** Absolute paths hidden inside the sandbox, besides the credential stores. */
  sandboxHide: string[];
  sandboxLimits: SandboxLimits;
  continue: boolean;
  resume?: string;
  sessions: boolean;
  outputFormat: OutputFormat;
  /** `--input-format stream-json`: prompts and approval answers as JSON lines on stdin. */
  inputFormat: "text" | "stream-json";
  /** `--approval-timeout S`, in milliseconds: an unanswered approval request is then denied. */
  approvalTimeoutMs: number;
  /** `--token-budget N`: input plus output tokens for the run (see `cli/budget.ts`). */
  tokenBudget?: number;
  maxTurns: number;
  /** `--context-window N`: the model's context window in tokens, for compaction. */
  contextWindow?: number;
  /** `--thinking LEVEL`; unset leaves the model's default. */
  thinking?: ThinkingLevel;
  /** `--hide-thinking`: the text output shows no reasoning on the terminal. */
  hideThinking: boolean;
  debug: boolean;
  version: boolean;
  help: boolean;
}

export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(withNegativeValues(argv));
  } catch (error) {
    throw parseError(error as Error & { code?: string });
  }
  const { values, positionals } = parsed;
  if (values.print !== undefined && positionals.length > 0) {
    throw new UsageError("give the task either with --print or as an argument, not both");
  }
  const rulesCommand = positionals[0] === "rules" ? positionals.slice(1) : undefined;
  const exportCommand = exportFrom(positionals, values);
  const acpCommand = positionals[0] === "acp";
  if (acpCommand && positionals.length > 1)
    throw new UsageError("acp takes no task: the editor sends the prompts");
  const subcommand = rulesCommand !== undefined || exportCommand !== undefined || acpCommand;
  const task =
    values.print ?? (positionals.length > 0 && !subcommand ? positionals.join(" ") : undefined);
  if (task !== undefined && task.trim() === "") throw new UsageError("the task is empty");
  const provider = values.provider ?? "anthropic";
  if (provider !== "anthropic" && provider !== "openai" && provider !== "openai-responses") {
    throw new UsageError(
      `unknown provider ${JSON.stringify(provider)} (anthropic, openai or openai-responses)`,
    );
  }
  const outputFormat = values["output-format"] ?? "text";
  if (outputFormat !== "text" && outputFormat !== "json" && outputFormat !== "stream-json") {
    throw new UsageError(
      `unknown output format ${JSON.stringify(outputFormat)} (text, json or stream-json)`,
    );
  }
  const sandbox = values.sandbox ?? "auto";
  if (sandbox !== "auto" && sandbox !== "required" && sandbox !== "off") {
    throw new UsageError(`unknown sandbox mode ${JSON.stringify(sandbox)} (auto, required or off)`);
  }
  const cwd = values.cwd ?? process.cwd();
  const sandboxHide = (values["sandbox-hide"] ?? []).map((path) => {
    if (path === "") throw new UsageError("--sandbox-hide is empty: name a file or folder to hide");
    return resolve(cwd, path);
  });
  const sandboxLimits = limitsFrom(values["sandbox-processes"], values["sandbox-memory"]);
  const maxTurns = values["max-turns"] === undefined ? 50 : Number(values["max-turns"]);
  if (!Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new UsageError(
      `--max-turns must be a whole number of at least 1, not ${JSON.stringify(values["max-turns"])}`,
    );
  }
  const contextWindow =
    values["context-window"] === undefined ? undefined : Number(values["context-window"]);
  if (
    contextWindow !== undefined &&
    (!/^\d+$/.test(values["context-window"] ?? "") || contextWindow < 1000)
  ) {
    throw new UsageError(
      `--context-window must be a whole number of tokens, at least 1000, not ${JSON.stringify(values["context-window"])}`,
    );
  }
  const inputFormat = values["input-format"] ?? "text";
  if (inputFormat !== "text" && inputFormat !== "stream-json") {
    throw new UsageError(
      `unknown input format ${JSON.stringify(inputFormat)} (text or stream-json)`,
    );
  }
  if (inputFormat === "stream-json" && outputFormat !== "stream-json") {
    throw new UsageError(
      "--input-format stream-json needs --output-format stream-json (approval requests are events)",
    );
  }
  if (inputFormat === "stream-json" && task !== undefined) {
    throw new UsageError(
      'with --input-format stream-json the prompts come on stdin as {"type":"user","text":…} lines, not as a task',
    );
  }
  const approvalTimeout = values["approval-timeout"] ?? "300";
  if (
    !/^\d+(\.\d+)?$/.test(approvalTimeout) ||
    Number(approvalTimeout) <= 0 ||
    Number(approvalTimeout) > maxApprovalTimeoutSeconds
  ) {
    throw new UsageError(
      `--approval-timeout must be a number of seconds from 0 (exclusive) to ${maxApprovalTimeoutSeconds}, not ${JSON.stringify(approvalTimeout)}`,
    );
  }
  const budget = values["token-budget"];
  if (budget !== undefined && (!/^\d+$/.test(budget) || Number(budget) < 1)) {
    throw new UsageError(
      `--token-budget must be a whole number of tokens, at least 1, not ${JSON.stringify(budget)}`,
    );
  }
  const thinking = values.thinking;
  if (thinking !== undefined && !thinkingLevels.includes(thinking as ThinkingLevel)) {
    throw new UsageError(
      `unknown thinking level ${JSON.stringify(thinking)} (off, low, medium or high)`,
    );
  }
  if (values.continue && values.resume !== undefined) {
    throw new UsageError("use either --continue or --resume, not both");
  }
  if (values.model === "")
    throw new UsageError("--model is empty: name a model, or leave the flag out");
  if (values.cwd === "")
    throw new UsageError("--cwd is empty: name a folder, or leave the flag out");
  const model = values.model ?? nonEmpty(env.MINI_AGENT_MODEL);
  if (provider !== "anthropic" && model === undefined) {
    const example = provider === "openai" ? "--model gpt-5 or --model llama3.1" : "--model gpt-5.5";
    throw new UsageError(
      `--provider ${provider} needs --model (or MINI_AGENT_MODEL), e.g. ${example}`,
    );
  }
  const state = env.MINI_AGENT_HOME;
  if (state && !isAbsolute(state))
    throw new UsageError(`MINI_AGENT_HOME must be an absolute path, not ${JSON.stringify(state)}`);
  const urlVariable = provider === "anthropic" ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL";
  const baseURL = values["base-url"] ?? nonEmpty(env[urlVariable]);
  if (baseURL !== undefined)
    checkURL(baseURL, values["base-url"] !== undefined ? "--base-url" : urlVariable);
  return {
    ...(task !== undefined && { task }),
    cwd,
    provider,
    ...(model !== undefined && { model }),
    ...(baseURL !== undefined && { baseURL }),
    allowBash: values["allow-bash"] ?? false,
    rules: rulesFrom(parsed.tokens),
    ...(rulesCommand && { rulesCommand }),
    ...(exportCommand && { exportCommand }),
    ...(acpCommand && { acpCommand }),
    sandbox,
    sandboxHide,
    sandboxLimits,
    continue: values.continue ?? false,
    ...(values.resume !== undefined && { resume: values.resume }),
    sessions: values.sessions ?? false,
    outputFormat,
    inputFormat,
    approvalTimeoutMs: Number(approvalTimeout) * 1000,
    ...(budget !== undefined && { tokenBudget: Number(budget) }),
    maxTurns,
    ...(contextWindow !== undefined && { contextWindow }),
    ...(thinking !== undefined && { thinking: thinking as ThinkingLevel }),
    hideThinking: values["hide-thinking"] ?? false,
    debug: values.debug ?? false,
    version: values.version ?? false,
    help: values.help ?? false,
  };
}

/** The longest wait a Node timer can hold, 2^31-1 ms, in whole seconds: a longer one fires at once. */
const maxApprovalTimeoutSeconds = 2147483;

const thinkingLevels: readonly ThinkingLevel[] = ["off", "low", "medium", "high"];

function parse(argv: string[]) {
  return parseArgs({ args: argv, allowPositionals: true, strict: true, tokens: true, options });
}

const options = {
  print: { type: "string", short: "p" },
  cwd: { type: "string" },
  provider: { type: "string" },
  model: { type: "string", short: "m" },
  "base-url": { type: "string" },
  "allow-bash": { type: "boolean" },
  allow: { type: "string", multiple: true },
  deny: { type: "string", multiple: true },
  sandbox: { type: "string" },
  "sandbox-hide": { type: "string", multiple: true },
  "sandbox-processes": { type: "string" },
  "sandbox-memory": { type: "string" },
  continue: { type: "boolean", short: "c" },
  resume: { type: "string", short: "r" },
  sessions: { type: "boolean" },
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
  debug: { type: "boolean" },
  version: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
} as const;

/** `export [ID]` and its flags; the flags anywhere else are a mistake said as such. */
function exportFrom(
  positionals: string[],
  values: ReturnType<typeof parse>["values"],
): ExportArgs | undefined {
  if (positionals[0] !== "export") {
    const flag =
      values.format !== undefined
        ? "--format"
        : values.output !== undefined
          ? "-o"
          : values.force
            ? "--force"
            : undefined;
    if (flag) throw new UsageError(`${flag} is for mini-agent export [ID] (see --help)`);
    return undefined;
  }
  if (positionals.length > 2)
    throw new UsageError("usage: mini-agent export [ID] [--format html|md] [-o FILE] [--force]");
  const output = values.output;
  if (output === "") throw new UsageError("-o is empty: name a file, or - for stdout");
  const format =
    values.format ?? (output !== undefined && /\.(md|markdown)$/i.test(output) ? "md" : "html");
  if (format !== "html" && format !== "md")
    throw new UsageError(`unknown export format ${JSON.stringify(format)} (html or md)`);
  const id = positionals[1];
  return {
    ...(id !== undefined && { id }),
    format,
    ...(output !== undefined && { output }),
    force: values.force ?? false,
  };
}

/** `--max-turns -1` means the value -1 (then refused as a number), not a missing value. */
function withNegativeValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const next = argv[i + 1];
    if (arg === "--") return [...out, ...argv.slice(i)];
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
function rulesFrom(tokens: ReturnType<typeof parse>["tokens"]): Rule[] {
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

function checkURL(url: string, from: string): void {
  let protocol = "";
  try {
    protocol = new URL(url).protocol;
  } catch {}
  if (protocol !== "http:" && protocol !== "https:") {
    throw new UsageError(
      `${from} must be an http(s) address such as http://127.0.0.1:11434/v1, not ${JSON.stringify(shownURL(url))}`,
    );
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

const sizeUnits: Record<string, number> = { "": 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };

/** `--sandbox-processes N` and `--sandbox-memory SIZE` (bytes, or with K, M, G or T). */
function limitsFrom(processes: string | undefined, memory: string | undefined): SandboxLimits {
  const limits: SandboxLimits = {};
  if (processes !== undefined) {
    const count = Number(processes);
    if (!/^\d+$/.test(processes) || count < 1)
      throw new UsageError(
        `--sandbox-processes must be a whole number of at least 1, not ${JSON.stringify(processes)}`,
      );
    limits.processes = count;
  }
  if (memory !== undefined) {
    const size = /^(\d+(?:\.\d+)?)([kmgt]?)i?b?$/i.exec(memory);
    const bytes = size
      ? Math.floor(Number(size[1]) * (sizeUnits[size[2]?.toLowerCase() ?? ""] ?? 0))
      : 0;
    if (bytes < 1)
      throw new UsageError(
        `--sandbox-memory must be a size such as 512M, 16G or a number of bytes, not ${JSON.stringify(memory)}`,
      );
    limits.memoryBytes = bytes;
  }
  return limits;
}
