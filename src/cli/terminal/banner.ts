import type { Styles } from "../../render/style.js";
import type { Message } from "../../types.js";
import { visible } from "../../visible.js";

/** What the banner names: the run's model and provider, its sandbox and its folder. */
export interface BannerInfo {
  model: string;
  provider: string;
  /** `sandboxName`'s answer: `bwrap`, `none`, `unavailable`… */
  sandbox: string;
  workspace: string;
  /** Bash runs in a working sandbox without asking (code mode): said in a third line. */
  boundary?: boolean;
}

/** The line that says what runs without asking, where the sandbox is the boundary. */
export const boundaryLine =
  "bash runs in the sandbox without asking: the workspace is writable, nothing else, no network; --mode ask to be asked";

/**
 * The two dimmed lines (three where the sandbox is the boundary) an interactive session on a terminal starts with, so a person knows what
 * they talk to, how bash runs, where, and how to find the commands. Each line is cut by `cut`.
 */
export function banner(info: BannerInfo, style: Styles, cut: (line: string) => string): string {
  const lines = [
    `mini-agent · model ${visible(info.model)} · provider ${info.provider} · sandbox ${info.sandbox}`,
    `folder ${visible(info.workspace)} · /help lists the commands, /exit leaves`,
    ...(info.boundary ? [boundaryLine] : []),
  ];
  return lines.map((line) => `${style.dim(cut(line))}\n`).join("");
}

/** What the recap reads of a resumed session. */
export interface RecapInfo {
  id: string;
  /** When the session was last written. */
  updatedAt: Date;
  /** Its history, as the next turn will carry it. */
  messages: readonly Message[];
}

/**
 * Three dimmed lines after `--continue` or `--resume` on a terminal: the session's id and how long
 * ago it was used, then its last prompt and its last answer, each on one line (white space runs
 * shown as one space, every other control character made visible) and cut by `cut`.
 */
export function recap(
  info: RecapInfo,
  now: Date,
  style: Styles,
  cut: (line: string) => string,
): string {
  const last = (role: "user" | "assistant") =>
    info.messages.findLast((message) => message.role === role && message.content.trim() !== "")
      ?.content;
  const prompt = last("user");
  const answer = last("assistant");
  const lines = [
    `resumed session ${visible(info.id)}, last used ${ago(now.getTime() - info.updatedAt.getTime())}`,
    `  last prompt: ${prompt === undefined ? "(none)" : oneLine(prompt)}`,
    `  last answer: ${answer === undefined ? "(none yet)" : oneLine(answer)}`,
  ];
  return lines.map((line) => `${style.dim(cut(line))}\n`).join("");
}

/** Text on one line: runs of spaces, tabs and newlines as one space, the rest through `visible`. */
const oneLine = (text: string) => visible(text.replace(/[ \t\n]+/g, " ").trim());

/** `just now`, `1 minute ago`, `3 hours ago`, `2 days ago`. */
function ago(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return "just now";
  const [count, unit] =
    minutes < 60
      ? [minutes, "minute"]
      : minutes < 24 * 60
        ? [Math.floor(minutes / 60), "hour"]
        : [Math.floor(minutes / (24 * 60)), "day"];
  return `${count} ${unit}${count === 1 ? "" : "s"} ago`;
}
