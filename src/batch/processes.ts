import { readFileSync } from "node:fs";

/**
 * A process known for sure: its pid, its start time (in clock ticks since boot, from
 * `/proc/PID/stat`) and the boot it ran in, so a pid taken again by another process, or a
 * record from before a reboot, is never mistaken for the child a batch started.
 */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
  bootId: string;
}

let boot: string | undefined;

/** This boot's id (`/proc/sys/kernel/random/boot_id`), or `unknown` off Linux. */
export function bootId(): string {
  if (boot === undefined) {
    try {
      boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      boot = "unknown";
    }
  }
  return boot;
}

/** Field 22 of `/proc/PID/stat` (after the name, which may hold spaces), or undefined. */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

export function identify(pid: number): ProcessIdentity {
  return { pid, startTime: startTimeOf(pid) ?? "unknown", bootId: bootId() };
}

/** Whether the process recorded is the one still running. */
export function stillRunning(identity: ProcessIdentity): boolean {
  return (
    identity.bootId === bootId() &&
    identity.startTime !== "unknown" &&
    startTimeOf(identity.pid) === identity.startTime
  );
}

/**
 * Ends what is left of a recorded child's group: the child itself if it still runs, or members
 * of its group whose leader is gone (no process holds that pid, yet the group answers). A pid
 * taken by another process is left alone.
 */
export function endLeftover(identity: ProcessIdentity): boolean {
  if (identity.bootId !== bootId()) return false;
  const leaderGone = startTimeOf(identity.pid) === undefined;
  if (!stillRunning(identity) && !(leaderGone && groupExists(identity.pid))) return false;
  signalGroup(identity.pid, "SIGKILL");
  return true;
}

function groupExists(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends `signal` to the process group `pid` leads; a group already gone is no error. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing of the group is left.
  }
}
