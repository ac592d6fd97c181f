import { Type } from "@sinclair/typebox";
import type { SandboxOptions } from "../sandbox/bwrap.js";
import { type CommandOutcome, runCommand } from "../sandbox/run.js";
import type { Tool } from "../types.js";
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
}

const MAX_TIMEOUT = 600;

export function bashTool(root: string, options: BashOptions = {}): Tool {
  const { defaultTimeout = 120, killGrace = 2 } = options;
  return defineTool({
    name: "bash",
    description: `Run a bash command in the workspace folder. No stdin; background processes end with the command. Timeout ${defaultTimeout} s unless set (max ${MAX_TIMEOUT}).`,
    input: Type.Object({
      command: Type.String({ minLength: 1 }),
      timeout: Type.Optional(
        Type.Number({ exclusiveMinimum: 0, maximum: MAX_TIMEOUT, description: "Seconds" }),
      ),
    }),
    async run({ command, timeout = defaultTimeout }, signal) {
      const outcome = await runCommand(command, {
        cwd: await workspacePath(root, "."),
        env: options.env ?? process.env,
        ...(options.sandbox && { sandbox: options.sandbox }),
        timeoutMs: timeout * 1000,
        graceMs: killGrace * 1000,
        maxOutputChars: limits.outputChars,
        ...(signal && { signal }),
      });
      if (outcome.kind === "refused") return failure(`bash refused: ${outcome.reason}`);
      const output = shown(outcome.output);
      const text = output === "" ? "" : `${output}\n`;
      const end = status(outcome.end, timeout);
      if (outcome.lost) return failure(`${text}${end}\nbash failed: ${outcome.lost}`);
      const failed = !(outcome.end.kind === "exit" && outcome.end.code === 0);
      const undone = outcome.undone ? `\n${protectedNote(outcome.undone)}` : "";
      return {
        content: `${text}${end}${outcome.hint ? `\n${outcome.hint}` : ""}${undone}`,
        isError: failed,
      };
    },
  });
}

type Ran = Extract<CommandOutcome, { kind: "ran" }>;

/** The command's output as the model reads it: the cut marked where it was made. */
function shown({ head, cut, tail }: Ran["output"]): string {
  const body = cut === 0 ? head + tail : `${head}\n${truncated(cut)}\n${tail}`;
  return body.replace(/\n$/, "");
}

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
