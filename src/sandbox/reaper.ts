import {
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  rmSync,
} from "node:fs";
import { nodeCrypto } from "../crypto.js";
import { agentsFolder, forgetAgents, goneAgents, recordAgent, startTime } from "./agents.js";

/**
 * Ends every process a bash command started, on every way out: the command's end, a timeout,
 * an abort, and mini-agent's own exit through `process.exit` (a synchronous `exit` hook).
 *
 * Each command runs in its own session and process group (both numbered by its pid), and with
 * `MINI_AGENT_RUN=<marker>` in its environment. Ending a command SIGKILLs the group, then (on
 * Linux) every process still in the command's session (what moved to another group, `set -m`)
 * and every process whose environment still carries the marker (what left the session with
 * `setsid`). A session id is exact: the kernel does not reuse a pid while a session bears it.
 * A process that leaves the session and hides its environment escapes: one that drops the
 * variable, or, unless mini-agent runs as root, one that makes itself non-dumpable (its
 * environment is then unreadable to other processes of its uid). Elsewhere than Linux only the
 * group is ended. Inside bwrap the PID namespace and `--die-with-parent` end everything anyway.
 */
export const RUN_VARIABLE = "MINI_AGENT_RUN";

/** Live commands: marker → process group id. */
const live = new Map<string, number>();
let hooked = false;

/**
 * A new marker: `<pid namespace>:<agent pid>:<its start time>:<random>`, so `sweepOrphans` can
 * tell a command whose agent died (in this PID namespace) from one whose agent still runs, also
 * when another process has since taken the agent's pid.
 */
export function newMarker(): string {
  if (!hooked) {
    hooked = true;
    started = startTime(process.pid) ?? "";
    // Recorded before the first process starts (`agents.ts`); forgotten once its processes end.
    const record = recordAgent(agentsFolder(), pidNamespace());
    process.on("exit", () => {
      endCommands([...live.keys()]);
      if (record) rmSync(record, { force: true });
    });
  }
  return `${pidNamespace()}:${process.pid}:${started}:${nodeCrypto().randomUUID()}`;
}

/** This process's start time, as its markers carry it. */
let started = "";

/** Records a running command; its processes are ended at exit if it has not ended by then. */
export function trackCommand(marker: string, group: number): void {
  live.set(marker, group);
}

/**
 * SIGKILLs the commands' process groups, every process in their sessions and every process
 * carrying one of their markers.
 */
export function endCommands(markers: string[]): void {
  if (markers.length === 0) return;
  const sessions = new Set<number>();
  for (const marker of markers) {
    const group = live.get(marker);
    if (group !== undefined) {
      kill(-group);
      sessions.add(group);
    }
    live.delete(marker);
  }
  const ending = new Set(markers);
  killFound(
    ({ marker, session }) =>
      (marker !== undefined && ending.has(marker)) ||
      (session !== undefined && sessions.has(session)),
  );
}

/**
 * Ends processes left by a mini-agent that died without running its exit hook (SIGKILL, a
 * crash): those whose marker names an agent pid of this PID namespace that no longer runs.
 * It reads the environment of every process on the machine, so its cost grows with their
 * number: it does so only when an agent recorded in `folder` is gone (`agents.ts`), and callers
 * run it once, off the start-up path (`sweepOrphansOnce`).
 */
export function sweepOrphans(folder = agentsFolder()): void {
  const namespace = pidNamespace();
  const { scan, gone } = goneAgents(folder, namespace);
  if (!scan) return;
  // A dead agent's marked process; then what shares its command's session, marked or not.
  const sessions = new Set<number>();
  killFound(({ marker, session }) => {
    if (marker !== undefined && agentGone(marker, namespace)) {
      if (session !== undefined) sessions.add(session);
      return true;
    }
    return session !== undefined && sessions.has(session);
  });
  forgetAgents(folder, gone);
}

/** Whether the agent a marker of this namespace names is gone (a marker of before: its pid). */
function agentGone(marker: string, namespace: string): boolean {
  const [space, agent, started, random] = marker.split(":");
  if (space !== namespace || agent === undefined) return false;
  if (random === undefined) return !running(Number(agent));
  return startTime(Number(agent)) !== started;
}

let swept = false;

/**
 * `sweepOrphans`, the first time it is called in this process: before the first command bash
 * runs, and wherever else a caller wants the sweep done at the latest (the CLI: before it exits).
 */
export function sweepOrphansOnce(folder = agentsFolder()): void {
  if (swept) return;
  swept = true;
  sweepOrphans(folder);
}

/** A process as the scan sees it: what of its marker and session could be read. */
interface Seen {
  pid: number;
  marker?: string;
  session?: number;
}

/**
 * SIGKILLs matching processes until a scan finds none (a few rounds: they may still fork).
 * `sessions`: whether the matcher needs each process's session (one more read per process).
 */
function killFound(matches: (seen: Seen) => boolean, sessions = true): void {
  if (process.platform !== "linux") return;
  for (let round = 0; round < 5; round++) {
    const found = scan(sessions).filter(matches);
    if (found.length === 0) return;
    for (const { pid } of found) kill(pid);
  }
}

/** Every process but this one, with its marker (when its environment is readable) and session. */
function scan(sessions: boolean): Seen[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  return names
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .map((name) => {
      const seen: Seen = { pid: Number(name) };
      const marker = markerIn(`/proc/${name}/environ`);
      if (marker) seen.marker = marker;
      const session = sessions ? sessionOf(read(`/proc/${name}/stat`)) : undefined;
      if (session !== undefined) seen.session = session;
      return seen;
    });
}

const ENTRY = Buffer.from(`${RUN_VARIABLE}=`, "latin1");
/** One buffer for every environment read: the scan is synchronous. */
let environ = Buffer.alloc(0);

/**
 * The marker in a process's environment (`/proc/<pid>/environ`: NUL-separated entries), found
 * in its bytes without decoding the rest.
 */
function markerIn(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  let length = 0;
  try {
    for (;;) {
      if (length === environ.length) {
        const larger = Buffer.allocUnsafe(Math.max(64 * 1024, environ.length * 2));
        environ.copy(larger, 0, 0, length);
        environ = larger;
      }
      const n = readSync(fd, environ, length, environ.length - length, null);
      if (n === 0) break;
      length += n;
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  const bytes = environ.subarray(0, length);
  for (let at = bytes.indexOf(ENTRY); at !== -1; at = bytes.indexOf(ENTRY, at + 1)) {
    if (at > 0 && bytes[at - 1] !== 0) continue;
    const start = at + ENTRY.length;
    const end = bytes.indexOf(0, start);
    return bytes.toString("latin1", start, end === -1 ? length : end);
  }
  return undefined;
}

/** The session id in a `/proc/<pid>/stat` line: the fourth field after the `(comm)`. */
function sessionOf(stat: string | undefined): number | undefined {
  const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
  const session = Number(fields?.[3]);
  return Number.isInteger(session) && session > 0 ? session : undefined;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return undefined;
  }
}

let namespaceId: string | undefined;

function pidNamespace(): string {
  if (namespaceId === undefined) {
    try {
      namespaceId = readlinkSync("/proc/self/ns/pid").replace(/\D/g, "");
    } catch {
      namespaceId = "";
    }
  }
  return namespaceId;
}

/** Whether `pid` names a live process (one of another user's counts). */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** SIGKILL to `pid` (a negative pid: a process group), ignoring one already gone. */
export function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
