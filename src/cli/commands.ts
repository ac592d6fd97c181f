import { UsageError } from "../app/exit.js";
import type { FlagValues, OptionName } from "./flags.js";

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

export interface RewindArgs {
  /** The session to rewind; the newest of the folder when absent. */
  id?: string;
  /** `--to N`: back to just before the user's prompt N (1 for the first). */
  to: number;
  /** Put back the files the agent changed (not with `--conversation-only`). */
  files: boolean;
  /** Take the conversation back, the rest kept as a branch (not with `--files-only`). */
  conversation: boolean;
  /** `--dry-run`: say what would be done, change nothing. */
  dryRun: boolean;
}

/** The subcommands: `rules …`, `export …`, `config [path]`, `trust [--revoke]`. */
export interface Subcommands {
  rulesCommand?: string[];
  exportCommand?: ExportArgs;
  /** `mini-agent rewind [ID] --to N [--files-only | --conversation-only] [--dry-run]`. */
  rewindCommand?: RewindArgs;
  configCommand?: "show" | "path";
  trustCommand?: "trust" | "revoke";
  /** `mini-agent skills`: list the skills found, with warnings. */
  skillsCommand?: boolean;
  /** `mini-agent mcp …`: the words after `mcp`. */
  mcpCommand?: string[];
  /** `mini-agent acp`: an Agent Client Protocol agent on stdio, for an editor. */
  acpCommand?: true;
}

/**
 * The subcommand the words name, with its arguments. A flag the subcommand has no use for is
 * refused in one line (`flagsUsedBy`), never dropped in silence.
 */
export function subcommandsFrom(positionals: string[], values: FlagValues): Subcommands {
  const commands = commandFrom(positionals, values);
  const named = Object.keys(commands)[0]?.replace(/Command$/, "");
  if (named === undefined) return commands;
  // `rules explain`, `mcp list` and `config path` read flags of their own; the other actions
  // of their command take the command's list, and are named as typed.
  const { rulesCommand, mcpCommand, configCommand } = commands;
  const action = rulesCommand?.[0] ?? mcpCommand?.[0] ?? (configCommand === "path" ? "path" : "");
  const words = action === "" ? named : `${named} ${action}`;
  checkFlagsUsed(words in flagsUsedBy ? words : named, values, "", words);
  return commands;
}

/** The flags of the provider's client, of the approval rules, and of the sandbox. */
const providerFlags = ["provider", "model", "base-url", "thinking", "context-window"] as const;
const ruleFlags = ["allow", "deny", "allow-unsandboxed"] as const;
const sandboxFlags = [
  "sandbox",
  "sandbox-hide",
  "sandbox-processes",
  "sandbox-memory",
  "sandbox-file-size",
] as const;

/**
 * The flags each command reads (besides `--cwd`, `--debug`, `--help`, `--version`, which every
 * one takes): a positive list, so a flag added later is refused by every command until one uses
 * it. A run of a task takes every flag but those of the other commands.
 */
const flagsUsedBy: Record<string, readonly OptionName[]> = {
  // What sets up a turn: the client, the policy, the sandbox, MCP, the limits.
  acp: [
    ...providerFlags,
    ...ruleFlags,
    ...sandboxFlags,
    ...(["allow-bash", "mode", "mcp-config", "no-mcp", "token-budget", "max-turns"] as const),
    "approval-timeout",
  ],
  config: [...providerFlags, "max-turns", ...ruleFlags, ...sandboxFlags],
  "config path": [],
  trust: ["revoke"],
  skills: ["provider", "model", "context-window"],
  rules: [],
  "rules explain": [...ruleFlags, "allow-bash", "mode", "sandbox", "sandbox-hide", "stdin"],
  mcp: [],
  "mcp list": ["mcp-config"],
  export: ["format", "output", "force"],
  rewind: ["to", "dry-run", "files-only", "conversation-only"],
  "--sessions": ["sessions", "all"],
};
const everyCommand = new Set<string>(["cwd", "debug", "help", "version"]);

/** Why a flag a command refuses is not read there, where the refusal alone would puzzle. */
const notRead: Record<string, string> = {
  "rules --stdin": ": it goes with rules explain, which reads the commands on stdin",
};

/**
 * Refuses the first flag given that `command` (its list in `flagsUsedBy`) has no use for, named
 * as the user typed it (`shown`): `--image has no use with acp`.
 */
export function checkFlagsUsed(
  command: string,
  values: FlagValues,
  why = "",
  shown = command,
): void {
  const used = new Set<string>(flagsUsedBy[command]);
  const unused = Object.keys(values).find(
    (name) =>
      values[name as OptionName] !== undefined && !used.has(name) && !everyCommand.has(name),
  );
  if (unused === undefined) return;
  const because = notRead[`${shown} --${unused}`] ?? why;
  throw new UsageError(`--${unused} has no use with ${shown}${because}`);
}

function commandFrom(positionals: string[], values: FlagValues): Subcommands {
  const [first, ...rest] = positionals;
  const exportCommand = exportFrom(positionals, values);
  const rewindCommand = rewindFrom(positionals, values);
  if (rewindCommand) return { rewindCommand };
  if (values.revoke && first !== "trust") throw new UsageError("--revoke is for mini-agent trust");
  if (values.stdin && first !== "rules")
    throw new UsageError("--stdin is for mini-agent rules explain --stdin (one command a line)");
  if (first === "rules") {
    if (rest[0] === "explain") checkExplain(rest.slice(1), values);
    return { rulesCommand: rest };
  }
  if (first === "mcp") return { mcpCommand: rest };
  if (first === "acp") {
    if (rest.length > 0) throw new UsageError("acp takes no task: the editor sends the prompts");
    const terminalOnly = (
      ["continue", "resume", "sessions", "output-format", "input-format", "skill"] as const
    ).find((name) => values[name] !== undefined && values[name] !== false);
    if (terminalOnly)
      throw new UsageError(
        `--${terminalOnly} has no use with acp: the editor opens, loads and lists sessions and reads the updates`,
      );
    return { acpCommand: true };
  }
  if (first === "skills") {
    if (rest.length > 0) throw new UsageError("usage: mini-agent skills");
    return { skillsCommand: true };
  }
  if (exportCommand) return { exportCommand };
  if (first === "config") {
    if (rest.length === 0) return { configCommand: "show" };
    if (rest.length === 1 && rest[0] === "path") return { configCommand: "path" };
    throw new UsageError("usage: mini-agent config [path]");
  }
  if (first === "trust") {
    if (rest.length > 0) throw new UsageError("usage: mini-agent trust [--revoke]");
    return { trustCommand: values.revoke ? "revoke" : "trust" };
  }
  return {};
}

/**
 * `rules explain`'s flags together: the commands come from the words or from stdin, never both,
 * and a flag the answer cannot depend on is refused. Allow rules and `--allow-bash` count only in
 * code mode; an MCP tool is decided by the tool rules and the mode, never the sandbox or
 * `--allow-bash`.
 */
function checkExplain(words: string[], values: FlagValues): void {
  if (values.stdin && words.length > 0)
    throw new UsageError(
      "rules explain --stdin reads the commands on stdin, one a line: give none as an argument",
    );
  if (!values.stdin && words.length === 0)
    throw new UsageError(
      'rules explain needs a command: mini-agent rules explain "COMMAND", or --stdin for one a line',
    );
  const mode = values.mode;
  if (mode === "ask" || mode === "plan") {
    const lifting = values["allow-bash"] ? "--allow-bash" : values.allow ? "--allow" : undefined;
    if (lifting)
      throw new UsageError(
        `${lifting} has no use with --mode ${mode}: allow rules and --allow-bash count only in code mode`,
      );
  }
  if (!values.stdin && isToolName(words.join(" "))) {
    const bashOnly = (["allow-bash", "sandbox", "sandbox-hide"] as const).find(
      (name) => values[name] !== undefined,
    );
    if (bashOnly)
      throw new UsageError(
        `--${bashOnly} has no use with an MCP tool: tool rules and the mode decide it`,
      );
  }
}

/** `mcp__server__tool`: what `rules explain` takes for an MCP tool, not a bash command. */
export function isToolName(text: string): boolean {
  return /^mcp__\S+$/.test(text);
}

/** `export [ID]` and its flags; the flags anywhere else are a mistake said as such. */
function exportFrom(positionals: string[], values: FlagValues): ExportArgs | undefined {
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

const rewindUsage =
  "usage: mini-agent rewind [ID] --to N [--files-only | --conversation-only] [--dry-run]";

/** `rewind [ID] --to N` and its flags; the flags anywhere else are a mistake said as such. */
function rewindFrom(positionals: string[], values: FlagValues): RewindArgs | undefined {
  if (positionals[0] !== "rewind") {
    const flag =
      values.to !== undefined
        ? "--to"
        : values["dry-run"]
          ? "--dry-run"
          : values["files-only"]
            ? "--files-only"
            : values["conversation-only"]
              ? "--conversation-only"
              : undefined;
    if (flag) throw new UsageError(`${flag} is for mini-agent rewind [ID] --to N (see --help)`);
    return undefined;
  }
  if (positionals.length > 2) throw new UsageError(rewindUsage);
  if (values.to === undefined)
    throw new UsageError(
      `rewind needs --to N: the prompt to go back to just before, 1 for the first (${rewindUsage})`,
    );
  if (!/^\d+$/.test(values.to) || Number(values.to) < 1)
    throw new UsageError(
      `--to needs a prompt number, 1 for the first, not ${JSON.stringify(values.to)}`,
    );
  const filesOnly = values["files-only"] ?? false;
  const conversationOnly = values["conversation-only"] ?? false;
  if (filesOnly && conversationOnly)
    throw new UsageError(
      "--files-only and --conversation-only exclude each other: give one, or neither for both",
    );
  const id = positionals[1];
  return {
    ...(id !== undefined && { id }),
    to: Number(values.to),
    files: !conversationOnly,
    conversation: !filesOnly,
    dryRun: values["dry-run"] ?? false,
  };
}

/** `--output-format` and `--input-format`, each known and the two together as they can run. */
export function formatsFrom(values: FlagValues, task: string | undefined) {
  const outputFormat = values["output-format"] ?? "text";
  if (outputFormat !== "text" && outputFormat !== "json" && outputFormat !== "stream-json") {
    throw new UsageError(
      `unknown output format ${JSON.stringify(outputFormat)} (text, json or stream-json)`,
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
  if (values["hide-thinking"] && outputFormat !== "text")
    throw new UsageError(
      `--hide-thinking has no use with --output-format ${outputFormat}: thinking is shown only on a terminal`,
    );
  return { outputFormat, inputFormat } as const;
}

/** Flags that are a mistake alone: an empty value, two that exclude each other. */
export function checkEmpty(values: FlagValues): void {
  if (values.continue && values.resume !== undefined) {
    throw new UsageError("use either --continue or --resume, not both");
  }
  if (values.all && !values.sessions) throw new UsageError("--all goes with --sessions");
  if (values.model === "")
    throw new UsageError("--model is empty: name a model, or leave the flag out");
  if (values.cwd === "")
    throw new UsageError("--cwd is empty: name a folder, or leave the flag out");
  if (values.skill?.includes(""))
    throw new UsageError("--skill is empty: name a skill (mini-agent skills lists them)");
  if (values.image?.includes("")) throw new UsageError("--image is empty: name an image file");
}

/** Flags that mean something only with others: alone they would be dropped in silence. */
export function checkTogether(
  values: FlagValues,
  task: string | undefined,
  jsonInput: boolean,
  acp: boolean,
): void {
  if (values.sessions && task !== undefined)
    throw new UsageError("--sessions lists the sessions: it takes no task");
  if (values.sessions) checkFlagsUsed("--sessions", values, ": it lists the sessions");
  if (values["no-mcp"] && values["mcp-config"] !== undefined)
    throw new UsageError("--mcp-config has no use with --no-mcp: no MCP server is started");
  if (values.skill !== undefined && jsonInput)
    throw new UsageError(
      "--skill goes with a task on the command line, which --input-format stream-json does not take",
    );
  if (values["approval-timeout"] !== undefined && !jsonInput && !acp)
    throw new UsageError(
      "--approval-timeout goes with --input-format stream-json (the approvals asked on stdin) or acp",
    );
}
