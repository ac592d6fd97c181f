import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * Ends every process a bash command started, on every way out: the command's end, a timeout,
 * an abort, and mini-agent's own exit through `process.exit` (a synchronous `exit` hook).
 *
 * Each command runs in its own process group, and with `MINI_AGENT_RUN=<marker>` in its
 * environment. Ending a command SIGKILLs the group, then (on Linux) every process whose
 * environment still carries the marker: that catches what left the group with `setsid`. A
 * process that also drops the variable escapes both; elsewhere than Linux only the group is
 * ended. Inside bwrap the PID namespace and `--die-with-parent` end everything anyway.
 */
export const RUN_VARIABLE = "MINI_AGENT_RUN";

/** Live commands: marker → process group id. */
const live = new Map<string, number>();
let hooked = false;

/**
 * A new marker: `<pid namespace>:<agent pid>:<random>`, so `sweepOrphans` can tell a command
 * whose agent died (in this PID namespace) from one whose agent still runs.
 */
export function newMarker(): string {
  return `${pidNamespace()}:${process.pid}:${randomUUID()}`;
}

/** Records a running command; its processes are ended at exit if it has not ended by then. */
export function trackCommand(marker: string, group: number): void {
  live.set(marker, group);
  if (!hooked) {
    hooked = true;
    process.on("exit", () => endCommands([...live.keys()]));
  }
}

/** SIGKILLs the commands' process groups and every process carrying one of their markers. */
export function endCommands(markers: string[]): void {
  for (const marker of markers) {
    const group = live.get(marker);
    if (group !== undefined) kill(-group);
    live.delete(marker);
  }
  const ending = new Set(markers);
  killMarked((marker) => ending.has(marker));
}

/**
 * Ends processes left by a mini-agent that died without running its exit hook (SIGKILL, a
 * crash): those whose marker names an agent pid of this PID namespace that no longer runs.
 */
export function sweepOrphans(): void {
  const namespace = pidNamespace();
  killMarked((marker) => {
    const [space, agent] = marker.split(":");
    return space === namespace && agent !== undefined && !running(Number(agent));
  });
}

/** SIGKILLs marked processes until a scan finds none (a few rounds: they may still fork). */
function killMarked(matches: (marker: string) => boolean): void {
  if (process.platform !== "linux") return;
  for (let round = 0; round < 5; round++) {
    const found = markedProcesses().filter(([, marker]) => matches(marker));
    if (found.length === 0) return;
    for (const [pid] of found) kill(pid);
  }
}

const ENTRY = `${RUN_VARIABLE}=`;

/** `[pid, marker]` of every process (other than this one) whose environment has a marker. */
function markedProcesses(): [number, string][] {
  const found: [number, string][] = [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return found;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${name}/environ`, "latin1");
    } catch {
      continue;
    }
    const marker = environ
      .split("\0")
      .find((entry) => entry.startsWith(ENTRY))
      ?.slice(ENTRY.length);
    if (marker) found.push([Number(name), marker]);
  }
  return found;
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
