import type { RE2JS } from "re2js";

/**
 * re2js, the engine every pattern and glob of the search tools runs on, loaded by the first
 * search (`loadRE2`): its start-up costs a run about a millisecond, and most turns search
 * nothing. The functions that compile patterns stay synchronous and take it from `re2()`.
 */
let engine: typeof RE2JS | undefined;

/** Loads re2js once; `find`, `grep` and `.gitignore` compiling await it before any pattern. */
export async function loadRE2(): Promise<void> {
  engine ??= (await import("re2js")).RE2JS;
}

/** re2js, once `loadRE2` has run; a call before it is a defect of the caller. */
export function re2(): typeof RE2JS {
  if (engine === undefined) throw new Error("re2js used before loadRE2()");
  return engine;
}
