import { setTimeout as pause } from "node:timers/promises";

/**
 * How tests wait: for a fact, never for a time. This module is the one place in `test/` where a
 * timer may stand (the sleep check, `scripts/check-test-sleeps.mjs`, holds every other file to
 * it, apart from the time-bound tests docs/internals.md lists). A timeout here never paces a
 * test: it only turns a hang into a failure that names what never came.
 */

/** How often a fact is looked at again. */
const pollMs = 20;

/**
 * Resolves once `check` holds, looking again every 20 ms; rejects, naming the fact (`what`, or
 * the check's own source), when it still does not hold after `timeoutMs`.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  what = check.toString(),
): Promise<void> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (performance.now() >= end)
      throw new Error(`until: ${what} did not hold after ${timeoutMs} ms`);
    await pause(pollMs);
  }
}

/**
 * A guard against a hang: `onExpire` runs if the test is still waiting after `ms` (it then fails
 * anyway, e.g. a child killed). Returns the function that disarms it once the awaited end came.
 */
export function watchdog(ms: number, onExpire: () => void): () => void {
  const timer = setTimeout(onExpire, ms);
  return () => clearTimeout(timer);
}

/**
 * Calls `sample` every `everyMs` (e.g. to keep the peak of a measure while work runs); returns
 * the function that stops it. It measures; it is never a way to wait.
 */
export function sampleEvery(everyMs: number, sample: () => void): () => void {
  const timer = setInterval(sample, everyMs);
  return () => clearInterval(timer);
}
