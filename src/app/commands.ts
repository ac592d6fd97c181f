import { expandCommand, takesArguments } from "../commands/command.js";
import {
  type CommandPlaces,
  type CommandWarning,
  discoverCommands,
  type UserCommand,
} from "../commands/discover.js";
import { visible } from "../visible.js";
import { UsageError } from "./exit.js";

/**
 * The commands of the front ends themselves, which a user's command never shadows: the
 * terminal's (`/help` lists them), of which an editor gets those with an effect there
 * (`editorCommands`).
 */
export const builtInCommands: ReadonlySet<string> = new Set([
  "compact",
  "exit",
  "help",
  "mode",
  "rewind",
  "skill",
]);

/** A command as a front end lists it: the built-ins an editor can run, then the user's. */
export interface ListedCommand {
  name: string;
  description: string;
  /** What to type after the name; none when it takes nothing. */
  hint?: string;
}

/** The built-ins with a defined effect in an editor: `/compact` and `/mode`. */
export const editorCommands: readonly ListedCommand[] = [
  {
    name: "compact",
    description: "Summarise the conversation so far, to free context",
    hint: "what to keep",
  },
  {
    name: "mode",
    description: "Show the session mode, or switch to another",
    hint: "code|ask|plan",
  },
];

/** The warnings one look tells; the rest are counted. */
const TOLD_WARNINGS = 20;

/** `command /NAME (PATH): REASON`, made safe for a terminal. */
function warningLine(warning: CommandWarning): string {
  const about = warning.about.startsWith("/")
    ? `command ${warning.about} (${warning.path})`
    : `commands (${warning.path})`;
  return visible(`${about}: ${warning.reason}`);
}

/**
 * The user's commands of one session: found when it is assembled and again before each use (a
 * file edited since is read as it is now); each warning is told once.
 */
export class RunCommands {
  private found: UserCommand[] = [];
  private warnings: CommandWarning[] = [];
  private readonly told = new Set<string>();

  constructor(
    private readonly places: Omit<CommandPlaces, "reserved">,
    private readonly tell: (line: string) => void,
  ) {}

  /** The commands found at the last look, by name. */
  get commands(): readonly UserCommand[] {
    return this.found;
  }

  /** Finds the commands again; tells each warning not told before. */
  async refresh(): Promise<void> {
    const set = await discoverCommands({ ...this.places, reserved: builtInCommands });
    this.found = set.commands;
    this.warnings = set.warnings;
    const fresh = set.warnings.map(warningLine).filter((line) => !this.told.has(line));
    for (const line of fresh) this.told.add(line);
    for (const line of fresh.slice(0, TOLD_WARNINGS)) this.tell(line);
    const more = fresh.length - TOLD_WARNINGS;
    if (more > 0) this.tell(`commands: ${more} more warnings`);
  }

  /** The user's commands as a front end lists them, by name. */
  listed(): ListedCommand[] {
    return this.found.map((command) => {
      const hint = command.argumentHint ?? (takesArguments(command.body) ? "arguments" : undefined);
      return {
        name: command.name,
        description: command.description,
        ...(hint !== undefined && { hint }),
      };
    });
  }

  /**
   * The prompt `text` stands for when it is `/NAME args` and NAME one of the user's commands
   * (found afresh); undefined when it is not. A command whose file is bad (its warning) is a
   * usage error saying why, in one line.
   */
  async prompt(text: string): Promise<string | undefined> {
    const match = /^\/([A-Za-z0-9_-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
    const name = match?.[1];
    if (name === undefined || builtInCommands.has(name)) return undefined;
    await this.refresh();
    const command = this.found.find((candidate) => candidate.name === name);
    if (command) return expandCommand(command.body, match?.[2] ?? "");
    const bad = this.warnings.find((warning) => warning.about === `/${name}`);
    if (bad) throw new UsageError(`${warningLine(bad)}, so nothing was sent`);
    return undefined;
  }
}
