import { basename, join } from "node:path";
import { sha256Hex } from "../crypto.js";
import { stateHome } from "../state-home.js";
import { stateHint, systemErrorMeaning } from "../system-errors.js";
import type { SessionHeader, SessionRecord } from "./records.js";
import type { Session } from "./session.js";

export { stateHome } from "../state-home.js";

/** One folder of sessions per workspace: `sessions/<name>-<hash of the real path>`. */
export function sessionsDir(env: NodeJS.ProcessEnv, workspace: string): string {
  const hash = sha256Hex(workspace).slice(0, 12);
  const name = basename(workspace).replace(/[^\w.-]/g, "_") || "root";
  return join(stateHome(env), "sessions", `${name}-${hash}`);
}

/** A session record that could not be written, said in one line with what to do about it. */
export class SessionWriteError extends Error {
  override name = "SessionWriteError";
}

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

  /** The session file's path, once it exists. */
  get path(): string | undefined {
    return this.session?.path;
  }

  /** Writes one record, creating the session first if this is its first. */
  async record(record: Exclude<SessionRecord, SessionHeader>): Promise<void> {
    try {
      this.session ??= await this.create();
      await this.session.record(record);
    } catch (error) {
      const failed = systemFailure(error);
      if (failed === undefined) throw error;
      const { code, path } = failed;
      // A file in the folder not ours to write (a blob store a run as root made) is named.
      const denied = code === "EACCES" || code === "EPERM";
      const inside = path?.startsWith(`${this.state}/`) === true;
      const file = denied && inside ? `: ${path}` : "";
      const hint = stateHint(code) ?? "set MINI_AGENT_HOME to a folder you can write";
      throw new SessionWriteError(
        `cannot write the session in ${this.state}: ${systemErrorMeaning(code)}${file} (${hint})`,
        { cause: error },
      );
    }
  }

  async close(): Promise<void> {
    await this.session?.close();
  }
}

/** The code of a failed system call (`ENOSPC`) and its path, on the error or on its cause. */
function systemFailure(error: unknown): { code: string; path?: string } | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    const { code, path } = e as NodeJS.ErrnoException;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code))
      return { code, ...(typeof path === "string" && { path }) };
  }
  return undefined;
}
