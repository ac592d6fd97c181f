import type { ModelClient, ModelEvent, ModelRequest, Usage } from "../types.js";

/**
 * Adds up the usage each model request reports, for the `json` and `stream-json` results and the
 * status line, and hands each request's own usage to `record` (the CLI writes it to the session
 * and to the `usage` event of `stream-json`) before the round's `done` goes on. Keeps the last
 * request's usage and counts the requests that reported one. Every figure is clamped to a whole
 * number of at least zero first (`wholeUsage`): a broken or hostile proxy's negative count would
 * otherwise lower the totals and defeat the token budget, which counts after this.
 */
export class CountingClient implements ModelClient {
  readonly usage: Usage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  last: Usage | undefined;
  rounds = 0;

  constructor(
    private readonly inner: ModelClient,
    private readonly record: (usage: Usage) => Promise<void> = async () => {},
  ) {}

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    for await (const event of this.inner.stream(request)) {
      if (event.type === "done" && event.usage) {
        const usage = wholeUsage(event.usage);
        this.usage.inputTokens += usage.inputTokens;
        this.usage.outputTokens += usage.outputTokens;
        this.usage.cacheReadTokens =
          (this.usage.cacheReadTokens ?? 0) + (usage.cacheReadTokens ?? 0);
        this.usage.cacheWriteTokens =
          (this.usage.cacheWriteTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
        if (usage.reasoningTokens !== undefined)
          this.usage.reasoningTokens = (this.usage.reasoningTokens ?? 0) + usage.reasoningTokens;
        this.last = usage;
        this.rounds++;
        await this.record(usage);
        yield { ...event, usage };
        continue;
      }
      yield event;
    }
  }
}

/** `usage` with each figure a whole number of at least zero: a missing, NaN or infinite one is 0. */
export function wholeUsage(usage: Usage): Usage {
  const whole = (n: unknown): number =>
    typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
  const clamped: Usage = {
    inputTokens: whole(usage.inputTokens),
    outputTokens: whole(usage.outputTokens),
  };
  for (const key of ["cacheReadTokens", "cacheWriteTokens", "reasoningTokens"] as const) {
    if (usage[key] !== undefined) clamped[key] = whole(usage[key]);
  }
  return clamped;
}
