import { readdir, readFile } from "node:fs/promises";

/** Command lines of running processes that contain `marker`. */
export async function processesWith(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(marker) && pid !== String(process.pid))
      found.push(cmdline.replaceAll("\0", " "));
  }
  return found;
}
