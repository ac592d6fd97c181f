import { parseArgs } from "node:util";

/** Exit codes, documented in the README. */
export const exitCodes = {
  done: 0,
  error: 1,
  usage: 2,
  maxTurns: 3,
  interrupted: 130,
} as const;

/** A mistake in how mini-agent was called or configured: one line, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export type OutputFormat = "text" | "json" | "stream-json";
export type SandboxFlag = "auto" | "required" | "off";

export interface CliArgs {
  task?: string;
  cwd: string;
  provider: "anthropic" | "openai";
  model?: string;
  baseURL?: string;
  allowBash: boolean;
  sandbox: SandboxFlag;
  continue: boolean;
  resume?: string;
  sessions: boolean;
  outputFormat: OutputFormat;
  maxTurns: number;
  debug: boolean;
  version: boolean;
  help: boolean;
}

export const usage = `Usage: mini-agent [options] ["task"]

Runs one task in the current folder and prints the answer; with no task on a terminal,
starts an interactive session (/exit or Ctrl-D to leave).

Options:
  -p, --print TASK          run TASK once (same as giving it as an argument)
      --cwd DIR             work in DIR instead of the current folder
      --provider NAME       anthropic (default) or openai (OpenAI, Ollama, vLLM, llama.cpp,
                            OpenRouter: any Chat Completions server)
  -m, --model NAME          model (default: $MINI_AGENT_MODEL, else claude-sonnet-5-5 for
                            anthropic; required for openai)
      --base-url URL        provider endpoint (default: $ANTHROPIC_BASE_URL or $OPENAI_BASE_URL,
                            else the provider's public API)
      --allow-bash          let the agent run shell commands without asking
      --sandbox MODE        where bash runs: auto (default: bubblewrap when available),
                            required (never outside the sandbox) or off
  -c, --continue            resume the newest session for this folder
  -r, --resume ID           resume the session ID
      --sessions            list this folder's sessions and exit
      --output-format FMT   text (default), json (one object at the end) or stream-json
      --max-turns N         stop after N model rounds (default 50)
      --debug               show stack traces for errors
  -v, --version             print the version
  -h, --help                print this help

Exit codes: 0 done, 1 error, 2 usage or configuration, 3 turn limit reached, 130 interrupted.`;

export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError((error as Error).message.split("\n")[0] ?? "invalid arguments");
  }
  const { values, positionals } = parsed;
  if (values.print !== undefined && positionals.length > 0) {
    throw new UsageError("give the task either with --print or as an argument, not both");
  }
  const task = values.print ?? (positionals.length > 0 ? positionals.join(" ") : undefined);
  if (task !== undefined && task.trim() === "") throw new UsageError("the task is empty");
  const provider = values.provider ?? "anthropic";
  if (provider !== "anthropic" && provider !== "openai") {
    throw new UsageError(`unknown provider ${JSON.stringify(provider)} (anthropic or openai)`);
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
  const maxTurns = values["max-turns"] === undefined ? 50 : Number(values["max-turns"]);
  if (!Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new UsageError(
      `--max-turns must be a whole number of at least 1, not ${JSON.stringify(values["max-turns"])}`,
    );
  }
  if (values.continue && values.resume !== undefined) {
    throw new UsageError("use either --continue or --resume, not both");
  }
  const model = values.model ?? nonEmpty(env.MINI_AGENT_MODEL);
  if (provider === "openai" && model === undefined) {
    throw new UsageError(
      "--provider openai needs --model (or MINI_AGENT_MODEL), e.g. --model gpt-5 or --model llama3.1",
    );
  }
  const baseURL =
    values["base-url"] ??
    nonEmpty(provider === "openai" ? env.OPENAI_BASE_URL : env.ANTHROPIC_BASE_URL);
  return {
    ...(task !== undefined && { task }),
    cwd: values.cwd ?? process.cwd(),
    provider,
    ...(model !== undefined && { model }),
    ...(baseURL !== undefined && { baseURL }),
    allowBash: values["allow-bash"] ?? false,
    sandbox,
    continue: values.continue ?? false,
    ...(values.resume !== undefined && { resume: values.resume }),
    sessions: values.sessions ?? false,
    outputFormat,
    maxTurns,
    debug: values.debug ?? false,
    version: values.version ?? false,
    help: values.help ?? false,
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      print: { type: "string", short: "p" },
      cwd: { type: "string" },
      provider: { type: "string" },
      model: { type: "string", short: "m" },
      "base-url": { type: "string" },
      "allow-bash": { type: "boolean" },
      sandbox: { type: "string" },
      continue: { type: "boolean", short: "c" },
      resume: { type: "string", short: "r" },
      sessions: { type: "boolean" },
      "output-format": { type: "string" },
      "max-turns": { type: "string" },
      debug: { type: "boolean" },
      version: { type: "boolean", short: "v" },
      help: { type: "boolean", short: "h" },
    },
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
