import { describeError } from "../app/errors.js";
import { type ModeState, modeCommand } from "../app/modes.js";
import { compactedLine } from "../app/notices.js";
import type { Stopper } from "../app/signals.js";
import type { ImageAttachment } from "../images.js";
import type { TurnStatus } from "../runner/events.js";
import type { SessionRunner } from "../runner/runner.js";
import { sweepOrphansOnce } from "../sandbox/reaper.js";
import { exitCodes } from "./args.js";
import { helpText, type LineIntent, lineIntent, unknownCommand } from "./slash-commands.js";
import type { SessionStatus } from "./terminal/status-line.js";
import { runEnds, statusCode } from "./turn.js";
import type { TypedImages } from "./typed-images.js";

/** A line as typed, or a program's prompt with the images sent with it. */
export type Prompt = string | { text: string; images: readonly ImageAttachment[] };

/** Where typed lines come from: the terminal, or JSON lines on stdin. */
export interface PromptSource {
  nextPrompt(): Promise<Prompt | undefined>;
  /** Puts a prompt that was not sent back where it is typed, to be changed and sent again. */
  retype?(prompt: string): void;
  /** Tells a program the prompt it gave last is not sent, and why. */
  refused?(reason: string): void;
}

export interface PromptLoopParts {
  source: PromptSource;
  /** Lines are prompts as they are (a program's input), not commands for a person. */
  literal: boolean;
  runTurn: (prompt: string, images: readonly ImageAttachment[]) => Promise<TurnStatus>;
  runner: SessionRunner;
  stopper: Stopper;
  stderr: NodeJS.WritableStream;
  status: SessionStatus | undefined;
  baseURL: string | undefined;
  /** Told why the run ended, when it ends before its input did. */
  ended: (reason: string) => void;
  /**
   * The prompt `/NAME args` stands for when NAME is one of the user's commands, else undefined;
   * throws a one-line error for a command whose file is bad.
   */
  userCommand?: (text: string) => Promise<string | undefined>;
  /** The lines `/help` adds for the user's commands, found afresh. */
  commandsHelp?: () => Promise<string>;
  /** The prompt of `/skill NAME [text]`; throws a one-line error for an unknown skill. */
  skillPrompt?: (name: string, text: string) => Promise<string>;
  /** The session mode `/mode` shows and switches. */
  mode: ModeState;
  /** `/rewind [N]`: lists the prompts, or goes back to just before prompt N. */
  rewind?: (intent: Extract<LineIntent, { kind: "rewind" }>) => Promise<void>;
  /** The images a typed prompt names by their paths (`typedImages`), on a terminal. */
  typedImages?: (text: string) => Promise<TypedImages>;
}

/** An interactive session, or one fed JSON lines: a turn per prompt, until the input ends. */
export async function promptLoop(parts: PromptLoopParts): Promise<number> {
  const { source, stopper, stderr } = parts;
  // A session of many turns sweeps at its start, while its first prompt is awaited.
  sweepOrphansOnce();
  for (let next = await source.nextPrompt(); next !== undefined; next = await source.nextPrompt()) {
    stopper.resetIdle();
    const { text: line, images } = typeof next === "string" ? { text: next, images: [] } : next;
    const intent: LineIntent = parts.literal ? { kind: "prompt", text: line } : lineIntent(line);
    if (intent.kind === "exit") break;
    if (intent.kind === "help")
      stderr.write(`${helpText}\n${(await parts.commandsHelp?.()) ?? ""}`);
    else if (intent.kind === "compact") await compactNow(parts, intent.instructions);
    else if (intent.kind === "rewind") await parts.rewind?.(intent);
    else if (intent.kind === "mode")
      stderr.write(`mini-agent: ${modeCommand(parts.mode, intent.name)}\n`);
    else if (intent.kind !== "prompt" || intent.text.trim() !== "" || images.length > 0) {
      const text = await promptText(parts, intent, line);
      if (text === undefined) continue;
      const sent = intent.kind === "prompt" ? await withTyped(parts, text, images) : [];
      if (sent === undefined) {
        source.retype?.(line);
        continue;
      }
      const status = await parts.runTurn(text, sent);
      const end = runEnds[status];
      if (end !== undefined) {
        parts.ended(end);
        return statusCode(status);
      }
    }
    if (stopper.exitCode !== undefined) {
      parts.ended(stopper.stopReason ?? "the run was stopped");
      break;
    }
  }
  return exitCodes.done;
}

/**
 * The prompt's images and those its typed paths name, each told in one line; undefined (said
 * in one line) when a path names an image that cannot be sent: the prompt is not sent.
 */
async function withTyped(
  parts: PromptLoopParts,
  text: string,
  images: readonly ImageAttachment[],
): Promise<readonly ImageAttachment[] | undefined> {
  if (!parts.typedImages) return images;
  const typed = await parts.typedImages(text);
  if (typed.refusal !== undefined) {
    parts.stderr.write(
      `mini-agent: ${typed.refusal}; nothing was sent, the prompt is back to edit\n`,
    );
    return undefined;
  }
  for (const notice of typed.notices) parts.stderr.write(`${notice}\n`);
  return [...images, ...typed.images];
}

/**
 * The text a line sends: a prompt as it is, or what `/skill` or one of the user's commands stands
 * for (at the terminal, a name no command has is a hint; in a program's input, such a line is a
 * prompt as it is); undefined, said in one line, when nothing is to be sent.
 */
async function promptText(
  parts: PromptLoopParts,
  intent: Extract<LineIntent, { kind: "prompt" | "skill" | "unknown" }>,
  line: string,
): Promise<string | undefined> {
  if (intent.kind === "skill") return skillText(parts, intent);
  if (intent.kind === "prompt" && !parts.literal) return intent.text;
  try {
    const text = await parts.userCommand?.(line);
    if (text !== undefined) return text;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    parts.stderr.write(`mini-agent: ${reason}\n`);
    parts.source.refused?.(reason);
    return undefined;
  }
  if (intent.kind === "prompt") return intent.text;
  parts.stderr.write(`${unknownCommand(intent.name)}\n`);
  return undefined;
}

/** The prompt `/skill NAME [text]` stands for, or undefined (said in one line) when there is none. */
async function skillText(
  parts: PromptLoopParts,
  intent: { name: string; text: string },
): Promise<string | undefined> {
  if (intent.name === "" || !parts.skillPrompt) {
    parts.stderr.write("mini-agent: usage: /skill NAME [text] (mini-agent skills lists them)\n");
    return undefined;
  }
  try {
    return await parts.skillPrompt(intent.name, intent.text);
  } catch (error) {
    parts.stderr.write(`mini-agent: ${error instanceof Error ? error.message : String(error)}\n`);
    return undefined;
  }
}

/**
 * `/compact [instructions]` at the prompt: compacts now, as a turn that Ctrl-C interrupts. A
 * failure is one line and changes nothing; the session goes on.
 */
async function compactNow(parts: PromptLoopParts, instructions: string): Promise<void> {
  const { stopper, stderr } = parts;
  const signal = stopper.beginTurn();
  try {
    await parts.runner.compact(instructions || undefined, {
      signal,
      onEvent: (event) => {
        if (event.type !== "compaction") return;
        stderr.write(`mini-agent: ${compactedLine(event.compaction)}\n`);
        parts.status?.compacted(event.compaction);
      },
    });
  } catch (error) {
    stderr.write(
      signal.aborted ? "interrupted\n" : `mini-agent: ${describeError(error, parts.baseURL)}\n`,
    );
  } finally {
    stopper.endTurn();
  }
}
