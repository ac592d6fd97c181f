import { join } from "node:path";
import { NotRegularFileError, openSessionFile } from "../session/lines.js";
import { listSessions, type SessionSummary } from "../session/session.js";
import { headOf } from "../text.js";
import { visible } from "../visible.js";
import { UsageError } from "./args.js";

/**
 * The file of the session to resume, from `--continue` or `--resume ID`. A named one that is not a
 * regular file (a FIFO would block its reader) is refused here, as a usage error. `--continue`
 * takes the newest session or none: one it cannot read is refused by name, never passed over.
 */
export async function sessionToResume(dir: string, resume: string | undefined): Promise<string> {
  if (resume !== undefined) {
    const path = join(dir, `${resume}.jsonl`);
    const missing = new UsageError(
      `no session ${JSON.stringify(resume)} for this folder (mini-agent --sessions lists them)`,
    );
    if (!/^[\w.-]+$/.test(resume)) throw missing;
    const file = await openSessionFile(path).catch((error: NodeJS.ErrnoException) => {
      if (error instanceof NotRegularFileError) throw new UsageError(error.message);
      if (error.code === "ENOENT") throw missing;
      throw error;
    });
    await file.close();
    return path;
  }
  const [newest] = await listSessions(dir);
  if (!newest) throw new UsageError("no session to continue for this folder");
  if (newest.unreadable !== undefined) {
    throw new Error(
      `cannot continue the newest session ${newest.id}: its file ${newest.path} cannot be read (${newest.unreadable}); fix its owner or mode, or choose one with --resume ID (mini-agent --sessions lists them)`,
    );
  }
  return newest.path;
}

/** `--sessions`: one row per session, newest first, its first prompt shown safely. */
export function formatSessions(sessions: SessionSummary[]): string {
  if (sessions.length === 0) return "no sessions for this folder\n";
  const rows = sessions.map((s) => {
    const when = s.updatedAt.slice(0, 16).replace("T", " ");
    if (s.damaged !== undefined)
      return `${s.id}  ${when}  damaged: cannot be resumed (${s.damaged})`;
    if (s.unreadable !== undefined)
      return `${s.id}  ${when}  unreadable: cannot be resumed (${s.unreadable})`;
    const prompt = visible(s.firstPrompt.replace(/[ \t\r\n]+/g, " "));
    const shown = prompt.length > 60 ? `${headOf(prompt, 59)}…` : prompt;
    return `${s.id}  ${when}  ${size(s.bytes).padStart(7)}  ${shown}`;
  });
  return `${rows.join("\n")}\n`;
}

/** A file size as a listing shows it: `512 B`, `12 KB`, `3.4 MB`, `1.2 GB`. */
function size(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const [value, unit] =
    bytes < 1e6 ? [bytes / 1e3, "KB"] : bytes < 1e9 ? [bytes / 1e6, "MB"] : [bytes / 1e9, "GB"];
  return `${value < 10 ? value.toFixed(1) : value.toFixed(0)} ${unit}`;
}
