import type { HookCommand } from "../config/hooks.js";
import type { McpServerConfig } from "../mcp/config.js";
import type { Rule } from "../rules/rule.js";
import type { SandboxLimits, SandboxMode } from "../sandbox/bwrap.js";
import type { SkillFolder } from "../skills/discover.js";
import type { ThinkingLevel } from "../types.js";
import type { Mode } from "./modes.js";

/**
 * What every session a front end opens is made from, whatever the front end: a terminal's flags
 * and configuration files, or an editor's agent flags.
 */
export interface AgentSettings {
  env: NodeJS.ProcessEnv;
  /** `openai`: Chat Completions; `openai-responses`: OpenAI's Responses API. */
  provider: "anthropic" | "openai" | "openai-responses";
  model?: string;
  baseURL?: string;
  thinking?: ThinkingLevel;
  /** Every bash command no deny rule matches runs without asking. */
  allowBash: boolean;
  /** The session mode it starts in. */
  mode: Mode;
  /** The rules of the configuration files and the flags, after the rules file's. */
  rules: Rule[];
  sandbox: SandboxMode;
  /** Absolute paths hidden inside the sandbox, besides the credential stores. */
  sandboxHide: string[];
  sandboxLimits: SandboxLimits;
  /** Skill folders of the configuration files, each with the scope of its file. */
  skillFolders: SkillFolder[];
  /**
   * Command hooks of the configuration files (docs/hooks.md); a project file's run only once the
   * trust record holds them and the files they run. Absent: none.
   */
  hooks?: readonly HookCommand[];
  /** MCP configuration files, the first named winning a name clash. */
  mcpConfig: string[];
  /** No MCP server is read or started. */
  noMcp: boolean;
  /** Model rounds allowed per turn. */
  maxTurns: number;
  /** Input plus output tokens for the session. */
  tokenBudget?: number;
  /**
   * How many times a round lost to a passing provider failure runs again; given, the SDK retries
   * nothing itself, so every retry is one the session records and tells (a batch sees each 429).
   * Absent: the SDK's own retries, then the runner's (`retryPolicy`).
   */
  maxRetries?: number;
  /** The model's context window in tokens, for compaction. */
  contextWindow?: number;
  /**
   * Without the provider's key a session still opens, and each model request fails saying what
   * to set (`MissingKeyError`): an editor's agent answers the editor first. Otherwise a missing
   * key is a usage error before anything is made.
   */
  keyLater?: true;
}

/** One session: where it works, and what it goes on from. */
export interface SessionSettings extends AgentSettings {
  /** The real path of the folder it works in, already checked (`workspaceFolder`). */
  workspace: string;
  /** A session file to go on from; without it, a new session. */
  resume?: string;
  /**
   * `now`: the new session's file is made at once (an editor names the session by its id);
   * `first-record`: when its first record is written, so a run that fails before leaves none.
   */
  file: "now" | "first-record";
  /** MCP servers given whole (an editor's), before the configured ones. */
  mcpServers?: readonly McpServerConfig[];
}
