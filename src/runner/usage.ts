import type { ModelClient, ModelEvent, ModelRequest, Usage } from "../types.js";

/**
 * Adds up the usage each model request reports, for the `json` and `stream-json` results and the
 * status line, and hands each request's own usage to `record` (the CLI writes it to the session
 * and to the `usage` event of `stream-json`) before the round's `done` goes on. Keeps the last
 * request's usage and counts the requests that reported one.
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
        this.usage.inputTokens += event.usage.inputTokens;
        this.usage.outputTokens += event.usage.outputTokens;
        this.usage.cacheReadTokens =
          (this.usage.cacheReadTokens ?? 0) + (event.usage.cacheReadTokens ?? 0);
        this.usage.cacheWriteTokens =
          (this.usage.cacheWriteTokens ?? 0) + (event.usage.cacheWriteTokens ?? 0);
        if (event.usage.reasoningTokens !== undefined)
          this.usage.reasoningTokens =
            (this.usage.reasoningTokens ?? 0) + event.usage.reasoningTokens;
        this.last = event.usage;
        this.rounds++;
        await this.record(event.usage);
      }
      yield event;
    }
  }
}
