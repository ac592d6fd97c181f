import { type HookCommand, type HookEvent, matchesTool } from "../config/hooks.js";
import type { MoreProtected } from "../protected/files.js";
import type { SandboxOptions } from "../sandbox/bwrap.js";
import { withoutSecrets } from "../secrets.js";
import type { HookRecord } from "../session/records.js";
import { headOf } from "../text.js";
import type { ToolCall, ToolResult } from "../types.js";
import { visible } from "../visible.js";
import { type HookAnswer, hookAnswer } from "./answer.js";
import { claudeToolInput, claudeToolName } from "./claude.js";
import { type HookRun, runHook } from "./run.js";
import { type HookFolders, hookCoverage, PROJECT_DIR_VARIABLES } from "./trust.js";

/**
 * A session's hooks at work: which run for a call, what each is given on stdin, and what their
 * answers decide. A project hook carries the hash of what it runs as it was trusted; before each
 * run that hash is computed again, and a hook whose files changed is not run (a `PreToolUse`
 * call is then blocked). The policy composition (`hookedPolicy`) and the tool decorator
 * (`hookedTools`) are its two callers.
 */

/** A hook ready to run: a project hook with the coverage hash it was trusted with. */
export type ReadyHook = HookCommand & { trusted?: string };

export interface HookContext {
  folders: HookFolders;
  /** The session's id and file, once it has them. */
  session: () => { id: string | undefined; path: string | undefined };
  /** Claude Code's `permission_mode` for the session's mode now. */
  permissionMode: () => string;
  /** A line for the person, whole with its newline. */
  tell: (line: string) => void;
  /** Redacts secret values out of what a hook printed before the model reads it. */
  redact: (text: string) => string;
  /**
   * The sandbox the session's bash runs in: a hook that is `sandboxed` (a project's) runs in it
   * where it works; absent, every hook runs outside it.
   */
  sandbox?: SandboxOptions;
  /** The session's own protected files, kept in the sandbox as they are for bash. */
  moreProtected?: MoreProtected;
  /**
   * Runs a call's `PostToolUse` hooks (`work`; `by` names them) so that what they change in the
   * workspace is measured: kept for a rewind, the new content taken as seen where the agent had
   * seen the file before, and returned. Absent: not measured.
   */
  measure?: <T>(by: string, work: () => Promise<T>) => Promise<{ value: T; changed: HookChange[] }>;
  /** Records each run of a hook in the session (absent: none are recorded). */
  record?: (run: Omit<HookRecord, "type">) => Promise<void>;
}

/** A path the hooks after a call changed, relative to the workspace, and its new content's hash (none: no file now). */
export interface HookChange {
  path: string;
  hash?: string;
}

/** The most changed paths a result names. */
const MOST_CHANGED = 20;

/** What the model reads of the files the hooks after its call changed. */
function changedNote(changed: readonly HookChange[]): string {
  const named = changed.slice(0, MOST_CHANGED).map((change) => change.path);
  const more = changed.length - named.length;
  const list = `${named.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
  const it = changed.length === 1 ? "it" : "them";
  return `PostToolUse hooks changed ${list} after the call: what you saw of ${it} before is out of date`;
}

/** What the `PreToolUse` hooks decided for a call (`by` names the hook). */
export type PreVerdict =
  | { kind: "none" }
  | { kind: "allow" | "ask"; by: string; reason?: string }
  | { kind: "block"; by: string; reason: string };

/** The most of a hook's words that reach the model with a result. */
export const HOOK_TEXT_CHARS = 10_000;

export class RunHooks {
  /** What `PreToolUse` hooks added as context, by the call's input, for its result. */
  private readonly preContext = new WeakMap<object, string>();
  /** The call an input object belongs to, for `PostToolUse`'s `tool_use_id`. */
  private readonly calls = new WeakMap<object, ToolCall>();

  constructor(
    readonly hooks: readonly ReadyHook[],
    private readonly context: HookContext,
  ) {}

  has(event: HookEvent): boolean {
    return this.hooks.some((hook) => hook.event === event);
  }

  /**
   * Runs the `PreToolUse` hooks that match the call, in order, until one blocks. A failure
   * blocks. Of the rest, `ask` wins over `allow`.
   */
  async pre(call: ToolCall, signal: AbortSignal | undefined): Promise<PreVerdict> {
    this.calls.set(call.input, call);
    const tool = claudeToolName(call.name);
    let verdict: PreVerdict = { kind: "none" };
    const context: string[] = [];
    for (const hook of this.matching("PreToolUse", tool)) {
      const by = hookName(hook);
      const answer = await this.run(hook, this.input("PreToolUse", call), signal);
      if (answer.kind === "failed")
        return {
          kind: "block",
          by,
          reason: `the PreToolUse hook ${shownCommand(hook)} failed, so the call is blocked: ${this.bounded(answer.why)}`,
        };
      this.said(hook, answer);
      if (answer.context) context.push(answer.context);
      if (answer.kind === "block")
        return {
          kind: "block",
          by,
          reason: `blocked by the PreToolUse hook ${shownCommand(hook)}: ${this.bounded(answer.reason)}`,
        };
      if (answer.kind === "ask" || (answer.kind === "allow" && verdict.kind === "none"))
        verdict = { kind: answer.kind, by, ...(answer.reason && { reason: answer.reason }) };
    }
    if (context.length > 0) this.preContext.set(call.input, context.join("\n"));
    return verdict;
  }

  /**
   * Runs the `PostToolUse` hooks that match the call after its tool ran; returns the result the
   * model reads: the tool's, with what the hooks said (and `PreToolUse`'s context) after it.
   */
  async post(
    name: string,
    input: unknown,
    result: ToolResult,
    signal: AbortSignal | undefined,
  ): Promise<ToolResult> {
    const notes: string[] = [];
    const key = typeof input === "object" && input !== null ? input : undefined;
    const before = key && this.preContext.get(key);
    if (before) notes.push(`PreToolUse hook context: ${before}`);
    const call = key && this.calls.get(key);
    const hooks = this.matching("PostToolUse", claudeToolName(name));
    const runAll = async () => {
      for (const hook of hooks) {
        const document = {
          ...this.input("PostToolUse", call ?? { id: "", name, input: asObject(input) }),
          tool_response: { content: result.content, is_error: result.isError === true },
        };
        notes.push(...this.postNotes(hook, await this.run(hook, document, signal)));
      }
    };
    let seen = result.seen;
    if (hooks.length > 0 && this.context.measure) {
      const by = hooks.map(hookName).join("; ");
      const { changed } = await this.context.measure(by, runAll);
      if (changed.length > 0) notes.push(changedNote(changed));
      const own = seen && changed.find((change) => change.path === seen?.path);
      if (seen && own) seen = own.hash === undefined ? undefined : { ...seen, sha256: own.hash };
    } else await runAll();
    if (notes.length === 0) return result;
    const { seen: _, ...rest } = result;
    const added = `\n\n${this.bounded(notes.join("\n\n"))}`;
    return {
      ...rest,
      content: `${result.content}${added}`,
      ...(result.parts && { parts: [...result.parts, { type: "text", text: added }] }),
      ...(seen && { seen }),
    };
  }

  /** What one `PostToolUse` hook's answer adds to the result (a failure is said to the person too). */
  private postNotes(hook: ReadyHook, answer: HookAnswer): string[] {
    const shown = shownCommand(hook);
    if (answer.kind === "failed") {
      const why = this.bounded(answer.why);
      this.context.tell(
        `mini-agent: the PostToolUse hook ${visible(shown)} failed: ${visible(why)}\n`,
      );
      return [`the PostToolUse hook ${shown} failed: ${why}`];
    }
    this.said(hook, answer);
    const text = [
      answer.kind === "ok" ? answer.text : undefined,
      answer.kind === "block" ? answer.reason : undefined,
      answer.context,
    ].filter((part): part is string => part !== undefined);
    return text.length > 0 ? [`PostToolUse hook ${shown}: ${text.join("\n")}`] : [];
  }

  private matching(event: HookEvent, tool: string): ReadyHook[] {
    return this.hooks.filter((hook) => hook.event === event && matchesTool(hook.matcher, tool));
  }

  /** What a hook reads on stdin for a call, in Claude Code's names and ours. */
  private input(event: HookEvent, call: ToolCall): Record<string, unknown> {
    const { id, path } = this.context.session();
    const { workspace } = this.context.folders;
    return {
      session_id: id ?? "",
      transcript_path: path ?? "",
      cwd: workspace,
      permission_mode: this.context.permissionMode(),
      hook_event_name: event,
      tool_name: claudeToolName(call.name),
      tool_input: claudeToolInput(call.name, call.input, workspace),
      tool_use_id: call.id,
      mini_agent_tool: call.name,
      mini_agent_input: call.input,
    };
  }

  /** Runs one hook, a project hook only while what it runs is what was trusted. */
  private async run(
    hook: ReadyHook,
    document: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<HookAnswer> {
    const started = performance.now();
    const { run, answer } = await this.runOnce(hook, document, signal);
    const toolCallId = document.tool_use_id;
    await this.context.record?.({
      event: hook.event,
      command: hook.command,
      ...(typeof toolCallId === "string" && toolCallId !== "" && { toolCallId }),
      ...(run?.kind === "exited" && { exit: run.code }),
      ...(run?.kind === "signal" && { signal: run.signal }),
      ...(run?.kind === "timeout" && { timedOut: true as const }),
      durationMs: Math.round(performance.now() - started),
      decision: answer.kind === "ok" ? "none" : answer.kind,
    });
    return answer;
  }

  private async runOnce(
    hook: ReadyHook,
    document: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<{ run?: HookRun; answer: HookAnswer }> {
    const { folders } = this.context;
    if (hook.trusted !== undefined) {
      const now = await hookCoverage(hook, folders);
      if (now.hash !== hook.trusted)
        return {
          answer: {
            kind: "failed",
            why: "it was not run: what it runs changed since it was trusted (a file it runs was changed, added or removed; mini-agent trust approves it again)",
          },
        };
    }
    const env = withoutSecrets(folders.env);
    for (const name of PROJECT_DIR_VARIABLES) env[name] = folders.root;
    const { sandbox, moreProtected } = this.context;
    const { run, undone } = await runHook(hook.command, `${JSON.stringify(document)}\n`, {
      cwd: folders.workspace,
      env,
      timeoutSeconds: hook.timeoutSeconds,
      ...(signal && { signal }),
      ...(hook.sandboxed && sandbox && { sandbox }),
      ...(moreProtected && { moreProtected }),
    });
    if (undone.length > 0)
      this.context.tell(
        `mini-agent: the ${hook.event} hook ${visible(shownCommand(hook))} changed protected files, which a hook in the sandbox may not: ${visible(undone.join("; "))}\n`,
      );
    return { run, answer: hookAnswer(run) };
  }

  /** A hook's `systemMessage` is said to the person. */
  private said(hook: ReadyHook, answer: Exclude<HookAnswer, { kind: "failed" }>): void {
    if (answer.message)
      this.context.tell(
        `mini-agent: ${hook.event} hook ${visible(shownCommand(hook))}: ${visible(this.bounded(answer.message))}\n`,
      );
  }

  private bounded(text: string): string {
    const clean = this.context.redact(text);
    if (clean.length <= HOOK_TEXT_CHARS) return clean;
    const kept = headOf(clean, HOOK_TEXT_CHARS);
    return `${kept}\n[truncated ${clean.length - kept.length} characters]`;
  }
}

/** How a decision names the hook that made it: `hook:PreToolUse python3 check.py`. */
export function hookName(hook: HookCommand): string {
  return `hook:${hook.event} ${shortCommand(hook.command)}`;
}

function shownCommand(hook: HookCommand): string {
  return JSON.stringify(shortCommand(hook.command));
}

function shortCommand(command: string): string {
  const line = command.trim().replace(/\s+/g, " ");
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

function asObject(input: unknown): Record<string, unknown> {
  return typeof input === "object" && input !== null && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : {};
}
