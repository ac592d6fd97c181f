import { isAbsolute, resolve } from "node:path";
import { UsageError } from "../app/exit.js";
import { isMode, type Mode, modes } from "../app/modes.js";
import {
  MAX_COUNT,
  MAX_PROCESSES,
  MIN_CONTEXT_WINDOW,
  MIN_FILE_SIZE,
  MIN_MEMORY,
} from "../config/bounds.js";
import type { HookCommand } from "../config/hooks.js";
import type { FileSettings, FromFile } from "../config/merge.js";
import { sizeInBytes } from "../config/size.js";
import type { Rule } from "../rules/rule.js";
import type { SandboxLimits, SandboxMode } from "../sandbox/bwrap.js";
import type { SkillFolder } from "../skills/discover.js";
import type { ThinkingLevel } from "../types.js";
import { shownURL } from "../url.js";
import {
  checkEmpty,
  checkTogether,
  formatsFrom,
  type Subcommands,
  subcommandsFrom,
} from "./commands.js";
import { commandWords, type FlagValues, type ParsedFlags, parseFlags, rulesFrom } from "./flags.js";

export { exitCodes, UsageError } from "../app/exit.js";
export type { ExportArgs } from "./commands.js";

export type OutputFormat = "text" | "json" | "stream-json";

/** Where each configurable value came from: `--model`, `MINI_AGENT_MODEL`, a file, `default`. */
export type ArgSources = Partial<Record<SourcedField, string>>;
export type SourcedField =
  | "provider"
  | "model"
  | "baseURL"
  | "thinking"
  | "contextWindow"
  | "maxTurns"
  | "sandbox"
  | "processes"
  | "memory"
  | "fileSize";

export interface CliArgs extends Subcommands {
  task?: string;
  cwd: string;
  /** `openai`: Chat Completions; `openai-responses`: OpenAI's Responses API. */
  provider: "anthropic" | "openai" | "openai-responses";
  model?: string;
  baseURL?: string;
  allowBash: boolean;
  /** `--mode`: the session mode the run starts in (`code` by default). */
  mode: Mode;
  /** Rules of the configuration files, then of --allow and --deny, in the order given. */
  rules: Rule[];
  sandbox: SandboxMode;
  /** Absolute paths hidden inside the sandbox, besides the credential stores. */
  sandboxHide: string[];
  sandboxLimits: SandboxLimits;
  /** `mcpServers` of the user's configuration file, for the MCP wiring. */
  mcpServers?: FromFile<Record<string, unknown>>;
  /** `skills.paths` of the configuration files, absolute, each with the scope of its file. */
  skillFolders: SkillFolder[];
  /** The command hooks of the configuration files, the user file's first. */
  hooks: HookCommand[];
  /** `--skill NAME` (repeatable): the skills whose text goes before the task. */
  skills: string[];
  /** `--image FILE` (repeatable): images attached to the task, as given. */
  images: string[];
  /** `--mcp-config FILE`, in the order given (the first named wins a name clash). */
  mcpConfig: string[];
  /** `--no-mcp`: no MCP server is read or started. */
  noMcp: boolean;
  continue: boolean;
  /** The id, or a prefix of it; empty for `--resume` without one (the picker). */
  resume?: string;
  sessions: boolean;
  /** `--sessions --all`: every folder's sessions. */
  allSessions: boolean;
  outputFormat: OutputFormat;
  /** `--input-format stream-json`: prompts and approval answers as JSON lines on stdin. */
  inputFormat: "text" | "stream-json";
  /** `--approval-timeout S`, in milliseconds: an unanswered approval request is then denied. */
  approvalTimeoutMs: number;
  /** `--token-budget N`: input plus output tokens for the run (see `cli/budget.ts`). */
  tokenBudget?: number;
  /** `--max-retries N`: a lost round runs again at most N times, and the SDK retries nothing itself. */
  maxRetries?: number;
  maxTurns: number;
  /** `--context-window N`: the model's context window in tokens, for compaction. */
  contextWindow?: number;
  /** `--thinking LEVEL`; unset leaves the model's default. */
  thinking?: ThinkingLevel;
  /** `--hide-thinking`: the text output shows no reasoning on the terminal. */
  hideThinking: boolean;
  /** `rules explain --stdin`: the commands to explain come on stdin, one a line. */
  stdin: boolean;
  /** Where the configurable values came from (`mini-agent config` prints them). */
  sources: ArgSources;
  debug: boolean;
  version: boolean;
  help: boolean;
}

const noFiles: FileSettings = { hide: [], rules: [], skills: [], hooks: [], hookWarnings: [] };

/** Flags over environment over the configuration files over the defaults. */
export function parseCliArgs(
  argv: string[],
  env: NodeJS.ProcessEnv,
  files: FileSettings = noFiles,
): CliArgs {
  return resolveArgs(parseFlags(argv), env, files);
}

export function resolveArgs(
  parsed: ParsedFlags,
  env: NodeJS.ProcessEnv,
  files: FileSettings = noFiles,
): CliArgs {
  const { values, positionals } = parsed;
  const commands = subcommandsFrom(commandWords(parsed), values);
  if (parsed.tokens.filter((token) => token.name === "print").length > 1)
    throw new UsageError("--print is given twice: give the task once");
  const task = taskFrom(values, positionals, Object.keys(commands).length > 0);
  const sources: ArgSources = {};
  const pick = picker(sources);
  const provider = providerFrom(values, files, pick);
  const formats = formatsFrom(values, task);
  checkEmpty(values);
  checkTogether(values, task, formats.inputFormat === "stream-json", "acpCommand" in commands);
  const state = env.MINI_AGENT_HOME;
  if (state && !isAbsolute(state))
    throw new UsageError(`MINI_AGENT_HOME must be an absolute path, not ${JSON.stringify(state)}`);
  const model = modelFrom(values, env, files, provider, pick);
  const baseURL = baseURLFrom(values, env, files, provider, pick);
  const cwd = values.cwd ?? process.cwd();
  return {
    ...commands,
    ...(task !== undefined && { task }),
    cwd,
    provider,
    ...(model !== undefined && { model }),
    ...(baseURL !== undefined && { baseURL }),
    allowBash: values["allow-bash"] ?? false,
    mode: modeFrom(values.mode),
    rules: [...files.rules.map((rule) => rule.value), ...rulesFrom(parsed.tokens)],
    ...sandboxFrom(values, files, cwd, pick),
    ...(files.mcpServers && { mcpServers: files.mcpServers }),
    skillFolders: files.skills.map(({ value, scope }) => ({ path: value, scope })),
    hooks: files.hooks,
    skills: values.skill ?? [],
    images: values.image ?? [],
    mcpConfig: mcpConfigFrom(values["mcp-config"], cwd),
    noMcp: values["no-mcp"] ?? false,
    continue: values.continue ?? false,
    ...(values.resume !== undefined && { resume: values.resume }),
    sessions: values.sessions ?? false,
    allSessions: values.all ?? false,
    ...formats,
    ...numbersFrom(values, files, pick),
    hideThinking: values["hide-thinking"] ?? false,
    stdin: values.stdin ?? false,
    sources,
    debug: values.debug ?? false,
    version: values.version ?? false,
    help: values.help ?? false,
  };
}

type Pick = <T>(field: SourcedField, ...candidates: [T | undefined, string][]) => T | undefined;

/** The first value given, highest precedence first; its source is noted (else `default`). */
function picker(sources: ArgSources): Pick {
  return (field, ...candidates) => {
    for (const [value, source] of candidates) {
      if (value !== undefined) {
        sources[field] = source;
        return value;
      }
    }
    sources[field] = "default";
    return undefined;
  };
}

const fromFile = <T>(setting: FromFile<T> | undefined): [T | undefined, string] => [
  setting?.value,
  setting?.file ?? "",
];

function taskFrom(
  values: FlagValues,
  positionals: string[],
  subcommand: boolean,
): string | undefined {
  if (values.print !== undefined && positionals.length > 0) {
    throw new UsageError("give the task either with --print or as an argument, not both");
  }
  const task =
    values.print ?? (positionals.length > 0 && !subcommand ? positionals.join(" ") : undefined);
  if (task !== undefined && task.trim() === "") throw new UsageError("the task is empty");
  return task;
}

function providerFrom(values: FlagValues, files: FileSettings, pick: Pick): CliArgs["provider"] {
  const provider =
    pick<string>("provider", [values.provider, "--provider"], fromFile(files.provider)) ??
    "anthropic";
  if (provider !== "anthropic" && provider !== "openai" && provider !== "openai-responses") {
    throw new UsageError(
      `unknown provider ${JSON.stringify(provider)} (anthropic, openai or openai-responses)`,
    );
  }
  return provider;
}

function modelFrom(
  values: FlagValues,
  env: NodeJS.ProcessEnv,
  files: FileSettings,
  provider: CliArgs["provider"],
  pick: Pick,
): string | undefined {
  const model = pick(
    "model",
    [values.model, "--model"],
    [nonEmpty(env.MINI_AGENT_MODEL), "MINI_AGENT_MODEL"],
    fromFile(files.model),
  );
  if (provider !== "anthropic" && model === undefined) {
    const example = provider === "openai" ? "--model gpt-5 or --model llama3.1" : "--model gpt-5.5";
    throw new UsageError(
      `--provider ${provider} needs --model (or MINI_AGENT_MODEL), e.g. ${example}`,
    );
  }
  return model;
}

function baseURLFrom(
  values: FlagValues,
  env: NodeJS.ProcessEnv,
  files: FileSettings,
  provider: CliArgs["provider"],
  pick: Pick,
): string | undefined {
  const variable = provider === "anthropic" ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL";
  // A file's base URL is for the provider that file names (or the default one): a run with
  // another provider never sends that provider's key to it.
  const fileProvider = files.provider?.value ?? "anthropic";
  const sameKey = (fileProvider === "anthropic") === (provider === "anthropic");
  const baseURL = pick(
    "baseURL",
    [values["base-url"], "--base-url"],
    [nonEmpty(env[variable]), variable],
    sameKey ? fromFile(files.baseURL) : [undefined, ""],
  );
  if (baseURL !== undefined) {
    const source = values["base-url"] !== undefined ? "--base-url" : variable;
    checkURL(baseURL, files.baseURL?.value === baseURL ? `${files.baseURL.file}: baseURL` : source);
  }
  return baseURL;
}

function sandboxFrom(values: FlagValues, files: FileSettings, cwd: string, pick: Pick) {
  const sandbox =
    pick<string>("sandbox", [values.sandbox, "--sandbox"], fromFile(files.sandboxMode)) ?? "auto";
  if (sandbox !== "auto" && sandbox !== "required" && sandbox !== "off") {
    throw new UsageError(`unknown sandbox mode ${JSON.stringify(sandbox)} (auto, required or off)`);
  }
  const flagged = (values["sandbox-hide"] ?? []).map((path) => {
    if (path === "") throw new UsageError("--sandbox-hide is empty: name a file or folder to hide");
    return resolve(cwd, path);
  });
  // Hiding is the sandbox's: without one the flag would promise what nothing keeps.
  if (sandbox === "off" && flagged.length > 0)
    throw new UsageError(
      "--sandbox-hide hides nothing with --sandbox off: bash can read every file",
    );
  for (const limit of ["sandbox-processes", "sandbox-memory", "sandbox-file-size"] as const)
    if (sandbox === "off" && values[limit] !== undefined)
      throw new UsageError(
        `--${limit} limits nothing with --sandbox off: only the sandbox applies it`,
      );
  const sandboxHide = [...files.hide.map((path) => path.value), ...flagged];
  const flags = limitsFrom(
    values["sandbox-processes"],
    values["sandbox-memory"],
    values["sandbox-file-size"],
  );
  const processes = pick(
    "processes",
    [flags.processes, "--sandbox-processes"],
    fromFile(files.processes),
  );
  const memoryBytes = pick(
    "memory",
    [flags.memoryBytes, "--sandbox-memory"],
    fromFile(files.memoryBytes),
  );
  const fileBytes = pick(
    "fileSize",
    [flags.fileBytes, "--sandbox-file-size"],
    fromFile(files.fileBytes),
  );
  const sandboxLimits: SandboxLimits = {
    ...(processes !== undefined && { processes }),
    ...(memoryBytes !== undefined && { memoryBytes }),
    ...(fileBytes !== undefined && { fileBytes }),
  };
  return { sandbox: sandbox as SandboxMode, sandboxHide, sandboxLimits };
}

function numbersFrom(values: FlagValues, files: FileSettings, pick: Pick) {
  const turns = pick<string | number>(
    "maxTurns",
    [values["max-turns"], "--max-turns"],
    fromFile(files.maxTurns),
  );
  const maxTurns = turns === undefined ? 50 : Number(turns);
  const flagTurns = values["max-turns"];
  if (flagTurns !== undefined && !wholeIn(flagTurns, 1, MAX_COUNT)) {
    throw new UsageError(
      `--max-turns must be a whole number from 1 to ${MAX_COUNT}, not ${JSON.stringify(flagTurns)}`,
    );
  }
  const window = values["context-window"];
  if (window !== undefined && !wholeIn(window, MIN_CONTEXT_WINDOW, MAX_COUNT)) {
    throw new UsageError(
      `--context-window must be a whole number of tokens from ${MIN_CONTEXT_WINDOW} to ${MAX_COUNT}, not ${JSON.stringify(window)}`,
    );
  }
  const contextWindow = pick(
    "contextWindow",
    [window === undefined ? undefined : Number(window), "--context-window"],
    fromFile(files.contextWindow),
  );
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
  if (budget !== undefined && !wholeIn(budget, 1, Number.MAX_SAFE_INTEGER)) {
    throw new UsageError(
      `--token-budget must be a whole number of tokens, at least 1, not ${JSON.stringify(budget)}`,
    );
  }
  const retries = values["max-retries"];
  if (retries !== undefined && !wholeIn(retries, 0, maxRetries)) {
    throw new UsageError(
      `--max-retries must be a whole number from 0 to ${maxRetries}, not ${JSON.stringify(retries)}`,
    );
  }
  const thinking = pick<string>(
    "thinking",
    [values.thinking, "--thinking"],
    fromFile(files.thinking),
  );
  if (thinking !== undefined && !thinkingLevels.includes(thinking as ThinkingLevel)) {
    throw new UsageError(
      `unknown thinking level ${JSON.stringify(thinking)} (off, low, medium, high, xhigh or max)`,
    );
  }
  return {
    approvalTimeoutMs: Number(approvalTimeout) * 1000,
    ...(budget !== undefined && { tokenBudget: Number(budget) }),
    ...(retries !== undefined && { maxRetries: Number(retries) }),
    maxTurns,
    ...(contextWindow !== undefined && { contextWindow }),
    ...(thinking !== undefined && { thinking: thinking as ThinkingLevel }),
  };
}

/** Whether `text` is digits only, naming a whole number from `min` to `max`. */
function wholeIn(text: string, min: number, max: number): boolean {
  return /^\d{1,16}$/.test(text) && Number(text) >= min && Number(text) <= max;
}

/** The longest wait a Node timer can hold, 2^31-1 ms, in whole seconds: a longer one fires at once. */
const maxApprovalTimeoutSeconds = 2147483;
/** `--max-retries`: more would wait hours on a provider that is down. */
const maxRetries = 10;

const thinkingLevels: readonly ThinkingLevel[] = ["off", "low", "medium", "high", "xhigh", "max"];

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

/**
 * `--sandbox-processes N`, `--sandbox-memory SIZE` and `--sandbox-file-size SIZE` (bytes, or
 * with K, M, G or T).
 */
function limitsFrom(
  processes: string | undefined,
  memory: string | undefined,
  fileSize: string | undefined,
): SandboxLimits {
  const limits: SandboxLimits = {};
  if (processes !== undefined) {
    if (!wholeIn(processes, 1, MAX_PROCESSES))
      throw new UsageError(
        `--sandbox-processes must be a whole number from 1 to ${MAX_PROCESSES}, not ${JSON.stringify(processes)}`,
      );
    limits.processes = Number(processes);
  }
  if (memory !== undefined) {
    const bytes = sizeInBytes(memory);
    if (bytes < MIN_MEMORY || !Number.isSafeInteger(bytes))
      throw new UsageError(
        `--sandbox-memory must be a size of at least 16M, such as 512M or 16G, not ${JSON.stringify(memory)}`,
      );
    limits.memoryBytes = bytes;
  }
  if (fileSize !== undefined) {
    const bytes = sizeInBytes(fileSize);
    if (bytes < MIN_FILE_SIZE || !Number.isSafeInteger(bytes))
      throw new UsageError(
        `--sandbox-file-size must be a size of at least 1M, such as 1G or 4G, not ${JSON.stringify(fileSize)}`,
      );
    limits.fileBytes = bytes;
  }
  return limits;
}

function mcpConfigFrom(files: string[] | undefined, cwd: string): string[] {
  return (files ?? []).map((file) => {
    if (file === "") throw new UsageError("--mcp-config is empty: name an MCP configuration file");
    return resolve(cwd, file);
  });
}

/** `--mode code|ask|plan`. */
function modeFrom(value: string | undefined): Mode {
  if (value === undefined) return "code";
  if (isMode(value)) return value;
  throw new UsageError(
    `--mode must be ${modes.map((mode) => mode.id).join(", ")}, not ${JSON.stringify(value)}`,
  );
}
