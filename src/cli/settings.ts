import type { AgentSettings } from "../app/settings.js";
import type { CliArgs } from "./args.js";

/** What the flags and configuration files give every session: the terminal's and an editor's. */
export function agentSettings(args: CliArgs, env: NodeJS.ProcessEnv): AgentSettings {
  return {
    env,
    provider: args.provider,
    ...(args.model !== undefined && { model: args.model }),
    ...(args.baseURL !== undefined && { baseURL: args.baseURL }),
    ...(args.thinking !== undefined && { thinking: args.thinking }),
    allowBash: args.allowBash,
    mode: args.mode,
    rules: args.rules,
    sandbox: args.sandbox,
    sandboxHide: args.sandboxHide,
    sandboxLimits: args.sandboxLimits,
    skillFolders: args.skillFolders,
    ...(args.hooks.length > 0 && { hooks: args.hooks }),
    mcpConfig: args.mcpConfig,
    noMcp: args.noMcp,
    maxTurns: args.maxTurns,
    ...(args.tokenBudget !== undefined && { tokenBudget: args.tokenBudget }),
    ...(args.maxRetries !== undefined && { maxRetries: args.maxRetries }),
    ...(args.contextWindow !== undefined && { contextWindow: args.contextWindow }),
  };
}
