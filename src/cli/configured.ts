import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { isatty } from "node:tty";
import { workspaceFolder } from "../app/workspace.js";
import { type ConfigLayer, type LoadedConfig, loadConfig } from "../config/load.js";
import { type FileSettings, mergeConfig } from "../config/merge.js";
import { ConfigError } from "../config/parse.js";
import { within } from "../paths.js";
import { defaultLimits } from "../sandbox/bwrap.js";
import { stateHome } from "../session/store.js";
import { visible } from "../visible.js";
import { type CliArgs, resolveArgs, UsageError } from "./args.js";
import { commandWords, type ParsedFlags } from "./flags.js";

/** The arguments of a run with the configuration files under them, and what the files said. */
export interface Configured {
  args: CliArgs;
  workspace: string;
  config: LoadedConfig;
  files: FileSettings;
}

/**
 * Reads the configuration files for the workspace of `parsed` and resolves the arguments over
 * them: flags > environment > project file > user file > defaults. A bad file is a `UsageError`
 * line; on a terminal an untrusted project file is asked about (a turn only), elsewhere skipped
 * with one line on stderr.
 */
export async function configuredArgs(
  parsed: ParsedFlags,
  env: NodeJS.ProcessEnv,
  stderr: NodeJS.WriteStream,
): Promise<Configured> {
  const home = env.MINI_AGENT_HOME;
  if (home && !isAbsolute(home))
    throw new UsageError(`MINI_AGENT_HOME must be an absolute path, not ${JSON.stringify(home)}`);
  if (parsed.values.cwd === "")
    throw new UsageError("--cwd is empty: name a folder, or leave the flag out");
  const workspace = await workspaceFolder(parsed.values.cwd ?? process.cwd(), stateHome(env));
  const [first, second] = commandWords(parsed);
  const command = ["config", "trust", "export", "rules"].includes(first ?? "");
  const ask = !command && asksHere(parsed) ? askOnTerminal : undefined;
  // The commands that fix things need nothing of the user's file: a bad one must not stop them.
  const fixing =
    (first === "config" && second === "path") ||
    (first === "trust" && parsed.values.revoke === true);
  try {
    const config = await loadConfig({
      stateHome: stateHome(env),
      workspace,
      ...(ask && { ask }),
      ...(fixing && { skipBadUserFile: true }),
    });
    if (!command)
      for (const notice of config.notices) stderr.write(`mini-agent: ${visible(notice)}\n`);
    const project = config.project.state === "trusted" ? config.project.layer : undefined;
    const files = mergedSettings(config, project);
    if (!command)
      for (const warning of files.hookWarnings)
        stderr.write(`mini-agent: warning: ${visible(warning)}\n`);
    return { args: resolveArgs(parsed, env, files), workspace, config, files };
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The user's file and `project` (a project file trusted, or about to be) merged under the
 * default limits: a project's paths are taken from the project root, and its skills folders
 * must be inside the project; the user's are absolute or `~/…`. Throws one `ConfigError` line.
 */
export function mergedSettings(config: LoadedConfig, project: ConfigLayer | undefined) {
  return mergeConfig(config.user, project, defaultLimits, (path, layer, field) => {
    if (layer !== project) return homePath(path, layer.file, field);
    const resolved = resolve(config.root, path);
    if (field === "skills.paths" && !within(config.root, resolved))
      throw new ConfigError(
        `${layer.file}: skills.paths must name folders inside the project, not ${JSON.stringify(path)}`,
      );
    return resolved;
  });
}

/** A path of the user's file: absolute, or `~/…` in the home folder. */
function homePath(path: string, file: string, field: string): string {
  if (path.startsWith("~/")) return resolve(homedir(), path.slice(2));
  if (isAbsolute(path)) return path;
  throw new ConfigError(
    `${file}: ${field} must hold absolute paths or paths starting with ~/, not ${JSON.stringify(path)}`,
  );
}

/** Whether someone at a terminal can answer: stdin and stderr are terminals, prompts are not JSON. */
function asksHere(parsed: ParsedFlags): boolean {
  return (
    isatty(0) && process.stderr.isTTY === true && parsed.values["input-format"] !== "stream-json"
  );
}

/** Asks yes or no on the terminal; `node:readline` is loaded only when a question is asked. */
async function askOnTerminal(question: string): Promise<boolean> {
  const { createInterface } = await import("node:readline");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((answer) => {
    rl.once("close", () => answer(false));
    rl.question(question, (line) => {
      answer(/^y(es)?$/i.test(line.trim()));
      rl.close();
    });
  });
}
