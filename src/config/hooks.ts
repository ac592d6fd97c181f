import { ConfigError } from "./parse.js";

/**
 * The `hooks` object of a configuration file, in Claude Code's shape, so one copied from its
 * settings works: events → matchers → handlers.
 *
 * ```json
 * { "hooks": { "PreToolUse": [
 *   { "matcher": "Bash", "hooks": [{ "type": "command", "command": "python3 check.py", "timeout": 30 }] }
 * ] } }
 * ```
 *
 * An event or a handler type mini-agent does not run (`PermissionRequest`, `SubagentStop`, a
 * `prompt` or `http` handler) is one warning line and is never fired; the rest of the file works.
 * A known event written wrongly (a handler without a command, a matcher that is no regular
 * expression, a timeout that is no positive number, a `sandbox` that is no boolean) is one
 * `ConfigError` line: a hook meant to guard a call never silently goes missing.
 */

/** The events mini-agent knows, in Claude Code's names. */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SessionStart",
  "SessionEnd",
  "PreCompact",
  "Notification",
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The events this version fires; the others are known, said once, and not run yet. */
export const FIRED_EVENTS: readonly HookEvent[] = ["PreToolUse", "PostToolUse"];

/** Claude Code's default timeout of a command hook, in seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 60;
/** The longest timeout a hook may name: an hour. */
export const MAX_TIMEOUT_SECONDS = 3600;

/** One command hook as configured. */
export interface HookCommand {
  event: HookEvent;
  /** Which tools it is for (`undefined`: every one); see `matchesTool`. */
  matcher?: string;
  /** Run by `sh -c` in the workspace. */
  command: string;
  timeoutSeconds: number;
  /** The file that names it, and whether that is the user's or a project's. */
  file: string;
  scope: "user" | "project";
  /**
   * Whether it runs in the sandbox (where the sandbox works): a project's hook always, a user's
   * when its handler says `"sandbox": true`. A project's `"sandbox": false` is not honoured.
   */
  sandboxed: boolean;
}

export interface ParsedHooks {
  hooks: HookCommand[];
  /** One line each (without `mini-agent: `) for what is never fired. */
  warnings: string[];
}

/**
 * Reads a file's `hooks` value (absent: none). Throws one `ConfigError` line when a known event
 * is written wrongly; returns a warning line for each unknown event or handler type.
 */
export function parseHooks(value: unknown, file: string, scope: "user" | "project"): ParsedHooks {
  const parsed: ParsedHooks = { hooks: [], warnings: [] };
  if (value === undefined) return parsed;
  if (!isObject(value))
    throw new ConfigError(`${file}: hooks must be an object of events, not ${shown(value)}`);
  for (const [event, groups] of Object.entries(value)) {
    const where = `hooks.${event}`;
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      parsed.warnings.push(
        `${file}: ${where} is not an event mini-agent runs (${HOOK_EVENTS.join(", ")}); it is never fired`,
      );
      continue;
    }
    if (!Array.isArray(groups))
      throw new ConfigError(
        `${file}: ${where} must be an array of { matcher, hooks }, not ${shown(groups)}`,
      );
    for (const [index, group] of groups.entries()) {
      readGroup(group, `${where}[${index}]`, event as HookEvent, { file, scope }, parsed);
    }
  }
  const unfired = [
    ...new Set(parsed.hooks.map((hook) => hook.event).filter((e) => !FIRED_EVENTS.includes(e))),
  ];
  for (const event of unfired)
    parsed.warnings.push(
      `${file}: hooks.${event} is not run by this version of mini-agent yet (only ${FIRED_EVENTS.join(" and ")}); it is never fired`,
    );
  parsed.hooks = parsed.hooks.filter((hook) => FIRED_EVENTS.includes(hook.event));
  return parsed;
}

function readGroup(
  group: unknown,
  where: string,
  event: HookEvent,
  from: Pick<HookCommand, "file" | "scope">,
  parsed: ParsedHooks,
): void {
  const { file } = from;
  if (!isObject(group))
    throw new ConfigError(
      `${file}: ${where} must be an object { matcher, hooks }, not ${shown(group)}`,
    );
  const { matcher, hooks } = group;
  if (matcher !== undefined && typeof matcher !== "string")
    throw new ConfigError(`${file}: ${where}.matcher must be a string, not ${shown(matcher)}`);
  if (typeof matcher === "string") checkMatcher(matcher, `${file}: ${where}.matcher`);
  if (!Array.isArray(hooks))
    throw new ConfigError(
      `${file}: ${where}.hooks must be an array of handlers, not ${shown(hooks)}`,
    );
  for (const [index, handler] of hooks.entries()) {
    const at = `${where}.hooks[${index}]`;
    if (!isObject(handler))
      throw new ConfigError(
        `${file}: ${at} must be an object { type, command }, not ${shown(handler)}`,
      );
    if (handler.type !== "command") {
      parsed.warnings.push(
        `${file}: ${at} has type ${shown(handler.type)}, which mini-agent does not run (only "command"); it is never fired`,
      );
      continue;
    }
    const { command, timeout, sandbox } = handler;
    if (typeof command !== "string" || command.trim() === "")
      throw new ConfigError(
        `${file}: ${at}.command must be a non-empty string, not ${shown(command)}`,
      );
    if (
      timeout !== undefined &&
      (typeof timeout !== "number" ||
        !Number.isFinite(timeout) ||
        timeout <= 0 ||
        timeout > MAX_TIMEOUT_SECONDS)
    )
      throw new ConfigError(
        `${file}: ${at}.timeout must be a number of seconds above 0 and at most ${MAX_TIMEOUT_SECONDS}, not ${shown(timeout)}`,
      );
    if (sandbox !== undefined && typeof sandbox !== "boolean")
      throw new ConfigError(`${file}: ${at}.sandbox must be true or false, not ${shown(sandbox)}`);
    if (sandbox === false && from.scope === "project")
      parsed.warnings.push(
        `${file}: ${at}.sandbox is false, which only your own file may say; this hook runs in the sandbox`,
      );
    parsed.hooks.push({
      event,
      ...(typeof matcher === "string" && !matchesAll(matcher) && { matcher }),
      command,
      timeoutSeconds: typeof timeout === "number" ? timeout : DEFAULT_TIMEOUT_SECONDS,
      ...from,
      sandboxed: from.scope === "project" || sandbox === true,
    });
  }
}

/** `""` and `"*"` match every tool, as an absent matcher does. */
function matchesAll(matcher: string): boolean {
  return matcher === "" || matcher === "*";
}

/** A plain matcher (`Bash`, `Edit|Write`) names tools exactly; any other is a regular expression. */
const PLAIN = /^[A-Za-z0-9_|]+$/;

function checkMatcher(matcher: string, where: string): void {
  if (matchesAll(matcher) || PLAIN.test(matcher)) return;
  try {
    new RegExp(matcher);
  } catch (error) {
    throw new ConfigError(`${where} is not a regular expression (${(error as Error).message})`);
  }
}

/**
 * Whether a hook's matcher takes this tool, by its Claude Code name: none, `""` or `*` take every
 * tool; a plain matcher (`Bash`, `Edit|Write`) its names exactly; anything else is a regular
 * expression searched in the name (`mcp__github__.*`), as Claude Code reads it.
 */
export function matchesTool(matcher: string | undefined, tool: string): boolean {
  if (matcher === undefined || matchesAll(matcher)) return true;
  if (PLAIN.test(matcher)) return matcher.split("|").includes(tool);
  return new RegExp(matcher).test(tool);
}

function shown(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
