import { relative } from "node:path";
import { Type } from "@sinclair/typebox";
import type { MoreProtected } from "../protected/files.js";
import { unsettled } from "../protected/guard.js";
import { receipts } from "../receipts.js";
import type { SandboxOptions } from "../sandbox/bwrap.js";
import type { KeptReadOnly } from "../sandbox/kept-read-only.js";
import { type CommandOutcome, runCommand } from "../sandbox/run.js";
import type { Tool, ToolResult } from "../types.js";
import { defineTool, failure } from "./define.js";
import { limits, truncated } from "./limits.js";
import { workspacePath } from "./path.js";

export interface BashOptions {
  /** Seconds a command may run when the call gives no timeout. Default 120. */
  defaultTimeout?: number;
  /** Seconds between TERM and KILL when a command is stopped. Default 2. */
  killGrace?: number;
  /** Environment the command starts from (secrets are removed); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Default `{ mode: "auto" }`: in bubblewrap when it works here, else plain bash. */
  sandbox?: SandboxOptions;
  /** The session's own protected files: read-only in the sandbox and checked after a command. */
  moreProtected?: MoreProtected;
  /**
   * The way out of the sandbox, offered to the model: the input gains `outside_sandbox` and
   * `reason`, and a call with `outside_sandbox: true` runs plainly, with the user's full rights
   * and the network. Offer it only where the sandbox works and only with a policy that asks a
   * person about every such call (the CLI's policy with its `boundary`): the tool itself asks
   * no one. `hint`: a command that failed because of the sandbox is told the way out exists
   * (only where someone can be asked). Default: not offered.
   */
  outsideSandbox?: { hint: boolean };
}

/**
 * Whether a call's input asks to leave the sandbox: any `outside_sandbox` but `false`. Policies
 * read it with this; the tool runs outside only on `true`, which its schema checks, so a call
 * the policy took to stay inside never runs outside.
 */
export function asksOutside(input: Record<string, unknown>): boolean {
  return Object.hasOwn(input, "outside_sandbox") && input.outside_sandbox !== false;
}

const MAX_TIMEOUT = 600;

/**
 * What a caller that wraps bash (the rewind's snapshot) adds to one call: what it could not keep,
 * read-only in the sandbox for this call, and why; the whole workspace when it kept nothing.
 */
export type BashCall = { readOnly: "workspace"; why: string } | { readOnly: readonly KeptOut[] };

/** A path (real, absolute) a rewind could not put back, why, and whether this session said it yet. */
export interface KeptOut {
  path: string;
  why: string;
  said: boolean;
  folder: boolean;
}

/** The bash tool, which a wrapper can also call with what it adds to the call (`BashCall`). */
export interface BashTool extends Tool {
  executeWith(
    input: unknown,
    signal: AbortSignal | undefined,
    call: BashCall,
  ): Promise<{ result: ToolResult; sandboxed: boolean }>;
}

export function isBashTool(tool: Tool): tool is BashTool {
  return typeof (tool as Partial<BashTool>).executeWith === "function";
}

const inputFields = {
  command: Type.String({ minLength: 1 }),
  timeout: Type.Optional(
    Type.Number({ exclusiveMinimum: 0, maximum: MAX_TIMEOUT, description: "Seconds" }),
  ),
};

/** The input with the way out: `outside_sandbox` and the `reason` it needs. */
const wayOutFields = {
  ...inputFields,
  outside_sandbox: Type.Optional(
    Type.Boolean({
      description:
        "true only when the command cannot work in the sandbox (it needs the network, or to write outside the workspace): it then runs with the user's full rights, and the user is always asked first and may refuse",
    }),
  ),
  reason: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1000,
      description:
        "With outside_sandbox: why the command must run outside the sandbox, for the user",
    }),
  ),
};

export function bashTool(root: string, options: BashOptions = {}): BashTool {
  const { defaultTimeout = 120, killGrace = 2 } = options;
  const wayOut = options.outsideSandbox;
  const about = `Run a bash command in the workspace folder. No stdin; background processes end with the command. Timeout ${defaultTimeout} s unless set (max ${MAX_TIMEOUT}).`;
  const define = (call: BashCall | undefined, ran: { sandboxed: boolean }) =>
    defineTool({
      name: "bash",
      description: wayOut
        ? `${about} It runs in a sandbox: the workspace is writable, nothing else, and there is no network.`
        : about,
      input: Type.Object(wayOut ? wayOutFields : inputFields),
      async run(input, signal) {
        const { command, timeout = defaultTimeout } = input;
        const outside =
          wayOut !== undefined && "outside_sandbox" in input && input.outside_sandbox === true;
        if (outside && !("reason" in input && typeof input.reason === "string"))
          return failure(receipts.invalidInput("bash", "outside_sandbox needs a reason"));
        const cwd = await workspacePath(root, ".");
        const outcome = await runCommand(command, {
          ...(outside && { outside: true }),
          cwd,
          env: options.env ?? process.env,
          ...(options.sandbox && { sandbox: options.sandbox }),
          timeoutMs: timeout * 1000,
          graceMs: killGrace * 1000,
          maxOutputChars: limits.outputChars,
          ...(signal && { signal }),
          ...(call && { keptReadOnly: keptReadOnly(call) }),
          ...(options.moreProtected && { moreProtected: options.moreProtected }),
        });
        if (outcome.kind === "refused") return failure(`bash refused: ${outcome.reason}`);
        ran.sandboxed = outcome.sandboxed;
        const output = shown(outcome.output);
        const text = output === "" ? "" : `${output}\n`;
        const end = status(outcome.end, timeout);
        const hint = outcome.hint && wayOut?.hint ? `${outcome.hint}\n${wayOutHint}` : outcome.hint;
        if (outcome.lost) return failure(`${text}${end}\nbash failed: ${outcome.lost}`);
        const failed = !(outcome.end.kind === "exit" && outcome.end.code === 0);
        const undone = outcome.undone ? `\n${protectedNote(outcome.undone)}` : "";
        const kept = outcome.sandboxed && call ? keptNote(cwd, call, failed, output) : "";
        // Said last, where the terminal shows a failed call's reason: the person sees it too.
        const unsure = outcome.undone?.some(unsettled) ? `\n${UNSETTLED}` : "";
        return {
          content: `${text}${end}${hint ? `\n${hint}` : ""}${undone}${kept}${unsure}`,
          isError: failed || unsure !== "",
        };
      },
    });
  const plain = define(undefined, { sandboxed: false });
  return {
    spec: plain.spec,
    execute: plain.execute,
    async executeWith(input, signal, call) {
      const ran = { sandboxed: false };
      const result = await define(call, ran).execute(input, signal);
      return { result, sandboxed: ran.sandboxed };
    },
  };
}

/** The line after a failure the sandbox caused, where someone can be asked to leave it. */
const wayOutHint =
  "[sandbox: if the task needs it, call bash again with outside_sandbox: true and a reason; the user is asked and may refuse]";

function keptReadOnly(call: BashCall): KeptReadOnly {
  return call.readOnly === "workspace"
    ? { whole: true }
    : { whole: false, paths: call.readOnly.map((kept) => kept.path) };
}

/** The most paths the note of what was read-only names; a count of the rest follows. */
const MOST_NAMED = 10;

/**
 * What was read-only for this sandboxed command because a rewind could not have put it back: said
 * when the workspace was, when the command failed or its output tells of a read-only file or a
 * busy one (a removal), and the first time this session has such a path.
 */
function keptNote(cwd: string, call: BashCall, failed: boolean, output: string): string {
  if (call.readOnly === "workspace")
    return `\n[rewind: the workspace was read-only for this command: ${call.why}]`;
  const kept = call.readOnly;
  const told = /Read-only file system|Device or resource busy/.test(output);
  if (kept.length === 0 || !(failed || told || kept.some((one) => !one.said))) return "";
  const lines = kept
    .slice(0, MOST_NAMED)
    .map((one) => `- ${relative(cwd, one.path)}${one.folder ? "/" : ""}: ${one.why}`);
  if (kept.length > MOST_NAMED) lines.push(`- and ${kept.length - MOST_NAMED} more`);
  return `\n[rewind: what a rewind could not put back was read-only for this command]\n${lines.join("\n")}`;
}

type Ran = Extract<CommandOutcome, { kind: "ran" }>;

/** The command's output as the model reads it: the cut marked where it was made. */
function shown({ head, cut, tail }: Ran["output"]): string {
  const body = cut === 0 ? head + tail : `${head}\n${truncated(cut)}\n${tail}`;
  return body.replace(/\n$/, "");
}

/** The last line of a call after which something protected may not be as it was. */
const UNSETTLED =
  "[protected files: not all checked or put right (the lines above): look before you run git or open the project]";

/** What the check after a sandboxed command did to protected files, for the model and the user. */
function protectedNote(lines: string[]): string {
  const intro =
    "[protected files: a command in the sandbox may not change what runs outside it; undone]";
  return [intro, ...lines.map((line) => `- ${line}`)].join("\n");
}

/** The last line of every result: how the command ended. */
function status(end: Ran["end"], timeout: number): string {
  switch (end.kind) {
    case "timeout":
      return `[timed out after ${timeout} s: the command and its processes were killed]`;
    case "abort":
      return "[aborted: the command and its processes were killed]";
    case "exit":
      return `[exit code ${end.code}]`;
    case "signal":
      return `[exit code signal ${end.signal}]`;
  }
}
