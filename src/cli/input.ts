import type { Interface } from "node:readline";
import { showRule } from "../rules/rule.js";
import type { ToolCall } from "../types.js";
import { visible } from "../visible.js";
import { UsageError } from "./args.js";
import type { Answer, Question } from "./policy.js";
import { commandForQuestion } from "./terminal/columns.js";

export const promptMark = "› ";

/**
 * The person at the terminal: the prompts they type and the question before a bash call.
 *
 * A line typed while a turn runs is kept, in order, as the next prompt: when the turn ends it is
 * shown after the prompt mark, as if typed there, and runs. The question before a call belongs
 * to the turn: when the turn is interrupted the question is withdrawn, so the next line typed
 * is a prompt again. Closing the input (Ctrl-D) at the question answers `closed`.
 */
export class TerminalInput {
  private readonly typed: string[] = [];
  private waiting: ((line: string | undefined) => void) | undefined;
  private closed = false;

  /** `activity`: the indicator, stopped before the question is asked, so it never draws over it. */
  constructor(
    private readonly rl: Interface,
    private readonly output: NodeJS.WritableStream,
    private readonly activity?: { stop(): void },
  ) {
    rl.on("line", (line: string) => {
      if (this.waiting) this.take(line);
      else this.typed.push(line);
    });
    rl.on("close", () => {
      this.closed = true;
      this.take(undefined);
    });
    // The terminal went away (a read error after a hang-up): the same as closing the input.
    rl.on("error", () => rl.close());
  }

  /** The next prompt: a line typed during the last turn, or the next one typed; none after Ctrl-D. */
  nextPrompt(): Promise<string | undefined> {
    const early = this.typed.shift();
    if (early !== undefined) {
      this.output.write(`${promptMark}${visible(early)}\n`);
      return Promise.resolve(early);
    }
    if (this.closed) return Promise.resolve(undefined);
    this.rl.setPrompt(promptMark);
    this.rl.prompt();
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /**
   * Asks before `call` runs. The command is shown whole (`commandForQuestion`), with why the
   * rules ask and the rule "always" would save (or why it would save none).
   */
  ask(call: ToolCall, why: Question, signal: AbortSignal | undefined): Promise<Answer> {
    const command =
      typeof call.input.command === "string" ? call.input.command : JSON.stringify(call.input);
    const always =
      why.save.length > 0
        ? `[a]lways (saves: ${visible(why.save.map(showRule).join("; "))})`
        : `[a]lways (this once: no rule can be saved, ${visible(why.noSave ?? "")})`;
    const choices = `[y]es, [n]o, ${always}? `;
    const reason = `  (${visible(why.reason)})`;
    const shown = commandForQuestion(command);
    const question =
      "inline" in shown
        ? `Allow ${visible(call.name)}: ${shown.inline}\n${reason}\n${choices}`
        : `Allow ${visible(call.name)}:\n${shown.block.join("\n")}\n${reason}\n(${shown.summary}) ${choices}`;
    this.activity?.stop();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new Error("approval interrupted"));
      if (this.closed) return resolve("closed");
      const settle = () => {
        signal?.removeEventListener("abort", onAbort);
        this.rl.off("close", onClose);
      };
      const onAbort = () => {
        settle();
        reject(new Error("approval interrupted"));
      };
      const onClose = () => {
        settle();
        resolve("closed");
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.rl.once("close", onClose);
      this.rl.question(question, signal ? { signal } : {}, (answer) => {
        settle();
        const key = answer.trim().toLowerCase()[0];
        resolve(key === "y" ? "yes" : key === "a" ? "always" : "no");
      });
    });
  }

  /** A yes-or-no question outside a turn (trusting a project's MCP server); closed input is no. */
  confirm(question: string): Promise<boolean> {
    this.activity?.stop();
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onClose = () => resolve(false);
      this.rl.once("close", onClose);
      this.rl.question(`${question} [y]es, [n]o? `, (answer) => {
        this.rl.off("close", onClose);
        resolve(answer.trim().toLowerCase().startsWith("y"));
      });
    });
  }

  private take(line: string | undefined): void {
    const resolve = this.waiting;
    this.waiting = undefined;
    resolve?.(line);
  }
}

/** The task piped on stdin, when there is no terminal and no task argument. */
export async function taskFromStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  const task = Buffer.concat(chunks).toString("utf8").trim();
  if (task === "")
    throw new UsageError("no task: give one as an argument, with --print, or on stdin");
  return task;
}
