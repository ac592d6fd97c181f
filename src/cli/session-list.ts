import type { SessionSummary } from "../session/session.js";
import { headOf } from "../text.js";
import { visible } from "../visible.js";

/**
 * `--sessions`: one row per session, newest first, its first prompt shown safely; with
 * `folders` (`--all`), each row names the session's folder before its prompt.
 */
export function formatSessions(
  sessions: SessionSummary[],
  options: { folders?: boolean } = {},
): string {
  if (sessions.length === 0)
    return options.folders ? "no sessions\n" : "no sessions for this folder\n";
  const rows = sessions.map((s) => {
    const when = s.updatedAt.slice(0, 16).replace("T", " ");
    if (s.damaged !== undefined)
      return `${s.id}  ${when}  damaged: cannot be resumed (${s.damaged})`;
    if (s.unreadable !== undefined)
      return `${s.id}  ${when}  unreadable: cannot be resumed (${s.unreadable})`;
    const prompt = visible(s.firstPrompt.replace(/[ \t\r\n]+/g, " "));
    const shown = prompt.length > 60 ? `${headOf(prompt, 59)}…` : prompt;
    const folder = options.folders ? `${visible(s.workspace)}  ` : "";
    const dropped = s.snapshotDropped ? "  (its bash pre-images were dropped)" : "";
    return `${s.id}  ${when}  ${size(s.bytes).padStart(7)}  ${folder}${shown}${dropped}`;
  });
  return `${rows.join("\n")}\n`;
}

/** A session's row in the picker: as `--sessions` lists it. */
export const sessionRow = (session: SessionSummary) => formatSessions([session]).trimEnd();

/** A file size as a listing shows it: `512 B`, `12 KB`, `3.4 MB`, `1.2 GB`. */
function size(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const [value, unit] =
    bytes < 1e6 ? [bytes / 1e3, "KB"] : bytes < 1e9 ? [bytes / 1e6, "MB"] : [bytes / 1e9, "GB"];
  return `${value < 10 ? value.toFixed(1) : value.toFixed(0)} ${unit}`;
}
