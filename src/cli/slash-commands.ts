import type { ListedCommand } from "../app/commands.js";
import { compactCommand } from "../app/compaction.js";
import { visible } from "../visible.js";

/**
 * What a line typed at the interactive prompt asks for. A line is a command when it starts with
 * `/` and a name (letters, digits, `-`, `_`) followed by a blank or the end of the line; every
 * other line is a prompt for the model, so `/etc/hosts is weird?` is sent as it is. A command
 * whose name is unknown is not sent: it gets a one-line hint. `//` at the start sends the rest
 * of the line, from its second `/`, as a prompt: `//tmp is full` sends `/tmp is full`.
 */
export type LineIntent =
  | { kind: "prompt"; text: string }
  | { kind: "exit" }
  | { kind: "help" }
  | { kind: "compact"; instructions: string }
  /** `/skill NAME [text]`: the skill's text, then the rest of the line, as the prompt. */
  | { kind: "skill"; name: string; text: string }
  /** `/mode [NAME]`: shows the session mode, or switches to NAME. */
  | { kind: "mode"; name: string }
  /** `/rewind`: the prompts and their files; `/rewind N`: back to just before prompt N. */
  | { kind: "rewind"; to?: number; invalid?: string }
  | { kind: "unknown"; name: string };

export function lineIntent(line: string): LineIntent {
  if (line.startsWith("//")) return { kind: "prompt", text: line.slice(1) };
  const name = /^\/([\w-]+)(?:\s|$)/.exec(line.trimStart())?.[1];
  if (name === undefined) return { kind: "prompt", text: line };
  if (name === "exit") return { kind: "exit" };
  if (name === "help") return { kind: "help" };
  const skill = /^\/skill(?:\s+(\S+)(?:\s+([\s\S]*))?)?$/.exec(line.trim());
  if (skill) return { kind: "skill", name: skill[1] ?? "", text: skill[2]?.trim() ?? "" };
  if (name === "mode") return { kind: "mode", name: line.trim().slice("/mode".length).trim() };
  if (name === "rewind") {
    const argument = line.trim().slice("/rewind".length).trim();
    if (argument === "") return { kind: "rewind" };
    return /^\d+$/.test(argument) && Number(argument) >= 1
      ? { kind: "rewind", to: Number(argument) }
      : { kind: "rewind", invalid: argument };
  }
  const compact = compactCommand(line);
  if (compact) return { kind: "compact", instructions: compact.instructions };
  return { kind: "unknown", name };
}

/** `/help`: the commands, and how a line that starts with `/` is read. */
export const helpText = [
  "/compact [what to keep]  summarise the conversation so far, to free context",
  "/skill NAME [text]       send skill NAME's text, then the text (mini-agent skills lists them)",
  "/mode [code|ask|plan]    show the session mode, or switch: ask asks before every change,",
  "                         plan only reads (changes are denied), code follows the rules",
  "/rewind [N]              the prompts and the files each changed; N: back to just before",
  "                         prompt N (files put back, the conversation goes on from there)",
  "/help                    this list",
  "/exit                    leave the session (Ctrl-D too)",
  "A line that starts with / and a name is a command; any other line goes to the model",
  "(/etc/hosts is weird? is sent as it is). Start a line with // to send it from its second /.",
  "Tab completes a command's name.",
].join("\n");

/** The widest a description is shown in `/help`, in characters. */
const DESCRIPTION_SHOWN = 70;

/**
 * What `/help` says of the user's commands: each with what it takes and its description (cut to
 * one line), or where they are kept when there are none.
 */
export function commandsHelp(commands: readonly ListedCommand[]): string {
  if (commands.length === 0)
    return "Your commands: none yet (prompt files in ~/.mini-agent/commands or .agents/commands)\n";
  const lines = commands.map((command) => {
    const usage = `/${command.name}${command.hint ? ` ${command.hint}` : ""}`;
    const first = command.description.split("\n")[0] ?? "";
    const cut =
      first.length > DESCRIPTION_SHOWN ? `${first.slice(0, DESCRIPTION_SHOWN - 1)}…` : first;
    return visible(`${usage.padEnd(24)} ${cut}`);
  });
  return `Your commands:\n${lines.join("\n")}\n`;
}

/** The names Tab completes `line` to (`/re` to `/review`, `/rewind`), when it is a command's start. */
export function completeCommand(line: string, names: readonly string[]): [string[], string] {
  if (!/^\/[\w-]*$/.test(line)) return [[], line];
  const hits = names.map((name) => `/${name}`).filter((name) => name.startsWith(line));
  return [hits.sort(), line];
}

/** The hint for an unknown `/name`: one line. */
export function unknownCommand(name: string): string {
  return `mini-agent: unknown command /${visible(name)}: /help lists the commands; start the line with // to send it to the model`;
}
