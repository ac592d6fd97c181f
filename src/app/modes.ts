import { visible } from "../visible.js";

/**
 * A session mode: a preset of the approval policy, not a seam of its own. `code` is the rules as
 * they are; `ask` asks before every call that changes anything, whatever the allow rules and
 * `--allow-bash` say; `plan` denies those calls. Deny rules come first in every mode, and reading
 * (read, ls, find, grep, and bash commands of the read-only set under the sandbox) is never
 * held back. The same modes serve the terminal (`--mode`, `/mode`) and an editor
 * (`session/set_mode`).
 */
export type Mode = "code" | "ask" | "plan";

export const modes: readonly { id: Mode; name: string; description: string }[] = [
  { id: "code", name: "Code", description: "The approval rules as they are" },
  { id: "ask", name: "Ask", description: "Asks before every change: edits, commands, MCP calls" },
  {
    id: "plan",
    name: "Plan",
    description: "Reads and plans; edits, commands beyond reading and MCP calls are denied",
  },
];

export function isMode(text: string): text is Mode {
  return modes.some((mode) => mode.id === text);
}

/** The mode the session is in; `/mode` and `session/set_mode` change it between calls. */
export interface ModeState {
  current: Mode;
}

/** The system prompt with the mode's line after it (none for `code`). */
export function withModeLine(system: string, mode: Mode): string {
  const line = modeLine(mode);
  return line === "" ? system : `${system}\n\n${line}`;
}

/** The system prompt's line for the mode; none for `code`. */
function modeLine(mode: Mode): string {
  if (mode === "plan")
    return "The session is in plan mode: read and search as you need, then answer with a plan; write, edit, MCP calls and bash beyond read-only commands are denied until the user leaves plan mode.";
  if (mode === "ask")
    return "The session is in ask mode: the user is asked before every write, edit, MCP call and bash command beyond read-only ones.";
  return "";
}

/** The receipt of a call plan mode denies. */
export function planDenial(tool: string): string {
  return `the session is in plan mode: ${tool} is not allowed, as it may change something (the user can change the mode)`;
}

/** What ask mode's "always" says instead of saving a rule. */
export const askModeNoSave = "the session is in ask mode, which asks before every change";

/** `/mode [NAME]` at the prompt: switches to NAME when given; the line that says the mode. */
export function modeCommand(state: ModeState, name: string): string {
  const names = modes.map((mode) => mode.id).join("|");
  if (name !== "" && !isMode(name))
    return `no mode ${JSON.stringify(visible(name))}: /mode ${names}`;
  if (name !== "") state.current = name;
  const mode = modes.find((candidate) => candidate.id === state.current);
  const about = mode
    ? `${mode.description.charAt(0).toLowerCase()}${mode.description.slice(1)}`
    : "";
  const said = `mode ${state.current} (${about})`;
  return name === "" ? `${said}; /mode ${names} switches` : said;
}
