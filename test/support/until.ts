import type { ChildProcess } from "node:child_process";
import { setTimeout as pause } from "node:timers/promises";

/**
 * How tests wait: for a fact, never for a time. This module is the one place in `test/` where a
 * timer may stand (the sleep check, `scripts/check-test-sleeps.mjs`, holds every other file to
 * it, apart from the time-bound tests docs/internals.md lists). A timeout here never paces a
 * test: it only turns a hang into a failure that names what never came.
 */

export interface UntilOptions {
  /** The fact in words, for the error; the check's own source when not given. */
  what?: string;
  /** How often the fact is looked at again: 20 ms unless a race needs a closer look. */
  everyMs?: number;
}

/**
 * Resolves once `check` holds, looking again every `everyMs`; rejects, naming the fact, when it
 * still does not hold after `timeoutMs`.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  { what = check.toString(), everyMs = 20 }: UntilOptions = {},
): Promise<void> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (performance.now() >= end)
      throw new Error(`until: ${what} did not hold after ${timeoutMs} ms`);
    await pause(everyMs);
  }
}

/**
 * Sends `signal` to `child` once `fact` holds, unless the child has ended first: how a test stops
 * a process at a chosen point (a request received, a line written). When the fact never comes
 * the child is killed and the run fails with `until`'s error.
 */
export function signalWhen(
  child: ChildProcess,
  fact: () => boolean | Promise<boolean>,
  signal: NodeJS.Signals,
  options: UntilOptions = {},
): void {
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  void until(async () => ended() || (await fact()), 20_000, {
    what: fact.toString(),
    ...options,
  }).then(
    () => {
      if (!ended()) child.kill(signal);
    },
    (error: unknown) => {
      child.kill("SIGKILL");
      throw error;
    },
  );
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
