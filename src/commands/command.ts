import { readFrontMatter } from "../skills/parse.js";

/**
 * A user's command as its file gives it: a Markdown prompt, optionally after front matter (read
 * by the skills' reader of front matter) whose `description` and `argument-hint` are kept; every
 * other key (Claude Code's `allowed-tools`, `model`) is passed over. The text is sent as the
 * user's prompt, with its arguments put in (`expandCommand`); nothing in it is run: Claude Code's
 * `!`command`` and `@file` lines are text like the rest.
 */
export interface CommandFile {
  /** `description`; else the body's first line that is not blank, cut to the bound. */
  description: string;
  /** `argument-hint`: what to type after the name (`[file] [focus]`). */
  argumentHint?: string;
  /** The prompt, with `$ARGUMENTS` and `$1`… where the arguments go. */
  body: string;
}

/** The bounds of a command's file and fields. */
export const commandBounds = {
  /** The largest file read. */
  fileBytes: 64 * 1024,
  name: 64,
  description: 1024,
  argumentHint: 200,
} as const;

/** A command's name: what follows `/` on the terminal (letters, digits, `-` and `_`). */
export const COMMAND_NAME = /^[A-Za-z0-9_-]+$/;

const KNOWN = new Set(["description", "argument-hint"]);
/** Claude Code's hints are written `argument-hint: [file] [focus]`, unquoted. */
const BRACKETED = new Set(["argument-hint"]);

/** Reads `text`, the whole file of a command: its fields and body, or why it is refused. */
export function parseCommand(text: string): CommandFile | { refused: string } {
  const plain = text.replace(/^\uFEFF/, "");
  const opens = plain.split(/\r?\n/, 1)[0]?.trimEnd() === "---";
  const front = opens ? readFrontMatter(plain, KNOWN, BRACKETED) : undefined;
  if (front && "refused" in front) return front;
  const body = front ? front.body : plain;
  const field = (key: string, bound: number): string | { refused: string } | undefined => {
    const value = front?.fields.values.get(key);
    if (value === undefined) return undefined;
    if (typeof value !== "string") return { refused: `${key} must be a string` };
    if (value.length > bound)
      return { refused: `${key} is ${value.length} characters (at most ${bound})` };
    return value.trim();
  };
  const description = field("description", commandBounds.description);
  if (typeof description === "object") return description;
  const argumentHint = field("argument-hint", commandBounds.argumentHint);
  if (typeof argumentHint === "object") return argumentHint;
  if (body.trim() === "") return { refused: "the prompt is empty" };
  const firstLine = body.split("\n").find((line) => line.trim() !== "") ?? "";
  return {
    description: description || firstLine.trim().slice(0, commandBounds.description),
    ...(argumentHint && { argumentHint }),
    body,
  };
}

/** `$ARGUMENTS`, or `$1`, `$2`…: where the arguments go. */
const PLACES = /\$ARGUMENTS|\$([1-9]\d*)/g;

/**
 * The prompt a command stands for with `args` (the rest of the line after its name): `$ARGUMENTS`
 * is all of it, `$1`, `$2`… each word (a "quoted" or 'quoted' group is one word; one not given
 * is empty). A prompt with neither gets the arguments after it on a line `ARGUMENTS: …`, as
 * Claude Code does, so what was typed is never dropped.
 */
export function expandCommand(body: string, args: string): string {
  const all = args.trim();
  const words = [...all.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map(
    (match) => match[1] ?? match[2] ?? match[3] ?? "",
  );
  let placed = false;
  const text = body.replace(PLACES, (_, at: string | undefined) => {
    placed = true;
    return at === undefined ? all : (words[Number(at) - 1] ?? "");
  });
  return placed || all === "" ? text : `${text.replace(/\n*$/, "")}\n\nARGUMENTS: ${all}`;
}

/** Whether the prompt takes arguments where it says (`$ARGUMENTS`, `$1`…). */
export function takesArguments(body: string): boolean {
  return /\$ARGUMENTS|\$[1-9]/.test(body);
}
