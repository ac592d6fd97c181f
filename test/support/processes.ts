import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { constants } from "node:os";
import { until } from "./until.js";

/**
 * Running processes (other than this one) whose command line contains `marker`, each as
 * `"<pid> <argv joined by spaces>"`. `/proc/<pid>/cmdline` separates the arguments with NUL
 * bytes, so they are joined with spaces before matching: `"sleep 314"` matches `sleep 314`.
 */
export async function processesWith(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    if (pid === String(process.pid)) continue;
    const raw = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    const cmdline = raw.replace(/\0$/, "").replaceAll("\0", " ");
    if (cmdline.includes(marker)) found.push(`${pid} ${cmdline}`);
  }
  return found;
}

/** Sends SIGKILL to every process `processesWith(marker)` finds; returns what it found. */
export async function killProcessesWith(marker: string): Promise<string[]> {
  const found = await processesWith(marker);
  for (const line of found) {
    try {
      process.kill(Number(line.split(" ")[0]), "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  return found;
}

/**
 * What still runs of `markers` once they had time to end: waits until none is running (a killed
 * process is gone a moment after its signal), then returns what is left, so a test asserts `[]`
 * and a failure, after `timeoutMs`, shows the survivors.
 */
export async function survivors(markers: string[], timeoutMs = 10_000): Promise<string[]> {
  const left = async () => (await Promise.all(markers.map(processesWith))).flat();
  await until(async () => (await left()).length === 0, timeoutMs).catch(() => undefined);
  return left();
}

/**
 * Whether process `pid` has a handler for `signal` (its `SigCgt` mask in `/proc`): Node installs
 * one when the program listens for the signal, so a test knows the program is ready for it.
 */
export function catches(pid: number, signal: NodeJS.Signals): boolean {
  let status = "";
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return false; // Gone.
  }
  const mask = BigInt(`0x${/^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? "0"}`);
  return ((mask >> BigInt(constants.signals[signal] - 1)) & 1n) === 1n;
}
