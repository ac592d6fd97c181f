import type { HookCommand } from "../config/hooks.js";
import { contentHash } from "../crypto.js";
import { coverageOf } from "../mcp/programs.js";
import { canonicalJson, type TrustEntry } from "../trust/trust.js";

/**
 * What trusting a project's hooks covers: the `hooks` of its configuration file and, by content,
 * every workspace file a hook's command runs or names (`coverageOf`, the function that covers an
 * MCP server's command line), so a script the model rewrites is never run silently. The trust
 * record keeps one hash for all of them (`config` kind, name `hooks`); each hook's own hash is
 * computed again before every run, and a change blocks it.
 *
 * A hook's command is a shell line. A simple one (`python3 "$CLAUDE_PROJECT_DIR"/x.py --flag`) is
 * read into words; one with a pipeline, a list, a redirect, a substitution or a variable other
 * than the project folder's is covered as far as its words name files, and the trust question
 * says in words that what it runs is not known in full.
 */

/** The trust record's name for a project's hooks (of kind `config`). */
export const HOOKS_TRUST_NAME = "hooks";

/** The variables a hook command may name the project folder by. */
export const PROJECT_DIR_VARIABLES = ["CLAUDE_PROJECT_DIR", "MINI_AGENT_PROJECT_DIR"] as const;

export interface HookFolders {
  /** The project root (where `.mini-agent/` is) and the workspace: where the model can write. */
  root: string;
  workspace: string;
  /** The environment hooks run with (its `PATH` decides what a word runs). */
  env: NodeJS.ProcessEnv;
}

/** One hook's coverage: its hash, the files it covers, what is not known of what it runs. */
export interface HookCoverage {
  hash: string;
  programs: string[];
  unknown: string[];
}

/** The coverage of one hook's command as things are now. */
export async function hookCoverage(hook: HookCommand, folders: HookFolders): Promise<HookCoverage> {
  const { words, unknown } = commandWords(hook.command, folders.root);
  const [command = "sh", ...args] = unknown === undefined ? words : ["sh", "-c", hook.command];
  const covered = await coverageOf({ command, args }, folders);
  const extra = unknown === undefined ? [] : [unknown];
  return { ...covered, unknown: [...extra, ...covered.unknown] };
}

/** The trust entry for a project's hooks as they are now, with each hook's coverage. */
export async function projectHooksTrust(
  hooks: readonly HookCommand[],
  folders: HookFolders,
): Promise<{ entry: TrustEntry; coverage: HookCoverage[] }> {
  const coverage = await Promise.all(hooks.map((hook) => hookCoverage(hook, folders)));
  const listed = hooks.map((hook, at) => ({
    event: hook.event,
    matcher: hook.matcher ?? null,
    command: hook.command,
    timeout: hook.timeoutSeconds,
    covered: coverage[at]?.hash ?? "",
  }));
  const hash = contentHash(canonicalJson(listed));
  return { entry: { kind: "config", name: HOOKS_TRUST_NAME, hash }, coverage };
}

/** How the trust question and `mini-agent trust` show a project's hooks: one phrase each. */
export function shownHooks(
  hooks: readonly HookCommand[],
  coverage: readonly HookCoverage[],
): string {
  return hooks
    .map((hook, at) => {
      const covered = coverage[at];
      const files = covered?.programs.length
        ? `; with the content of ${covered.programs.join(", ")}`
        : "";
      const unknown = covered?.unknown.length
        ? `; not known in full: ${covered.unknown.join("; ")}`
        : "";
      return `${hook.event} ${JSON.stringify(hook.command)}${files}${unknown}`;
    })
    .join(" | ");
}

/**
 * A simple shell line as its words, the project folder's variables put in; `unknown` says why it
 * is not one (then `words` is empty).
 */
export function commandWords(
  command: string,
  projectDir: string,
): { words: string[]; unknown?: string } {
  const notSimple = (why: string) => ({
    words: [],
    unknown: `the hook's command ${why}, so what it runs is not known in full`,
  });
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < command.length; i++) {
    const char = command[i] ?? "";
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
      continue;
    }
    if (char === "\\") {
      const next = command[i + 1];
      if (next === undefined || next === "\n") return notSimple("continues a line");
      word = (word ?? "") + next;
      i++;
      continue;
    }
    if (char === "$") {
      const variable = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/.exec(
        command.slice(i),
      );
      const name = variable?.[1] ?? variable?.[2];
      if (!variable || !(PROJECT_DIR_VARIABLES as readonly string[]).includes(name ?? ""))
        return notSimple("uses a variable or substitution other than the project folder's");
      word = (word ?? "") + projectDir;
      i += variable[0].length - 1;
      continue;
    }
    if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === "`") return notSimple("holds a command substitution");
      else word += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      word = word ?? "";
      continue;
    }
    if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
      continue;
    }
    if (
      /[|&;<>()`*?[\]{}~#]/.test(char) ||
      (char === "=" && word !== undefined && words.length === 0)
    )
      return notSimple(
        `holds ${JSON.stringify(char)} (a list, pipeline, redirect, pattern or assignment)`,
      );
    word = (word ?? "") + char;
  }
  if (quote !== undefined) return notSimple("has an unclosed quote");
  if (word !== undefined) words.push(word);
  if (words.length === 0) return notSimple("is empty");
  return { words };
}
