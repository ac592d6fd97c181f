import { fitColumns } from "../render/columns.js";
import { listSessions, type SessionSummary } from "../session/session.js";
import { UsageError } from "./args.js";
import { sessionRow } from "./session-list.js";

/**
 * `--resume` without an id: the id of the session chosen in the picker, or undefined when the
 * person cancels. Without a terminal to choose on, or with no session, a usage error.
 */
export async function chooseSession(dir: string): Promise<string | undefined> {
  const { stdin, stderr } = process;
  if (!stdin.isTTY || !stderr.isTTY) {
    throw new UsageError(
      "--resume without an id needs a terminal to choose on: give the id (mini-agent --sessions lists them)",
    );
  }
  const sessions = await listSessions(dir);
  if (sessions.length === 0) throw new UsageError("no session to resume for this folder");
  const chosen = await pickSession(sessions, { stdin, out: stderr, row: sessionRow });
  return chosen?.id;
}

/** A key the picker acts on: a move, a digit of a row's number, Enter, or Esc / Ctrl-C. */
export type PickerKey = "up" | "down" | "enter" | "cancel" | `${number}`;

const ESC = String.fromCharCode(27);
/** An escape sequence (CSI or SS3) or one character. */
const keyPattern = new RegExp(`${ESC}\\[[\\d;]*[A-Za-z~]|${ESC}O[A-Za-z]|[\\s\\S]`, "g");
const named: Record<string, PickerKey> = {
  [`${ESC}[A`]: "up",
  [`${ESC}OA`]: "up",
  [`${ESC}[B`]: "down",
  [`${ESC}OB`]: "down",
  "\r": "enter",
  "\n": "enter",
  [ESC]: "cancel",
  "\u0003": "cancel",
};

/** The keys in what the terminal sent; any other key is ignored. */
export function pickerKeys(chunk: string): PickerKey[] {
  const keys: PickerKey[] = [];
  for (const [key] of chunk.matchAll(keyPattern)) {
    const known = named[key];
    if (known) keys.push(known);
    else if (/^\d$/.test(key)) keys.push(key as `${number}`);
  }
  return keys;
}

/**
 * Which row is chosen: the arrows move within the list; digits typed in a row make a row's
 * number (1 is the first), starting again at the last digit when the number has no row.
 */
export class PickerState {
  selected = 0;
  private number = "";

  constructor(readonly rows: number) {}

  key(key: PickerKey): "chosen" | "cancelled" | undefined {
    if (key === "enter") return "chosen";
    if (key === "cancel") return "cancelled";
    if (key === "up" || key === "down") {
      this.number = "";
      const step = key === "up" ? -1 : 1;
      this.selected = Math.min(this.rows - 1, Math.max(0, this.selected + step));
      return undefined;
    }
    const row = (digits: string) => Number(digits) - 1;
    const longer = `${this.number}${key}`;
    this.number = row(longer) >= 0 && row(longer) < this.rows ? longer : key;
    const chosen = row(this.number);
    if (chosen >= 0 && chosen < this.rows) this.selected = chosen;
    return undefined;
  }
}

/** The most rows the picker lists: older sessions are named by `--resume ID`. */
const shownRows = 20;

export interface PickerTerminal {
  stdin: NodeJS.ReadStream;
  out: NodeJS.WriteStream;
  /** Each row as the listing shows it. */
  row(session: SessionSummary): string;
}

/**
 * On a terminal, `--resume` without an id: the folder's sessions newest first, one chosen with
 * the arrow keys or its number and Enter; Esc or Ctrl-C cancels (undefined). The list is drawn
 * again in place after each key, and stays on the screen, its last choice marked, when it ends.
 */
export function pickSession(
  sessions: readonly SessionSummary[],
  { stdin, out, row }: PickerTerminal,
): Promise<SessionSummary | undefined> {
  const shown = sessions.slice(0, shownRows);
  const state = new PickerState(shown.length);
  const older = sessions.length - shown.length;
  const cut = (line: string) => fitColumns(line, (out.columns || 80) - 1);
  const lines = () => [
    "resume which session? ↑/↓ or its number, Enter resumes, Esc cancels",
    ...shown.map(
      (session, i) =>
        `${i === state.selected ? "›" : " "} ${String(i + 1).padStart(2)}  ${row(session)}`,
    ),
    ...(older > 0 ? [`  (${older} older: mini-agent --sessions lists them)`] : []),
  ];
  let drawn = 0;
  const draw = (next: string[]) => {
    const up = drawn > 0 ? `\x1b[${drawn}A\r\x1b[J` : "";
    out.write(`${up}${next.map((line) => `${cut(line)}\n`).join("")}`);
    drawn = next.length;
  };
  return new Promise((resolve) => {
    const end = (chosen: SessionSummary | undefined) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      resolve(chosen);
    };
    const onData = (chunk: string | Buffer) => {
      for (const key of pickerKeys(chunk.toString())) {
        const outcome = state.key(key);
        if (outcome) return end(outcome === "chosen" ? shown[state.selected] : undefined);
      }
      draw(lines());
    };
    stdin.setRawMode(true);
    stdin.on("data", onData);
    stdin.resume();
    draw(lines());
  });
}
