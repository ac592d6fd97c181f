import type { ModelClient, ModelEvent, ModelRequest, Usage } from "../types.js";

/**
 * Adds up the usage each round reports, for `--output-format json`, and hands each request's own
 * usage to `record` (the CLI writes it to the session) before the round's `done` goes on.
 */
export class CountingClient implements ModelClient {
  readonly usage: Usage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };

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
        await this.record(event.usage);
      }
      yield event;
    }
  }
}
