import { linkSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";

/**
 * One writer per session: `<id>.lock` beside the session file names the process that writes it
 * (its pid and, where `/proc` tells it, the time that process started, so a reused pid is not
 * taken for the holder). The lock is made whole in a private file and linked into place, which
 * fails if a lock exists: no one ever sees a half-written lock. A lock whose holder is gone (a
 * crash, a kill) is taken over; a live holder gets a clear error. It is released on close and
 * when the process exits.
 *
 * Limits: two processes that find the same stale lock at the same instant may both take it over;
 * holders in another pid namespace (another container sharing the folder) cannot be seen.
 */
export interface SessionLock {
  release(): void;
}

/** Held locks, removed when the process exits however it exits normally (`exit`, Ctrl-C). */
const held = new Map<string, string>();
let exitHookInstalled = false;

export function lockSession(path: string, id: string): SessionLock {
  const mine = `${process.pid} ${startTime(process.pid) ?? "-"}\n`;
  const draft = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(draft, mine, { mode: 0o600 });
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(draft, path);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt === 3) throw error;
      }
      const holder = readHolder(path);
      if (holder !== undefined && isRunning(holder)) {
        throw new Error(`session ${id} is in use by another mini-agent (pid ${holder.pid})`);
      }
      removeIfSame(path, holder?.text);
    }
  } finally {
    // Also when the draft could not be written whole (a full disk): no temp file is left.
    removeDraft(draft);
  }
  held.set(path, mine);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const [lock, content] of held) {
        try {
          removeIfSame(lock, content);
        } catch {
          // Exiting: a lock left behind names a dead pid and is taken over next time.
        }
      }
    });
  }
  return {
    release() {
      if (held.get(path) !== mine) return;
      held.delete(path);
      removeIfSame(path, mine);
    },
  };
}

interface Holder {
  text: string;
  pid: number;
  start: string | undefined;
}

function readHolder(path: string): Holder | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  const [pid = "", start = "-"] = text.trim().split(" ");
  if (!/^[1-9]\d*$/.test(pid)) return undefined;
  return { text, pid: Number(pid), start: start === "-" ? undefined : start };
}

/** The holder still runs: its pid is alive and, when both are known, started when it said. */
function isRunning(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const now = startTime(holder.pid);
  if (now === "zombie") return false;
  return holder.start === undefined || now === undefined || now === holder.start;
}

/** Field 22 of `/proc/PID/stat` (start time in clock ticks since boot), `zombie`, or unknown. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" ? "zombie" : fields[19];
  } catch {
    return undefined;
  }
}

/** Removes the private draft, if it was made; never hides the error that is on its way out. */
function removeDraft(draft: string): void {
  try {
    unlinkSync(draft);
  } catch {
    // Not made (the folder refused it), or already gone.
  }
}

/** Removes the lock only while it still says what we read: never a lock someone else just took. */
function removeIfSame(path: string, text: string | undefined): void {
  try {
    if (text === undefined || readFileSync(path, "utf8") === text) unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
