import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { NotRegularFileError, openSessionFile } from "../session/lines.js";
import { listSessions, type SessionSummary } from "../session/session.js";
import { systemErrorText } from "./errors.js";
import { UsageError } from "./exit.js";

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
