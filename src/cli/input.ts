import { EventEmitter } from "node:events";
import type { Interface } from "node:readline";
import type { Answer, Question } from "../app/policy.js";
import { commandForQuestion } from "../render/columns.js";
import { prefixRule, type Rule, showRule } from "../rules/rule.js";
import type { ToolCall } from "../types.js";
import { visible } from "../visible.js";
import { UsageError } from "./args.js";
import { bracketedPaste, type InputPiece, PasteReader, pasteNotice } from "./paste.js";

export const promptMark = "› ";
/** The mark of a prompt's next line: after a line ending in `\\`, Alt-Enter, or a paste. */
export const continuationMark = "… ";

/**
 * The person at the terminal: the prompts they type and the question before a bash call.
 *
 * A line typed while a turn runs is kept, in order, as the next prompt: when the turn ends it is
 * shown after the prompt mark, as if typed there, and runs. The question before a call belongs
 * to the turn: when the turn is interrupted the question is withdrawn, so the next line typed
 * is a prompt again. Closing the input (Ctrl-D) at the question answers `closed`. A paste at the
 * question is kept as the start of the next prompt, which Enter sends.
 *
 * A prompt may have many lines: a line ending in `\\`, Alt-Enter (`newline`) and a paste
 * (`paste`, shown as one line of its size) each keep what is typed so far and go on after the
 * continuation mark; Enter sends it all as one prompt. Ctrl-C at the prompt clears what is typed
 * (the current line and the lines kept so far), as a shell does; with nothing typed it goes to
 * `onInterrupt` (which says how to leave, or leaves), as it does during a turn or a question.
 */
export class TerminalInput {
  private readonly typed: string[] = [];
  private waiting: ((line: string | undefined) => void) | undefined;
  private closed = false;
  private asking = false;
  /** The lines of the prompt being typed, before the current one. */
  private kept: string[] = [];
  /** What Ctrl-C does when it clears nothing: the run's own handling of SIGINT. */
  private interrupted: () => void = () => {};
  /** A prompt that was not sent, to be put back at the next prompt (`retype`). */
  private back: string | undefined;

  /** `activity`: the indicator, stopped before the question is asked, so it never draws over it. */
  constructor(
    private readonly rl: Interface,
    private readonly output: NodeJS.WritableStream,
    private readonly activity?: { stop(): void },
  ) {
    rl.on("line", (line: string) => {
      if (line.endsWith("\\")) this.keep(line.slice(0, -1));
      else this.send(this.kept.length > 0 && line === "" ? this.kept : [...this.kept, line]);
    });
    rl.on("SIGINT", () => {
      const typed = this.kept.length > 0 || rl.line !== "";
      this.kept = [];
      rl.setPrompt(promptMark);
      if (!typed || this.waiting === undefined || this.asking) {
        this.interrupted();
        return;
      }
      // To the end of the line, then delete back to its start: readline redraws the prompt.
      rl.write(null, { ctrl: true, name: "e" });
      rl.write(null, { ctrl: true, name: "u" });
      rl.prompt();
    });
    rl.on("close", () => {
      this.closed = true;
      // Ctrl-D at the prompt: the shell's prompt comes on a line of its own.
      if (this.waiting) this.output.write("\n");
      this.take(undefined);
    });
    // Ctrl-Z stopped the process and `fg` continued it: readline restores raw mode and redraws
    // the prompt or the question, but leaves its input paused, which would end the process (no
    // more input to wait for). Reading goes on where it was.
    rl.on("SIGCONT", () => {
      // During a turn there is no prompt to draw back: what readline redraws is what was typed.
      if (this.waiting === undefined && !this.asking) rl.setPrompt("");
      rl.resume();
    });
    // The terminal went away (a read error after a hang-up): the same as closing the input.
    rl.on("error", () => rl.close());
  }

  /** What Ctrl-C does when there is nothing typed to clear (and during a turn or a question). */
  onInterrupt(handler: () => void): void {
    this.interrupted = handler;
  }

  /** A bracketed paste: kept, with what was typed before it on its line, as part of the prompt. */
  paste(text: string, cut: number): void {
    if (this.asking) {
      // Kept as the start of the next prompt, which Enter sends: never sent by itself.
      this.kept.push(text);
      this.output.write(`\n${pasteNotice(text, cut)} (kept for the next prompt)\n`);
      return;
    }
    this.output.write(`${pasteNotice(text, cut)}\n`);
    this.keep(this.takeLine() + text);
  }

  /** Alt-Enter: the line typed so far is kept, and the prompt goes on on a new line. */
  newline(): void {
    if (this.asking) return;
    this.output.write("\n");
    this.keep(this.takeLine());
  }

  /** The next prompt: a line typed during the last turn, or the next one typed; none after Ctrl-D. */
  nextPrompt(): Promise<string | undefined> {
    const early = this.typed.shift();
    if (early !== undefined) {
      this.output.write(`${promptMark}${shownPrompt(early)}\n`);
      return Promise.resolve(early);
    }
    if (this.closed) return Promise.resolve(undefined);
    const back = this.back?.split("\n");
    this.back = undefined;
    // A prompt put back: its lines but the last are kept, the last is on the line to edit.
    if (back) this.kept = back.slice(0, -1);
    this.rl.setPrompt(this.kept.length > 0 ? continuationMark : promptMark);
    // With the cursor where it is: after what was typed ahead on the line, not before it.
    this.rl.prompt(true);
    if (back) this.rl.write(back.at(-1) ?? "");
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /** A prompt that was not sent comes back at the next prompt, as if typed again. */
  retype(prompt: string): void {
    this.back = prompt;
  }

  /**
   * Asks before `call` runs. The command is shown whole (`commandForQuestion`), with why the
   * rules ask and the rule "always" would save (or why it would save none). No is the default
   * (`[y/N/a]`); after a no, the person may say why, for the model; after "always", they choose
   * the exact rule or its prefix (`prefixRule`) when the two differ.
   */
  async ask(call: ToolCall, why: Question, signal: AbortSignal | undefined): Promise<Answer> {
    const command =
      typeof call.input.command === "string" ? call.input.command : JSON.stringify(call.input);
    const always =
      why.save.length > 0
        ? `a = always, saves ${visible(why.save.map(showRule).join("; "), whole)}`
        : `a = this once: no rule can be saved, ${visible(why.noSave ?? "", whole)}`;
    const choices = `[y/N/a] (${always})? `;
    const reason = `  (${visible(why.reason, whole)})`;
    const shown = commandForQuestion(command);
    // Leaving the sandbox is said before the command, where it cannot be missed.
    const allow = why.outside
      ? `Allow ${visible(call.name)} OUTSIDE the sandbox, with your full rights (network included)`
      : `Allow ${visible(call.name)}`;
    const question =
      "inline" in shown
        ? `${allow}: ${shown.inline}\n${reason}\n${choices}`
        : `${allow}:\n${shown.block.join("\n")}\n${reason}\n(${shown.summary}) ${choices}`;
    this.activity?.stop();
    const answer = await this.questionLine(question, signal);
    if (answer === undefined) return "closed";
    const key = answer.trim().toLowerCase()[0];
    if (key === "y") return "yes";
    // Leaving the sandbox: "always" saves the exact command, never a broader rule.
    if (key === "a") return why.outside ? "always" : this.chooseRules(why.save, signal);
    const said = await this.questionLine("  why not (for the model; Enter for none)? ", signal);
    if (said === undefined) return "closed";
    return said.trim() === "" ? "no" : { no: said.trim() };
  }

  /** "Always": the exact rules, or their prefixes when those are broader. */
  private async chooseRules(exact: Rule[], signal: AbortSignal | undefined): Promise<Answer> {
    const prefixes = exact.map(prefixRule);
    if (exact.every((rule, i) => rule.words.length === prefixes[i]?.words.length)) return "always";
    const shown = (rules: Rule[]) => visible(rules.map(showRule).join("; "), whole);
    const which = `  save [1] ${shown(exact)} or [2] ${shown(prefixes)}? [1/2] `;
    const answer = await this.questionLine(which, signal);
    if (answer === undefined) return "closed";
    return answer.trim() === "2" ? { always: prefixes } : "always";
  }

  /** One line typed in answer to `text`; `undefined` when the input closes; rejects on abort. */
  private questionLine(text: string, signal: AbortSignal | undefined): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new Error("approval interrupted"));
      if (this.closed) return resolve(undefined);
      this.asking = true;
      const settle = () => {
        this.asking = false;
        signal?.removeEventListener("abort", onAbort);
        this.rl.off("close", onClose);
      };
      const onAbort = () => {
        settle();
        reject(new Error("approval interrupted"));
      };
      const onClose = () => {
        settle();
        resolve(undefined);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.rl.once("close", onClose);
      this.rl.question(text, signal ? { signal } : {}, (answer) => {
        settle();
        resolve(answer);
      });
    });
  }

  /** Keeps `line` as one of the prompt's lines, and shows the continuation mark (unless echoed). */
  private keep(line: string): void {
    this.kept.push(line);
    this.rl.setPrompt(continuationMark);
    if (this.waiting) this.rl.prompt(true);
  }

  private send(lines: string[]): void {
    this.kept = [];
    this.rl.setPrompt(promptMark);
    const prompt = lines.join("\n");
    if (this.waiting) this.take(prompt);
    else this.typed.push(prompt);
  }

  /** What is typed on the current line, taken out of it. */
  private takeLine(): string {
    const line = this.rl.line;
    Object.assign(this.rl, { line: "", cursor: 0 });
    return line;
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

/** What a person approves is shown to the last invisible character. */
const whole = { exact: true };

/** A prompt of many lines, echoed as its first line and how many follow. */
function shownPrompt(prompt: string): string {
  const [first = "", ...rest] = prompt.split("\n");
  return rest.length > 0 ? `${visible(first)} (+${rest.length} lines)` : visible(first);
}

/**
 * The terminal on `stdin`: readline gets the typed keys, `TerminalInput` the pastes and
 * Alt-Enter (`PasteReader`), in the order they came. Bracketed paste is turned on (not on
 * `TERM=dumb`, which has no escape sequences) and off again when the input closes or the
 * process exits. `node:readline` is loaded only then. Tab completes what `complete` says.
 */
export async function openTerminal(
  stdin: NodeJS.ReadStream,
  output: NodeJS.WriteStream,
  activity?: { stop(): void },
  complete: (line: string) => [string[], string] = (line) => [[], line],
): Promise<{ rl: Interface; terminal: TerminalInput }> {
  const keys = keyStream(stdin);
  const { createInterface } = await import("node:readline");
  const rl = createInterface({ input: keys, output, terminal: true, completer: complete });
  const terminal = new TerminalInput(rl, output, activity);
  const reader = new PasteReader();
  const route = (piece: InputPiece) => {
    if (piece.kind === "keys") keys.emit("data", Buffer.from(piece.text));
    else if (piece.kind === "paste") terminal.paste(piece.text, piece.cut);
    else terminal.newline();
  };
  stdin.setEncoding("utf8");
  stdin.on("data", (chunk: string) => {
    for (const piece of reader.feed(chunk)) route(piece);
  });
  stdin.on("end", () => keys.emit("end"));
  if (process.env.TERM !== "dumb") {
    output.write(bracketedPaste.on);
    const off = () => output.write(bracketedPaste.off);
    process.once("exit", off);
    // The shell turns bracketed paste off for its own prompt while the session is stopped.
    rl.on("SIGCONT", () => output.write(bracketedPaste.on));
    rl.once("close", () => {
      process.off("exit", off);
      off();
    });
  }
  return { rl, terminal };
}

/** What readline reads: the typed keys only, with the terminal's raw mode and flow control. */
function keyStream(stdin: NodeJS.ReadStream): NodeJS.ReadableStream {
  const keys = Object.assign(new EventEmitter(), {
    isTTY: true,
    setRawMode: (mode: boolean) => {
      stdin.setRawMode(mode);
      return keys;
    },
    pause: () => {
      stdin.pause();
      return keys;
    },
    resume: () => {
      stdin.resume();
      return keys;
    },
  });
  Object.defineProperty(keys, "isRaw", { get: () => stdin.isRaw });
  // The terminal view hears typing as keypresses on stdin (it mutes its indicator).
  keys.on("keypress", (...key: unknown[]) => stdin.emit("keypress", ...key));
  return keys as unknown as NodeJS.ReadableStream;
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
