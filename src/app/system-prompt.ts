import { visible } from "../visible.js";
import {
  type InstructionBounds,
  instructionsLine,
  instructionsPrompt,
  type ProjectInstructions,
  readInstructions,
} from "./instructions.js";

/** What the system prompt states; built again for every turn. */
export interface PromptFacts {
  workspace: string;
  bash: "allowed" | "ask" | "denied";
  sandboxed: boolean;
  /** Today, as the model cannot know it. */
  date: Date;
  /** `process.platform`: `linux`, `darwin`, `win32`. */
  platform: string;
  instructions: ProjectInstructions;
}

/**
 * The system prompt: who the agent is, where it works and under which rules, the date, the
 * platform and whether the folder is in a git repository, then the project's instruction files.
 * Without instruction files it stays well under a kilobyte: it is sent with every request.
 */
export function systemPrompt(facts: PromptFacts): string {
  const { workspace, bash, sandboxed, instructions } = facts;
  const bashRule = {
    allowed: "bash is allowed.",
    ask: "bash asks the user before each command.",
    denied: sandboxed
      ? "bash runs read-only commands (ls, cat, grep, git status, diff, log) and those the user's rules allow; other commands are denied: use the other tools."
      : "bash is denied unless the user restarts with --allow-bash; use the other tools.",
  }[bash];
  const git =
    instructions.gitRoot === undefined
      ? "The folder is not in a git repository."
      : instructions.gitRoot === "."
        ? "The folder is a git repository."
        : `The folder is in a git repository (its root: ${visible(instructions.gitRoot)}).`;
  const base = [
    `You are mini-agent, a coding agent in a terminal, working in ${visible(workspace)}.`,
    "Tool paths are relative to that folder and cannot leave it.",
    `Look before you change anything; prefer edit to write for existing files. ${bashRule}`,
    ...(sandboxed && bash !== "denied"
      ? ["bash runs sandboxed: only the workspace is writable, no network."]
      : []),
    "For a task of several steps, keep a checklist with the plan tool: update it as each step starts and ends.",
    "Answer briefly and say what you changed.",
    `Today is ${localDate(facts.date)}; the platform is ${facts.platform}. ${git}`,
  ].join("\n");
  const project = instructionsPrompt(instructions);
  return project === "" ? base : `${base}\n\n${project}`;
}

/** `2025-03-07`, in the user's time zone. */
function localDate(date: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}`;
}

/**
 * The system prompt of each turn. The instruction files are read at start for the line shown
 * then (empty without files), and read again for every turn, the first included: a file edited
 * while the prompt waited, or by the agent in the turn before, is what the turn sees.
 */
export async function systemPrompts(
  facts: Omit<PromptFacts, "date" | "instructions">,
  bounds: InstructionBounds,
  show: (text: string) => string,
  /** What follows the instructions (the skill catalog), asked afresh for every turn. */
  more: () => Promise<string> = async () => "",
): Promise<{ startLine: string; next(): Promise<string> }> {
  const startLine = instructionsLine(await readInstructions(facts.workspace, bounds), show);
  return {
    startLine,
    next: async () => {
      const base = systemPrompt({
        ...facts,
        date: new Date(),
        instructions: await readInstructions(facts.workspace, bounds),
      });
      const after = await more();
      return after === "" ? base : `${base}\n\n${after}`;
    },
  };
}
