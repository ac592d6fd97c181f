import { Value } from "@sinclair/typebox/value";
import type { Answer, Question } from "../app/policy.js";
import { imageFile, inlineImage } from "../app/prompt-images.js";
import type { ImageAttachment } from "../images.js";
import type { ToolCall } from "../types.js";
import type { Prompt } from "./prompt-loop.js";
import { type InputLine, InputLineSchema, type OutputEvent } from "./stream-json-protocol.js";

export interface JsonInputOptions {
  /** Writes one protocol line on stdout: an `approval_request` or an `error`. */
  send: (event: OutputEvent) => void;
  /** How long an approval request waits for its answer before the call is denied. */
  approvalTimeoutMs: number;
  /** The longest line held, in bytes (default `maxInputLineBytes`); a longer one is skipped. */
  maxLineBytes?: number;
  /** Where a user line's image `path` is read from (default: the current directory). */
  workspace?: string;
}

type InputImage = NonNullable<Extract<InputLine, { type: "user" }>["images"]>[number];

/** Like a server-sent event, an input line is held up to 64 MiB; past that it is skipped. */
export const maxInputLineBytes = 64 * 1024 * 1024;

/** The denial when no answer came in time; the model reads it as the call's result. */
export const approvalTimeoutReason = (seconds: number) =>
  `no answer to the approval request came within ${seconds} s; the call did not run`;
/** The denial when stdin ended: no one is left to answer. */
/** A request still open when the turn was stopped (a signal): closed with this denial. */
const interruptedReason = "the turn was stopped before an answer came; the call did not run";
export const inputEndedReason =
  "the input ended before an answer to the approval request came; the call did not run";

/**
 * `--input-format stream-json`: a program on stdin, one JSON line at a time (the `InputLine`
 * shapes). `user` lines are the prompts, in order: one that comes while a turn runs waits for it
 * to end. Their images are read and checked (`imageFile`, `inlineImage`) before the line is
 * queued: a line with a bad one is skipped whole, with one `error` line. `approval` lines answer the `approval_request` with the same id. A line that is not
 * JSON, not one of the shapes, a user text of only whitespace, an answer to no open request, or
 * a line over `maxLineBytes` (never held whole: skipped to its newline) is skipped with one
 * `error` line, and
 * the session goes on. A request left unanswered for `approvalTimeoutMs` is denied (by
 * `approval-timeout`); once stdin ends, open and later requests are denied at once (by
 * `input-closed`) and the session ends after the turn running and the prompts already read.
 */
export class JsonInput {
  /** User lines read and not yet taken, with their input line numbers. */
  private readonly prompts: { prompt: Prompt; line: number }[] = [];
  private waiting: ((prompt: Prompt | undefined) => void) | undefined;
  /** Open requests by call id: how to answer each, and whether it asks to leave the sandbox. */
  private readonly open = new Map<string, { answer: (answer: Answer) => void; outside: boolean }>();
  /** Stdin ended: no answer can come. */
  private closed = false;
  /** Stdin ended and every user line of it was queued: no prompt can come. */
  private drained = false;
  /** User lines whose images are being read, in order: each is queued after those before it. */
  private reading: Promise<void> = Promise.resolve();
  /** Why the run ended, once it has: no user line runs after that. */
  private ended: string | undefined;
  private lineNumber = 0;

  constructor(
    stdin: NodeJS.ReadableStream,
    private readonly options: JsonInputOptions,
  ) {
    const max = options.maxLineBytes ?? maxInputLineBytes;
    splitLines(stdin, max, {
      line: (text) => this.take(text),
      tooLong: () => {
        this.lineNumber++;
        this.skip(`is over ${max % 2 ** 20 === 0 ? `${max / 2 ** 20} MiB` : `${max} bytes`}`);
      },
      end: () => {
        this.closed = true;
        for (const { answer } of this.open.values()) answer(ended);
        this.inOrder(() => {
          this.drained = true;
          this.waiting?.(undefined);
          this.waiting = undefined;
        });
      },
    });
  }

  /**
   * The next user message (its text alone, or with its images); `undefined` once stdin has ended
   * and every message was taken.
   */
  nextPrompt(): Promise<Prompt | undefined> {
    const next = this.prompts.shift();
    if (next !== undefined) this.taken = next.line;
    if (next !== undefined || this.drained) return Promise.resolve(next?.prompt);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /** The input line of the prompt taken last: a prompt that is not sent is said by it. */
  private taken = 0;

  /** The prompt taken last is not sent, for `reason`: one `error` line says so. */
  refused(reason: string): void {
    this.notRun(this.taken, reason);
  }

  /** Writes an `approval_request` for `call` and waits for its answer, the timeout or the end. */
  ask(call: ToolCall, question: Question, signal: AbortSignal | undefined): Promise<Answer> {
    if (this.closed) return Promise.resolve(ended);
    const { approvalTimeoutMs } = this.options;
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve({ deny: interruptedReason, by: "interrupted" });
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.open.delete(call.id);
      };
      // The request is closed with a recorded denial, so a reader tracking open requests sees
      // it end; the loop then records the call as aborted before execution.
      const onAbort = () => {
        settle();
        resolve({ deny: interruptedReason, by: "interrupted" });
      };
      const seconds = approvalTimeoutMs / 1000;
      const timer = setTimeout(() => {
        settle();
        resolve({ deny: approvalTimeoutReason(seconds), by: "approval-timeout" });
      }, approvalTimeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      const outside = question.outside !== undefined;
      const answer = (answer: Answer) => {
        settle();
        resolve(answer);
      };
      this.open.set(call.id, { answer, outside });
      const { id, name, input } = call;
      const { reason } = question;
      // Leaving the sandbox is an event of its own: a client that answers every approval_request
      // never approves it unknowingly.
      this.options.send(
        question.outside
          ? {
              type: "approval_request_unsandboxed",
              ...{ id, name, input, reason },
              modelReason: question.outside.reason,
              timeoutSeconds: seconds,
            }
          : { type: "approval_request", id, name, input, reason, timeoutSeconds: seconds },
      );
    });
  }

  /**
   * The run is over, for whatever `reason` (the token budget, a failed compaction, a signal, an
   * error): each user line read and not run gets one `error` line saying so, with its input line
   * number, and so does each one read from now on, so none goes unanswered. When the input ended
   * and every line ran, there is nothing to say.
   */
  end(reason: string): void {
    this.ended = reason;
    for (const { line } of this.prompts.splice(0)) this.notRun(line, reason);
  }

  private notRun(line: number, reason: string): void {
    this.options.send({ type: "error", message: `input line ${line} was not run: ${reason}` });
  }

  private take(text: string): void {
    this.lineNumber++;
    if (text.trim() === "") return;
    const line = this.parse(text);
    if (line === undefined) return;
    if (line.type === "user") {
      // Nothing to ask the model: said, like an empty text, rather than passed over in silence.
      const { images = [] } = line;
      if (line.text.trim() === "" && images.length === 0) {
        this.skip("is a user message with only whitespace as its text");
        return;
      }
      const at = this.lineNumber;
      // Images alone: the text, only blanks, is left out of the message.
      const text = line.text.trim() === "" ? "" : line.text;
      this.inOrder(async () => {
        const prompt = images.length === 0 ? text : await this.withImages(text, images, at);
        if (prompt !== undefined) this.queue(prompt, at);
      });
      return;
    }
    const open = this.open.get(line.id);
    const id = JSON.stringify(line.id);
    if (!open) this.skip(`answers ${id}, which no approval request waits for`);
    else if (open.outside !== (line.type === "approval_unsandboxed"))
      this.skip(
        open.outside
          ? `answers ${id} with an approval line: that request asks to run outside the sandbox and takes an approval_unsandboxed line`
          : `answers ${id} with an approval_unsandboxed line: that request takes an approval line`,
      );
    else open.answer(line.decision === "allow" ? "yes" : "no");
  }

  private queue(prompt: Prompt, line: number): void {
    if (this.ended !== undefined) this.notRun(line, this.ended);
    else if (this.waiting) {
      this.taken = line;
      this.waiting(prompt);
      this.waiting = undefined;
    } else this.prompts.push({ prompt, line });
  }

  /** The prompt with its images, or undefined (said in one `error` line) when one is bad. */
  private async withImages(
    text: string,
    images: readonly InputImage[],
    line: number,
  ): Promise<Prompt | undefined> {
    const attachments: ImageAttachment[] = [];
    for (const [at, image] of images.entries()) {
      const checked =
        "path" in image
          ? await imageFile(image.path, this.options.workspace ?? process.cwd())
          : inlineImage(image.mediaType, image.data);
      if (typeof checked === "string") {
        const name = "path" in image ? `image ${at + 1} (${image.path})` : `image ${at + 1}`;
        this.error(`${name}${checked}`, line);
        return undefined;
      }
      attachments.push(checked);
    }
    return { text, images: attachments };
  }

  private parse(text: string): InputLine | undefined {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.skip("is not JSON");
      return undefined;
    }
    if (Value.Check(InputLineSchema, value)) return value;
    if (badImagesOnly(value)) {
      this.skip(
        'has images that are not each {"mediaType":"image/png"|"image/jpeg"|"image/gif"|"image/webp","data":…} or {"path":…}',
      );
      return undefined;
    }
    this.skip(
      'is not {"type":"user","text":…} or {"type":"approval","id":…,"decision":"allow"|"deny"}',
    );
    return undefined;
  }

  /**
   * `error` for the line just read, once the user lines before it are queued (one may wait for
   * its images to be read), so the error lines come in the order of the input lines.
   */
  private skip(what: string): void {
    const line = this.lineNumber;
    this.inOrder(() => this.error(what, line));
  }

  /**
   * Runs `step` after the steps before it. A step that throws is thrown again outside the chain
   * (as a throw in the input's data handler would be), so the steps after it still run.
   */
  private inOrder(step: () => void | Promise<void>): void {
    this.reading = this.reading.then(step).catch((error: unknown) => {
      queueMicrotask(() => {
        throw error;
      });
    });
  }

  private error(what: string, line: number): void {
    this.options.send({
      type: "error",
      message: `input line ${line} ${what}; it was skipped`,
    });
  }
}

const ended: Answer = { deny: inputEndedReason, by: "input-closed" };

/** A user line that would be one without its `images`: those are what is wrong with it. */
function badImagesOnly(value: unknown): boolean {
  if (typeof value !== "object" || value === null || !("images" in value)) return false;
  const { images: _, ...rest } = value;
  return (rest as { type?: unknown }).type === "user" && Value.Check(InputLineSchema, rest);
}

/**
 * Splits `input` at each `\n` (a `\r` before it is dropped) and hands each line on as UTF-8
 * text, a last line without a newline included. A line is never held past `max` bytes: once it
 * is longer, `tooLong` is called and its bytes are dropped up to the next newline.
 */
function splitLines(
  input: NodeJS.ReadableStream,
  max: number,
  on: { line(text: string): void; tooLong(): void; end(): void },
): void {
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  const finish = () => {
    const bytes = Buffer.concat(parts);
    parts = [];
    size = 0;
    const end = bytes.at(-1) === 13 ? bytes.length - 1 : bytes.length;
    on.line(bytes.subarray(0, end).toString("utf8"));
  };
  input.on("data", (chunk: Buffer | string) => {
    const data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (let at = 0; at <= data.length; ) {
      const newline = data.indexOf(10, at);
      const piece = data.subarray(at, newline === -1 ? data.length : newline);
      if (!skipping && size + piece.length > max) {
        skipping = true;
        parts = [];
        size = 0;
        on.tooLong();
      }
      if (!skipping) {
        parts.push(piece);
        size += piece.length;
      }
      if (newline === -1) break;
      if (skipping) skipping = false;
      else finish();
      at = newline + 1;
    }
  });
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    if (!skipping && size > 0) finish();
    on.end();
  };
  input.on("end", end);
  input.on("close", end);
  input.on("error", end);
}
