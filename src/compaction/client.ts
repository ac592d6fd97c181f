import { normalizeHistory } from "../history/normalize.js";
import { historyProblem } from "../history/valid.js";
import { ProviderError } from "../providers/provider-error.js";
import type { Message, ModelClient, ModelEvent, ModelRequest, Usage } from "../types.js";
import { chooseCut } from "./cut.js";
import { factsOf, mergeFacts, noFacts } from "./facts.js";
import { type Compaction, CompactionError } from "./record.js";
import {
  charsPerToken,
  type ImageTokenRule,
  messagesTokens,
  requestTokens,
  textTokens,
} from "./size.js";
import { requestSummary, summaryPrompt, summaryRequestText } from "./summary.js";
import { capped, projectedMessages, userMessageCap } from "./view.js";

export interface CompactingOptions {
  /**
   * The model's context window in tokens. Without it, nothing is compacted for size until the
   * provider refuses a request as too long and names its maximum.
   */
  contextWindow?: number;
  /** Tokens kept free below the window for the answer and estimation error. Default: the
   * smaller of 16 384 and a quarter of the window. */
  reserve?: number;
  /**
   * Called with each compaction before it takes effect, and awaited: persist it here. If it
   * throws, the compaction is dropped, the conversation stays as it was, and the error propagates.
   */
  onCompaction?: (compaction: Compaction) => void | Promise<void>;
  /** The last compaction of a resumed conversation; the history given starts at its first kept message. */
  resume?: Compaction;
  /** Characters of each covered user message kept verbatim (default 4000; head and tail beyond). */
  userMessageCap?: number;
  /**
   * Whose rule counts an image's tokens from its pixel size: `anthropic` or `openai` (Chat
   * Completions and Responses); without it, the larger of the two (`imageTokens`).
   */
  imageRule?: ImageTokenRule;
}

/** The recent turns keep at most this share of the limit (or of the request, if smaller) verbatim. */
const keptShare = 0.25;
/** A compaction must bring the request to at most this share of the limit … */
const afterShareOfLimit = 0.75;
/** … and of its size before, or it failed. */
const afterShareOfBefore = 0.9;

type Trigger = Compaction["trigger"];

interface Measure {
  /** Input tokens the provider reported for the request, cache reads and writes included. */
  tokens: number;
  /** Messages of the history that request carried, and the compaction it was built on. */
  length: number;
  keptFrom: number;
}

/**
 * A `ModelClient` that wraps another and decides what the model sees: the history as it is until
 * it nears the context window, then a compacted view: the caller's system prompt untouched, one
 * user message with the user's earlier messages verbatim (up to a cap), the facts read from the
 * tool results and the model's structured summary, then the recent turns verbatim. The cut is
 * made only where every call has its result on its own side. The loop and its history are not
 * changed: the history passed must only grow by appending (as `runAgent`'s does).
 *
 * It compacts before a request whose estimated size (the provider's count for the last request
 * plus 1 token per 4 characters added since, scaled by how much the provider counted over the
 * estimate) passes the window minus the reserve; when the provider refuses a request as too long
 * (compact, retry that request once); and on `compact()`. A compaction that fails (the summary
 * request fails, or the request does not shrink to at most 90% of its size and 75% of the
 * limit) throws a `CompactionError` and changes nothing: it never loops. One whose note would be
 * over that bound even with an empty summary (a short session) fails before the summary request.
 */
export class CompactingClient implements ModelClient {
  private compaction: Compaction | undefined;
  /** Index, in the normalized history, of the first message kept verbatim. */
  private keptFrom = 0;
  /** The number, among user and assistant messages, of the history's first message. */
  private base: number;
  private measured: Measure | undefined;
  /** How many times more the provider counted than the estimate, at least 1. */
  private scale = 1;
  /** A refusal for length came after part of the answer had streamed: compact before the next request. */
  private pending = false;
  private window: number | undefined;

  constructor(
    private readonly inner: ModelClient,
    private readonly options: CompactingOptions = {},
  ) {
    this.compaction = options.resume;
    this.base = options.resume?.firstKept ?? 0;
    this.window = options.contextWindow;
  }

  /**
   * The history was replaced (a rewind took the conversation back): from now on it starts at
   * `resume`'s first kept message, or at the beginning without one, and nothing measured before
   * counts.
   */
  restart(resume: Compaction | undefined): void {
    this.compaction = resume;
    this.base = resume?.firstKept ?? 0;
    this.keptFrom = 0;
    this.measured = undefined;
    this.pending = false;
  }

  private get rule(): ImageTokenRule | undefined {
    return this.options.imageRule;
  }

  /** The compaction in effect, if any. */
  get current(): Compaction | undefined {
    return this.compaction;
  }

  /** The window minus the reserve: the size a request may reach before it is compacted. */
  get limit(): number | undefined {
    if (this.window === undefined) return undefined;
    return this.window - (this.options.reserve ?? Math.min(16_384, Math.floor(this.window / 4)));
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const messages = this.history(request);
    if (this.pending) await this.compactNow(request, messages, "overflow");
    else {
      const limit = this.limit;
      const size = this.estimate(request, messages);
      if (limit !== undefined && size > limit)
        await this.compactNow(request, messages, "size", size);
    }
    for (let retried = false; ; retried = true) {
      const projected = this.project(request, messages);
      let streamed = false;
      try {
        for await (const event of this.inner.stream(projected)) {
          if (event.type === "done" && event.usage) this.measure(projected, event.usage, messages);
          streamed = true;
          yield event;
        }
        return;
      } catch (error) {
        const overflow =
          !request.signal?.aborted && error instanceof ProviderError ? error.tooLong : undefined;
        if (!overflow) throw error;
        if (overflow.maximum !== undefined && overflow.maximum < (this.window ?? Infinity))
          this.window = overflow.maximum;
        if (overflow.tokens !== undefined) this.calibrate(overflow.tokens, projected);
        if (streamed) {
          this.pending = true;
          throw error;
        }
        if (retried)
          throw new CompactionError(
            "compaction failed: the provider still refuses the request as too long after compacting",
            { cause: error },
          );
        await this.compactNow(request, messages, "overflow", overflow.tokens).catch((failure) => {
          if (!(failure instanceof CompactionError) || failure.cause !== undefined) throw failure;
          throw new CompactionError(failure.message, { cause: error });
        });
      }
    }
  }

  /** Compacts now (`/compact`), with what the user asked the summary to keep in view. */
  async compact(request: ModelRequest, instructions?: string): Promise<Compaction> {
    return this.compactNow(request, this.history(request), "manual", undefined, instructions);
  }

  private history(request: ModelRequest): Message[] {
    const messages = normalizeHistory([...request.messages]).messages;
    if (this.keptFrom > messages.length || messages[this.keptFrom]?.role === "tool") {
      throw new Error(
        "CompactingClient: the history changed before its compacted part; pass the same history, only appended to",
      );
    }
    return messages;
  }

  private project(request: ModelRequest, messages: Message[]): ModelRequest {
    if (!this.compaction) return { ...request, messages };
    const projected = projectedMessages(this.compaction, messages, this.keptFrom);
    const problem = historyProblem(projected);
    if (problem) throw new Error(`CompactingClient built an invalid request: ${problem}`);
    return { ...request, messages: projected };
  }

  private estimate(request: ModelRequest, messages: Message[]): number {
    const last = this.measured;
    if (last && last.keptFrom === this.keptFrom && last.length <= messages.length)
      return (
        last.tokens +
        Math.ceil(this.scale * messagesTokens(messages, last.length, messages.length, this.rule))
      );
    return Math.ceil(this.scale * requestTokens(this.project(request, messages), this.rule));
  }

  private measure(projected: ModelRequest, usage: Usage, messages: Message[]): void {
    const tokens = usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
    this.calibrate(tokens, projected);
    this.measured = { tokens, length: messages.length, keptFrom: this.keptFrom };
  }

  /** Scales estimates by how much more the provider counted for `projected` (1 to 4 times). */
  private calibrate(counted: number, projected: ModelRequest): void {
    const estimated = requestTokens(projected, this.rule);
    if (estimated > 0) this.scale = Math.min(4, Math.max(1, counted / estimated));
  }

  private async compactNow(
    request: ModelRequest,
    messages: Message[],
    trigger: Trigger,
    knownSize?: number,
    instructions?: string,
  ): Promise<Compaction> {
    const before = knownSize ?? this.estimate(request, messages);
    const limit = this.limit;
    const keep = (Math.min(limit ?? before, before) * keptShare) / this.scale;
    const cut = chooseCut(messages, this.keptFrom, keep, this.rule);
    if (cut === undefined)
      throw new CompactionError(
        trigger === "manual"
          ? `nothing to compact yet: the whole conversation (${before} tokens) is its last turn`
          : "compaction failed: there is nothing before the last turn to compact",
      );
    const covered = messages.slice(this.keptFrom, cut);
    const previous = this.compaction;
    const cap = this.options.userMessageCap ?? userMessageCap;
    const bound = Math.floor(
      Math.min(before * afterShareOfBefore, (limit ?? Infinity) * afterShareOfLimit),
    );
    const tooBig = (tokensAfter: number, atLeast: string) => {
      const why = `over the bound of ${bound} (90% of the ${before} before${limit === undefined ? "" : `, and 75% of the limit ${limit}`})`;
      return new CompactionError(
        trigger === "manual"
          ? `nothing to compact yet: the conversation is ${before} tokens, and a summary would leave ${atLeast}${tokensAfter}, ${why}`
          : `compaction failed: it would leave ${atLeast}${tokensAfter} tokens, ${why}, not enough to go on`,
      );
    };
    const candidate: Compaction = {
      firstKept: this.base + messages.slice(0, cut).filter((m) => m.role !== "tool").length,
      count: (previous?.count ?? 0) + 1,
      trigger,
      userMessages: [
        ...(previous?.userMessages ?? []),
        ...covered.flatMap((m) => (m.role === "user" ? [capped(m.content, cap)] : [])),
      ],
      facts: mergeFacts(previous?.facts ?? noFacts, factsOf(covered)),
      summary: "",
      tokensBefore: before,
      tokensAfter: 0,
    };
    const sizeWith = (compaction: Compaction) =>
      Math.ceil(
        this.scale *
          requestTokens(
            { ...request, messages: projectedMessages(compaction, messages, cut) },
            this.rule,
          ),
      );
    // The note without a summary is the least a compaction can leave: when even that is over
    // the bound (a short session), no summary is asked for, to be paid for and thrown away.
    const least = sizeWith(candidate);
    if (least > bound) throw tooBig(least, "at least ");
    const room = limit === undefined ? Number.MAX_SAFE_INTEGER : limit / this.scale;
    const text = summaryRequestText({
      ...(previous && { previous: previous.summary }),
      covered,
      ...(instructions && { instructions }),
      maxChars: Math.max(0, Math.floor((room * 0.8 - textTokens(summaryPrompt)) * charsPerToken)),
    });
    candidate.summary = await requestSummary(this.inner, text, request.signal);
    candidate.tokensAfter = sizeWith(candidate);
    if (candidate.tokensAfter > bound) throw tooBig(candidate.tokensAfter, "");
    const projected = projectedMessages(candidate, messages, cut);
    const problem = historyProblem(projected);
    if (problem) throw new Error(`CompactingClient built an invalid request: ${problem}`);
    await this.options.onCompaction?.(candidate);
    this.compaction = candidate;
    this.keptFrom = cut;
    this.measured = undefined;
    this.pending = false;
    return candidate;
  }
}
