import type { ModelClient, ModelEvent, ModelRequest } from "../types.js";

/**
 * `--token-budget N`: the run's token budget (input plus output, as the provider reports them,
 * every request counted: rounds, retries and compaction summaries).
 *
 * The rule, checked before each request: the request is sent only when the tokens used so far
 * plus the previous request's own tokens (its input plus its output) are at most the budget. The
 * next request reads at least everything the previous one read and wrote (the history only
 * grows), so that sum is the least the run will have used once it is answered. The first request
 * is always sent. The last request sent can take the total past the budget: the budget decides
 * when to stop asking, it does not cut an answer short.
 */
export class BudgetClient implements ModelClient {
  private used = 0;
  private previous = 0;

  constructor(
    private readonly inner: ModelClient,
    readonly budget: number,
  ) {}

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    if (this.used + this.previous > this.budget)
      throw new BudgetExceeded(this.budget, this.used, this.previous);
    for await (const event of this.inner.stream(request)) {
      if (event.type === "done" && event.usage) {
        this.previous = event.usage.inputTokens + event.usage.outputTokens;
        this.used += this.previous;
      }
      yield event;
    }
  }
}

/**
 * The next request would exceed the budget, so it was not sent. Thrown before a round begins,
 * when every call of the round before has its result: the history is valid as it stands.
 */
export class BudgetExceeded extends Error {
  override readonly name = "BudgetExceeded";

  constructor(
    readonly budget: number,
    readonly used: number,
    readonly next: number,
  ) {
    super(
      `token budget reached: ${used} tokens used, the next request needs at least ${next} more, the budget is ${budget} (--token-budget)`,
    );
  }
}

/** Whether `error`, or what caused it (a compaction whose summary request was refused), is a budget stop. */
export function budgetStop(error: unknown): BudgetExceeded | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof BudgetExceeded) return cause;
  }
  return undefined;
}
