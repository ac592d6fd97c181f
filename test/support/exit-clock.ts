import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const preload = fileURLToPath(new URL("./exit-clock.mjs", import.meta.url));

/** What `exit-clock.mjs` reports: when each stop signal came and when the process exited. */
export interface ExitClock {
  signals: { name: string; atMs: number }[];
  exitAtMs: number;
}

/** `env` with `exit-clock.mjs` preloaded, reporting to `file` as the process exits. */
export function exitClockEnv(env: NodeJS.ProcessEnv, file: string): NodeJS.ProcessEnv {
  return { ...env, NODE_OPTIONS: `--import=${preload}`, EXIT_CLOCK_FILE: file };
}

/** How long the process ran, from its start to its exit, on its own clock (no spawn in it). */
export async function ranForMs(file: string): Promise<number> {
  return (await readClock(file)).exitAtMs;
}

const readClock = async (file: string): Promise<ExitClock> =>
  JSON.parse(await readFile(file, "utf8")) as ExitClock;

/**
 * The signals the process got, by name, and the milliseconds from the last of them to its exit,
 * on the process's own clock: a time bound measured from the event to the effect.
 */
export async function exitAfterLastSignal(
  file: string,
): Promise<{ signals: string[]; afterMs: number }> {
  const { signals, exitAtMs } = await readClock(file);
  return {
    signals: signals.map(({ name }) => name),
    afterMs: exitAtMs - (signals.at(-1)?.atMs ?? Number.NaN),
  };
}
