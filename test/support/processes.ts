import { readdir, readFile } from "node:fs/promises";

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
