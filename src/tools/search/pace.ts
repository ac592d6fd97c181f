/**
 * Keeps a long tool call responsive: `step` counts units of work and, every `every` units, lets
 * the event loop run (a Ctrl-C, a timer) and throws once the signal is aborted. Work between two
 * pauses is bounded, so an abort stops the call within a fraction of a second.
 */
export class Pace {
  private done = 0;

  constructor(
    readonly signal: AbortSignal | undefined,
    private readonly every = 256,
  ) {}

  async step(units = 1): Promise<void> {
    this.done += units;
    if (this.done < this.every) return;
    this.done = 0;
    await nextTurn();
    this.check();
  }

  /** Throws when the signal is aborted. */
  check(): void {
    if (this.signal?.aborted) throw new Error("aborted");
  }
}

/** The next turn of the event loop (not `node:timers/promises`: one module fewer to load). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
