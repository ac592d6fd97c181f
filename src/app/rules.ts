import { basename, join } from "node:path";
import { sha256Hex } from "../crypto.js";
import { addRules, narrowedNotice, readRules } from "../rules/file.js";
import { type Rule, RuleError } from "../rules/rule.js";
import { stateHome } from "../session/store.js";
import { UsageError } from "./exit.js";
import type { RuleBook } from "./policy.js";

/**
 * The rules file of a workspace: `$MINI_AGENT_HOME/workspaces/<name>-<hash>/rules.json`, in the
 * user's state (which the file tools refuse and the sandbox hides), never in the workspace.
 */
export function rulesFile(env: NodeJS.ProcessEnv, workspace: string): string {
  const hash = sha256Hex(workspace).slice(0, 12);
  const name = basename(workspace).replace(/[^\w.-]/g, "_") || "root";
  return join(stateHome(env), "workspaces", `${name}-${hash}`, "rules.json");
}

/**
 * The rules of a run: the file's (read once, grown by "always"), then the flags'. `tell` gets the
 * notice a rules file of the earlier version is due, once (`narrowedNotice`).
 */
export async function ruleBook(
  file: string,
  flags: Rule[],
  tell?: (line: string) => void,
): Promise<RuleBook> {
  if (tell) {
    const notice = await asUsage(narrowedNotice(file));
    if (notice) tell(notice);
  }
  let saved = await asUsage(readRules(file));
  return {
    current: () => [...saved, ...flags],
    save: async (rules) => {
      saved = await addRules(file, rules);
    },
  };
}

/** A rules file that cannot be read as rules is a configuration error: exit 2, one line. */
export async function asUsage<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw error instanceof RuleError ? new UsageError(error.message) : error;
  }
}
