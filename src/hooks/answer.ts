import { tailOf } from "../text.js";
import type { HookRun } from "./run.js";

/**
 * What a hook's run means, read as Claude Code reads it, except that a failure fails closed:
 * - exit 0: its stdout, or, when stdout starts with `{`, its JSON answer (which must parse);
 * - exit 2: a block, with stderr as the reason the model reads;
 * - any other exit, a signal, a timeout, a program that cannot start, JSON that does not parse:
 *   a failure, which blocks a `PreToolUse` call (Claude Code lets the call run).
 *
 * The JSON answer, in Claude Code's names: `continue` (false: block, with `stopReason`),
 * `systemMessage` (a line for the person), `suppressOutput`, `decision` (`block`; `approve` of
 * old), `reason`, and `hookSpecificOutput` with `permissionDecision` (`allow`, `deny`, `ask`),
 * `permissionDecisionReason`, `additionalContext` and `updatedInput`, which mini-agent refuses: a
 * hook never rewrites a call's input, so a call a hook wants changed is blocked instead.
 */

export type HookAnswer =
  /** It ran and said nothing that decides: `text` is what it printed (or its context). */
  | { kind: "ok"; text?: string; context?: string; message?: string }
  | { kind: "allow"; reason?: string; context?: string; message?: string }
  | { kind: "ask"; reason?: string; context?: string; message?: string }
  /** Exit 2, `deny`, `decision: "block"`, `continue: false`: `reason` is for the model. */
  | { kind: "block"; reason: string; context?: string; message?: string }
  /** It failed (crash, timeout, other exit, broken JSON, a refused field): `why` in words. */
  | { kind: "failed"; why: string };

/** Why a hook that asks to rewrite the input is refused, as its receipt says. */
export const noRewrite = "mini-agent does not rewrite a call's input";

export function hookAnswer(run: HookRun): HookAnswer {
  switch (run.kind) {
    case "timeout":
      return { kind: "failed", why: `it timed out after ${run.seconds} s and was ended` };
    case "aborted":
      return { kind: "failed", why: "it was stopped (the turn was interrupted)" };
    case "failed":
      return { kind: "failed", why: `it could not start (${run.reason})` };
    case "signal":
      return { kind: "failed", why: `it was killed by ${run.signal}${said(run.stderr)}` };
    case "exited":
      break;
  }
  if (run.code === 2) {
    const reason = run.stderr.trim();
    return { kind: "block", reason: reason === "" ? "(the hook gave no reason)" : reason };
  }
  if (run.code !== 0)
    return { kind: "failed", why: `it exited with code ${run.code}${said(run.stderr)}` };
  const stdout = run.stdout.trim();
  if (!stdout.startsWith("{")) return stdout === "" ? { kind: "ok" } : { kind: "ok", text: stdout };
  if (run.cut) return { kind: "failed", why: "its JSON answer is longer than mini-agent reads" };
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch (error) {
    return {
      kind: "failed",
      why: `it printed JSON that does not parse (${(error as Error).message})`,
    };
  }
  return jsonAnswer(value);
}

function jsonAnswer(value: unknown): HookAnswer {
  if (!isObject(value)) return { kind: "failed", why: "its JSON answer is not an object" };
  const specific = value.hookSpecificOutput;
  if (specific !== undefined && !isObject(specific))
    return { kind: "failed", why: "its hookSpecificOutput is not an object" };
  const field = (name: string, from: Record<string, unknown> | undefined = value) => {
    const got = from?.[name];
    return typeof got === "string" && got.trim() !== "" ? got.trim() : undefined;
  };
  if (specific?.updatedInput !== undefined)
    return {
      kind: "failed",
      why: `it asked to change the call's input (updatedInput): ${noRewrite}`,
    };
  const extra = {
    ...optional("context", field("additionalContext", specific)),
    ...optional("message", field("systemMessage")),
  };
  if (value.continue === false)
    return {
      kind: "block",
      reason: field("stopReason") ?? field("reason") ?? "the hook said not to continue",
      ...extra,
    };
  const permission = specific?.permissionDecision;
  const reason = field("permissionDecisionReason", specific) ?? field("reason");
  const decision =
    permission ??
    (value.decision === "approve" ? "allow" : value.decision === "block" ? "deny" : value.decision);
  switch (decision) {
    case undefined:
      return { kind: "ok", ...extra };
    case "allow":
      return { kind: "allow", ...optional("reason", reason), ...extra };
    case "ask":
      return { kind: "ask", ...optional("reason", reason), ...extra };
    case "deny":
      return { kind: "block", reason: reason ?? "(the hook gave no reason)", ...extra };
    default:
      return {
        kind: "failed",
        why: `its decision ${JSON.stringify(decision)} is none of allow, deny, ask and block`,
      };
  }
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}

/** `: ` and the end of what it wrote on stderr, when it wrote something. */
function said(stderr: string): string {
  const text = stderr.trim();
  if (text === "") return "";
  return `: ${text.length > 2000 ? `…${tailOf(text, 2000)}` : text}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
