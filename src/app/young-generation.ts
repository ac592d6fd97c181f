import type { TurnEvent } from "../runner/events.js";

/**
 * Keeps V8's young generation at the size it has when a long answer begins to stream.
 *
 * V8 doubles its young generation each time enough of it has survived its collections, up to
 * 32 MB on 64-bit Node. A long streamed answer keeps some of every collection alive (the events
 * in flight), so the young generation grows to its largest on the way, and the network buffers
 * that die young wait that much longer for a collection to free them: 30-50 MB more at the
 * peak of a 50 MB answer, on top of the answer itself. Told to grow it no more
 * (`--semi-space-growth-factor=1`), V8 collects it more often, each time about as quickly (a
 * collection's work is what survives, not what died).
 *
 * Set when the answers streamed in this process pass `LONG` units, not when a run or a turn
 * starts: any flag set then cost a short run 7 MB and tens of milliseconds (V8 checks a code
 * cache against its flags, so Node's built-in modules loaded after are compiled anew), and by
 * the time an answer streams, the CLI has loaded them. `--max-semi-space-size` is not taken up
 * at run time.
 */
export class YoungGeneration {
  private streamed = 0;
  private held = false;

  /** `setFlags`: how V8's flags are set (tests give their own). */
  constructor(
    private readonly setFlags: (flags: string) => void | Promise<void> = setV8Flags,
    private readonly long = LONG,
  ) {}

  /** Counts a turn's streamed text; past `long` units in all, V8 is told, once. */
  watch(event: TurnEvent): void {
    if (this.held || (event.type !== "text" && event.type !== "thinking")) return;
    this.streamed += event.text.length;
    if (this.streamed < this.long) return;
    this.held = true;
    holdYoungGeneration(this.setFlags);
  }
}

/**
 * Tells V8 to grow its young generation no more, from now on. A process that runs long and keeps
 * some of every collection alive (`mini-agent batch`, its children's streams and handles in
 * flight) calls it once its modules are loaded, as a long answer does through `YoungGeneration`.
 */
export function holdYoungGeneration(
  setFlags: (flags: string) => void | Promise<void> = setV8Flags,
): void {
  // Only memory is at stake: a runtime that refuses the flag runs as before.
  Promise.resolve()
    .then(() => setFlags(HOLD))
    .catch(() => {});
}

/** Past this many units (64 Ki) an answer is long: the young generation has not grown yet. */
const LONG = 1 << 16;
const HOLD = "--semi-space-growth-factor=1";

async function setV8Flags(flags: string): Promise<void> {
  (await import("node:v8")).setFlagsFromString(flags);
}

/** The one of this process, as V8's flags are: the CLI's turns and the editor's prompts tell it. */
export const youngGeneration = new YoungGeneration();
