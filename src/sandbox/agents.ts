import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Which mini-agents of this machine may have left processes running: the sweep of a killed
 * agent's leftovers (`sweepOrphans`) reads the environment of every process on the machine,
 * a few milliseconds per hundred processes, so it does so only when an agent that started
 * processes is gone without ending them.
 *
 * Before an agent starts its first marked process (a bash command, an MCP server) it records
 * itself: an empty file `<pid namespace>-<pid>-<start time>` in a folder of its user's own,
 * `agentsFolder()`, removed by its exit hook once its processes are ended. A record whose agent
 * no longer runs (no process of that pid, or one started at another time: a reused pid) is an
 * agent killed or crashed past its exit hook: the sweep runs, then removes the record.
 *
 * Fail closed: a folder that is not a folder the user owns and only they may write (made 0700
 * if missing), or one that cannot be read, makes every sweep read every process, as does a
 * record of a name it cannot read. Records of another PID namespace are left alone (the sweep
 * ends processes of its own namespace only).
 */
export function agentsFolder(): string {
  return join("/tmp", `mini-agent-${process.getuid?.() ?? 0}`, "agents");
}

/** What the records say: whether to read every process, and the records of agents gone. */
export interface AgentsSeen {
  scan: boolean;
  gone: string[];
}

export function goneAgents(folder: string, namespace: string): AgentsSeen {
  // Made when missing (this first sweep reads every process): later sweeps trust it.
  if (!ownFolder(folder)) return { scan: true, gone: makeFolder(folder) };
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return { scan: true, gone: [] };
  }
  const gone = names.filter((name) => {
    const match = /^(\d*)-(\d+)-(\d+)$/.exec(name);
    if (!match) return true;
    const [, space, pid, started] = match;
    return space === namespace && startTime(Number(pid)) !== started;
  });
  return { scan: gone.length > 0, gone };
}

/** Removes the records of agents a sweep has just dealt with. */
export function forgetAgents(folder: string, names: string[]): void {
  for (const name of names) {
    try {
      rmSync(join(folder, name), { force: true });
    } catch {
      // Not a file (a folder of that name): it starts the next sweep too.
    }
  }
}

/**
 * Records this process as an agent with processes of its own; returns the record's path, or
 * undefined when it could not be written (see the module's note).
 */
export function recordAgent(folder: string, namespace: string): string | undefined {
  const started = startTime(process.pid);
  if (started === undefined) return undefined;
  try {
    makeFolder(folder);
    if (!ownFolder(folder)) return undefined;
    const record = join(folder, `${namespace}-${process.pid}-${started}`);
    writeFileSync(record, "", { mode: 0o600 });
    return record;
  } catch {
    return undefined;
  }
}

function makeFolder(folder: string): [] {
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
  } catch {
    // Not ours to make (a file in the way, a read-only /tmp): every sweep reads every process.
  }
  return [];
}

/** A folder (not a link) this user owns, that no one else may write; its parent too. */
function ownFolder(folder: string): boolean {
  const uid = process.getuid?.() ?? 0;
  try {
    for (const path of [folder, join(folder, "..")]) {
      const info = lstatSync(path, { throwIfNoEntry: false });
      if (!info?.isDirectory() || info.uid !== uid || (info.mode & 0o022) !== 0) return false;
    }
    return true;
  } catch {
    return false; // A file or a folder not ours in the way (ENOTDIR, EACCES).
  }
}

/** When process `pid` started (clock ticks since boot, `/proc/<pid>/stat`), if it runs. */
export function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}
