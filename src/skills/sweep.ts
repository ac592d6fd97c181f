import { lstatSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** How long a skill cache no look used is kept. */
export const staleAfterMs = 30 * 24 * 60 * 60 * 1000;
/** The sweep runs at most this often (the time of the folder's `.swept` file). */
const SWEEP_EVERY_MS = 24 * 60 * 60 * 1000;
/** A leftover temporary file (a write that died) older than this is removed. */
const TEMPORARY_MS = 60 * 60 * 1000;
const CACHE = /^[0-9a-f]{32}\.json$/;
const TEMPORARY = /^\..*\.tmp$/;
/** Files the sweep looks at, at most, each time. */
export const sweepLimit = 1000;

/**
 * Removes from the skill caches' folder `dir` the caches no look used for `staleAfterMs` (a cache
 * in use is written or stamped at least once a day: `SkillCache.save`) and temporary files a
 * write left behind, at most once a day and looking at `sweepLimit` entries at most: a bounded
 * cost, paid by a run that writes a cache. Links and folders are left alone. Best effort: what
 * cannot be removed stays.
 */
export function sweepCaches(dir: string, now = Date.now()): void {
  try {
    const marker = join(dir, ".swept");
    const last = lstatSync(marker, { throwIfNoEntry: false });
    if (last?.isFile() && last.mtimeMs <= now && now - last.mtimeMs < SWEEP_EVERY_MS) return;
    rmSync(marker, { force: true });
    writeFileSync(marker, "", { flag: "wx", mode: 0o600 });
    utimesSync(marker, new Date(now), new Date(now));
    const names = readdirSync(dir).filter((name) => CACHE.test(name) || TEMPORARY.test(name));
    for (const name of names.slice(0, sweepLimit)) {
      const temporary = TEMPORARY.test(name);
      const path = join(dir, name);
      const info = lstatSync(path, { throwIfNoEntry: false });
      if (info?.isFile() && now - info.mtimeMs > (temporary ? TEMPORARY_MS : staleAfterMs))
        rmSync(path, { force: true });
    }
  } catch {
    // A folder that cannot be swept keeps its files: they cost room, nothing else.
  }
}
