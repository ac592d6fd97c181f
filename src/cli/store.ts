import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { NotRegularFileError, openSessionFile } from "../session/lines.js";
import { listSessions, type SessionSummary } from "../session/session.js";
import { headOf } from "../text.js";
import { visible } from "../visible.js";
import { UsageError } from "./args.js";
import { systemErrorText } from "./errors.js";

/**
 * The file of the session to resume, from `--continue` or `--resume ID`. `ID` may be a unique
 * prefix of an id: a prefix that matches none or several is refused in one line, as a usage
 * error. A named one that is not a regular file (a FIFO would block its reader) is refused here.
 * `--continue` takes the newest session or none: one it cannot read is refused by name, never
 * passed over.
 */
export async function sessionToResume(
  dir: string,
  resume: string | undefined,
  /** What the newest session is taken for, and how another is named, in the refusals. */
  use: { verb: string; choose: string } = { verb: "continue", choose: "--resume ID" },
): Promise<string> {
  if (resume !== undefined) return await namedSession(dir, resume);
  const [newest] = await listSessions(dir);
  if (!newest) throw new UsageError(`no session to ${use.verb} for this folder`);
  if (newest.unreadable !== undefined) {
    throw new Error(
      `cannot ${use.verb} the newest session ${newest.id}: its file ${newest.path} cannot be read (${newest.unreadable}); fix its owner or mode, or choose one with ${use.choose} (mini-agent --sessions lists them)`,
    );
  }
  return newest.path;
}

/** The file of the session `resume` names, whole or by a unique prefix of its id. */
async function namedSession(dir: string, resume: string): Promise<string> {
  const missing = new UsageError(
    `no session ${JSON.stringify(resume)} for this folder (mini-agent --sessions lists them)`,
  );
  if (!/^[\w.-]+$/.test(resume)) throw missing;
  const whole = join(dir, `${resume}.jsonl`);
  const file = await openSessionFile(whole).catch((error: NodeJS.ErrnoException) => {
    if (error instanceof NotRegularFileError) throw new UsageError(error.message);
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (file) {
    await file.close();
    return whole;
  }
  const matching = (await listSessions(dir)).filter((s) => s.id.startsWith(resume));
  const [only, second] = matching;
  if (!only) throw missing;
  if (second) {
    const ids = matching.map((s) => s.id).join(", ");
    throw new UsageError(
      `session prefix ${JSON.stringify(resume)} is ambiguous: ${ids} (give more of the id; mini-agent --sessions lists them)`,
    );
  }
  return only.path;
}

/** `--sessions --all`: the sessions of every folder under the state folder, newest first. */
export async function allSessions(
  state: string,
  tell: (line: string) => void,
): Promise<SessionSummary[]> {
  const root = join(state, "sessions");
  const folders = await readdir(root, { withFileTypes: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [];
      throw error;
    },
  );
  const lists = await Promise.all(
    folders
      .filter((entry) => entry.isDirectory())
      .map((entry) => {
        const folder = join(root, entry.name);
        // One folder that cannot be listed (another user's, no permission) hides no other.
        return listSessions(folder).catch((error: NodeJS.ErrnoException) => {
          if (typeof error.code !== "string") throw error;
          tell(`cannot list ${folder}: ${systemErrorText(error)}: its sessions are left out`);
          return [];
        });
      }),
  );
  return lists
    .flat()
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id));
}

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
