import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import type { Compaction } from "../compaction/record.js";
import { NotRegularFileError, openSessionFile } from "../session/lines.js";
import {
  type ApprovalRecord,
  listSessions,
  type RetryRecord,
  type Session,
  type SessionSummary,
  type UsageRecord,
} from "../session/session.js";
import { systemErrorMeaning } from "../system-errors.js";
import { headOf } from "../text.js";
import type { Message } from "../types.js";
import { visible } from "../visible.js";
import { UsageError } from "./args.js";

/** `$MINI_AGENT_HOME` (default `~/.mini-agent`): the user's state, never inside the workspace. */
export function stateHome(env: NodeJS.ProcessEnv): string {
  return env.MINI_AGENT_HOME || join(homedir(), ".mini-agent");
}

/** One folder of sessions per workspace: `sessions/<name>-<hash of the real path>`. */
export function sessionsDir(env: NodeJS.ProcessEnv, workspace: string): string {
  const hash = createHash("sha256").update(workspace).digest("hex").slice(0, 12);
  const name = basename(workspace).replace(/[^\w.-]/g, "_") || "root";
  return join(stateHome(env), "sessions", `${name}-${hash}`);
}

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

/** A session record that could not be written, said in one line with what to do about it. */
export class SessionWriteError extends Error {
  override name = "SessionWriteError";
}

const fullDisk = "free space, or set MINI_AGENT_HOME to another folder";
const stateHints: Record<string, string> = { ENOSPC: fullDisk, EDQUOT: fullDisk };

/**
 * The session of one run, created only when its first record is written, so a run that fails
 * earlier (a configuration error, an empty prompt) leaves no session behind. Records are written
 * before the caller adds them to its history: what the history holds was persisted. A failed
 * system call becomes a `SessionWriteError` naming the state folder; other errors pass as they are.
 */
export class SessionStore {
  constructor(
    private readonly state: string,
    private readonly create: () => Promise<Session>,
    private session?: Session,
  ) {}

  /** The session's id, once it exists. */
  get id(): string | undefined {
    return this.session?.id;
  }

  append(message: Message): Promise<void> {
    return this.write((session) => session.append(message));
  }

  appendApproval(decision: Omit<ApprovalRecord, "type">): Promise<void> {
    return this.write((session) => session.appendApproval(decision));
  }

  appendUsage(usage: Omit<UsageRecord, "type">): Promise<void> {
    return this.write((session) => session.appendUsage(usage));
  }

  appendRetry(retry: Omit<RetryRecord, "type">): Promise<void> {
    return this.write((session) => session.appendRetry(retry));
  }

  appendCompaction(compaction: Compaction): Promise<void> {
    return this.write((session) => session.appendCompaction(compaction));
  }

  async close(): Promise<void> {
    await this.session?.close();
  }

  private async write(record: (session: Session) => Promise<void>): Promise<void> {
    try {
      this.session ??= await this.create();
      await record(this.session);
    } catch (error) {
      const code = systemCode(error);
      if (code === undefined) throw error;
      const hint = stateHints[code] ?? "set MINI_AGENT_HOME to a folder you can write";
      throw new SessionWriteError(
        `cannot write the session in ${this.state}: ${systemErrorMeaning(code)} (${hint})`,
        { cause: error },
      );
    }
  }
}

/** The code of a failed system call (`ENOSPC`), on the error or on its cause. */
function systemCode(error: unknown): string | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
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
