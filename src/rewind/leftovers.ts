import { lstat, readdir, realpath, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { within } from "../paths.js";

/** The temporary name a file is written under before its rename (`createTempBeside`). */
const TEMP_NAME = /^\.mini-agent-[0-9a-f]{12}\.tmp$/;

/**
 * Removes what a killed write left beside the files a rewind puts back: in the folders of `paths`
 * (relative to the workspace's real root) that are still where they were (not a link elsewhere),
 * the regular files with mini-agent's own temporary name, and nothing else. A rewind does this
 * before it puts files back, so running a killed one again leaves no temporary file behind.
 */
export async function removeLeftovers(realRoot: string, paths: readonly string[]): Promise<void> {
  const folders = new Set(paths.map((path) => dirname(join(realRoot, path))));
  for (const folder of folders) {
    const real = await realpath(folder).catch(() => undefined);
    if (real !== folder || !within(realRoot, real)) continue;
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names.filter((entry) => TEMP_NAME.test(entry))) {
      const path = join(folder, name);
      const info = await lstat(path).catch(() => undefined);
      if (info?.isFile()) await unlink(path).catch(() => {});
    }
  }
}
