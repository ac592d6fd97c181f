import { runAgent } from "../agent.js";
import { assertNever } from "../assert-never.js";
import { monotonicMs } from "../clock.js";
import { CompactingClient } from "../compaction/client.js";
import { type Compaction, CompactionError } from "../compaction/record.js";
import { normalizeHistory } from "../history/normalize.js";
import type { ImageAttachment } from "../images.js";
import { ProviderError } from "../providers/provider-error.js";
import type { FileChanges } from "../rewind/changes.js";
import type { ImagesRefusal } from "../session/records.js";
import { type PlanItem, planOf, planSetBy } from "../tools/plan.js";
import type { SeenFiles } from "../tools/seen.js";
import type {
  BeforeToolCall,
  Message,
  ModelClient,
  ModelEvent,
  ModelRequest,
  Tool,
  Usage,
} from "../types.js";
import { BudgetClient, budgetStop } from "./budget.js";
import type { SessionInfo, StopReason, TurnResult, TurnStatus } from "./events.js";
import { anthropicImageLimits, ImageBudgetClient, type ProviderImages } from "./image-budget.js";
import { ImageFallbackClient } from "./images.js";
import type { Journal, TurnListener } from "./journal.js";
import { type RetryPolicy, retryLostRound } from "./retry.js";
import { CountingClient } from "./usage.js";

export interface SessionRunnerOptions {
  /**
   * The provider's client. The runner wraps it, inside out: the usage of each request (made
   * whole, recorded), the token budget, compaction (recorded), and a round lost to a passing failure run again.
   */
  client: ModelClient;
  beforeToolCall?: BeforeToolCall;
  /** Where every event goes: the session file, then the running turn's listener. */
  journal: Journal;
  /**
   * What each turn starts with, asked once before it (and before `/compact`): the system prompt
   * (project instructions read again, say) and the turn's tools. The loop gets a frozen copy of
   * the list, so nothing changes the tools of a running turn.
   */
  turn: () => Promise<TurnStart>;
  /**
   * The system prompt alone, built again for the first request after a compaction made during a
   * turn (what it says of the compaction: the text of the skills used before it). Without it the
   * turn's prompt goes on as it was.
   */
  system?: () => Promise<string>;
  /** Announced in the first turn's `session` event; the id is the journal's session. */
  info: Omit<SessionInfo, "id">;
  /** A resumed session's valid history, and the compaction it was loaded from. */
  history?: Message[];
  resume?: Compaction;
  /** Model rounds allowed per turn, retried rounds not counted twice (default 50). */
  maxTurns?: number;
  /** `--token-budget`: the rule is `BudgetClient`'s. */
  tokenBudget?: number;
  /** The model's context window, for compaction by size; without it, only on refusal. */
  contextWindow?: number;
  /**
   * What the tracked `write`, `edit` and `bash` change (`FileChanges`, whose `wrap` made those tools):
   * told each turn's start and end and each call about to run, so it can record the changes.
   */
  changes?: FileChanges;
  /**
   * What the agent has seen of files: forgotten when a compaction cut the model's memory, and
   * recalled from the history a rewind goes back to (`SeenFiles`).
   */
  seen?: Pick<SeenFiles, "clear" | "recall">;
  /** Lost rounds: attempts and waits, and what removes secrets from a failure's reason. */
  retry?: { policy?: RetryPolicy; baseURL?: string; env?: NodeJS.ProcessEnv };
  /** The provider's name, kept with a refusal of images beside `info.model` (`ImageFallbackClient`). */
  provider?: string;
  /**
   * What the provider's API takes of images, from whoever built `client` (`anthropicImages`,
   * `openaiImages`): each request is kept within its limits, and compaction counts an image by its
   * rule. Without it, requests keep within Anthropic's limits (the stricter) and an image counts as
   * the larger of the two rules.
   */
  images?: ProviderImages;
  /** A resumed session's refusals of images: a provider and model listed gets placeholders. */
  imagesRefused?: readonly ImagesRefusal[];
  /** Milliseconds from a fixed point, for a turn's duration (`monotonicMs` unless a test sets it). */
  now?: () => number;
}

/** What a turn starts with: its system prompt and its tools. */
export interface TurnStart {
  system: string;
  tools: readonly Tool[];
}

export interface TurnOptions {
  signal?: AbortSignal;
  /** Images attached to the prompt (`--image`): sent after its text, placeholders in its text. */
  images?: readonly ImageAttachment[];
  /** Sees every event of the turn, each record after it was written. */
  onEvent?: TurnListener;
}

/**
 * One conversation that a front end drives a turn at a time: the history, the session it is
 * written to and the client stack around the provider. A turn normalises the history (a failed
 * turn may have left a call without its result), records the prompt, runs the loop with lost rounds
 * run again, and reports everything through one stream of `TurnEvent`s. It never throws for
 * what a turn can end in: the status says it, and `error` carries what was thrown.
 */
export class SessionRunner {
  /** Counts every request's tokens: the totals of the run. */
  readonly counter: CountingClient;
  readonly compacting: CompactingClient;
  private history: Message[];
  private announced = false;
  private running = false;
  /** The running turn's abort signal, for a policy that runs a process (a hook). */
  private turnSignal: AbortSignal | undefined;
  /** The system prompt the running turn was given, and the compaction in effect when built. */
  private turnSystem?: { text: string; builtFor: Compaction | undefined };
  /** That prompt built again after a compaction made during the turn. */
  private rebuilt?: { text: string; builtFor: Compaction | undefined };

  constructor(private readonly options: SessionRunnerOptions) {
    const { client, tokenBudget, contextWindow, resume, journal, seen } = options;
    const provider = options.provider ?? "";
    const { model } = options.info;
    const refusals = options.imagesRefused ?? [];
    const refused = refusals.some(
      (refusal) =>
        refusal.image === undefined && refusal.provider === provider && refusal.model === model,
    );
    // Innermost, the provider sees placeholders once it refused images; then the counter makes
    // each figure whole and non-negative before the budget adds it up.
    const fallback = new ImageFallbackClient(
      client,
      refused,
      (reason, image) =>
        journal.record({
          type: "images_refused",
          refusal: { provider, model, reason, ...(image !== undefined && { image }) },
        }),
      refusals.flatMap((refusal) => (refusal.image === undefined ? [] : [refusal.image])),
    );
    // Then each request keeps within its API's limits on images, the oldest held back.
    const images = new ImageBudgetClient(
      fallback,
      options.images?.limits ?? anthropicImageLimits,
      (count) => journal.record({ type: "images_held_back", count }),
      (part) => fallback.sends(part),
    );
    this.counter = new CountingClient(images, (usage) => journal.record({ type: "usage", usage }));
    const budgeted =
      tokenBudget === undefined ? this.counter : new BudgetClient(this.counter, tokenBudget);
    const prompted: ModelClient = { stream: (request) => this.withFreshSystem(budgeted, request) };
    const imageRule = options.images?.tokenRule;
    this.compacting = new CompactingClient(prompted, {
      ...(contextWindow !== undefined && { contextWindow }),
      ...(imageRule && { imageRule }),
      ...(resume && { resume }),
      onCompaction: async (compaction) => {
        await journal.record({ type: "compaction", compaction });
        // The model's memory was cut: what it saw of each file is gone, so edits need a new read.
        seen?.clear("compaction");
      },
    });
    this.history = options.history ?? [];
  }

  get messages(): readonly Message[] {
    return this.history;
  }

  get usage(): Usage {
    return this.counter.usage;
  }

  get sessionId(): string {
    return this.options.journal.sessionId ?? "";
  }

  /**
   * The abort signal of the turn running now (none between turns): what a `BeforeToolCall` that
   * waits on something (a hook's process) stops on, as the tools stop on theirs.
   */
  get signal(): AbortSignal | undefined {
    return this.turnSignal;
  }

  /**
   * One turn for `prompt`. One at a time: a turn asked for while another runs on this runner is
   * refused (the two would write one history and one session file).
   */
  async runTurn(prompt: string, turn: TurnOptions = {}): Promise<TurnResult> {
    if (this.running)
      throw new Error("a turn is already running on this runner: wait for it to end");
    this.running = true;
    this.turnSignal = turn.signal;
    try {
      return await this.oneTurn(prompt, turn);
    } finally {
      this.running = false;
      this.turnSignal = undefined;
    }
  }

  private async oneTurn(prompt: string, turn: TurnOptions): Promise<TurnResult> {
    const { journal, beforeToolCall, changes, maxTurns = 50, retry = {} } = this.options;
    const signal = turn.signal ?? new AbortController().signal;
    const stopListening = journal.listen(turn.onEvent);
    const now = this.options.now ?? monotonicMs;
    const started = now();
    const end = async (ended: Omit<TurnResult, "stop">): Promise<TurnResult> => {
      const result = { ...ended, stop: stopOf(ended.status, ended.error) };
      // A turn whose prompt never reached a session, or whose record could not be written,
      // leaves the file as it is: no record of its end either.
      if (journal.sessionId === undefined || journal.writeFailed) return result;
      const durationMs = Math.max(0, now() - started);
      try {
        await journal.record({ type: "turn_end", end: { status: result.status, durationMs } });
        return result;
      } catch (error) {
        // A turn that failed already says why; one that did not fails now, for the same reason.
        return result.status === "error"
          ? result
          : { status: "error", stop: "error", text: "", error };
      }
    };
    try {
      this.history = normalizeHistory(this.history).messages;
      await this.commit(userMessage(prompt, turn.images ?? []));
      if (!this.announced) {
        this.announced = true;
        const session = { id: this.sessionId, ...this.options.info };
        await journal.record({ type: "session", session });
      }
      const sessionPath = journal.sessionPath;
      if (changes && sessionPath) changes.startTurn(sessionPath, (event) => journal.record(event));
      const builtFor = this.compacting.current;
      const { system, tools } = await this.options.turn();
      const frozen = Object.freeze([...tools]);
      this.turnSystem = { text: system, builtFor };
      const start = this.history.length;
      const result = await retryLostRound({
        client: this.compacting,
        signal,
        ...retry,
        historyLength: () => this.history.length,
        notify: (notice) => journal.record({ type: "retry", notice }),
        run: (client) =>
          runAgent({
            client,
            tools: frozen,
            system,
            messages: this.history,
            ...(beforeToolCall && { beforeToolCall }),
            signal,
            maxTurns: maxTurns - this.history.slice(start).filter(isRound).length,
            onEvent: (event) => {
              if (event.type === "message") return this.commitAndTell(event.message);
              if (event.type === "tool_start") changes?.callStarting(event.call);
              return journal.record(event);
            },
          }),
      });
      return await end({ status: result.status, text: result.text });
    } catch (error) {
      return await end({ status: failedStatus(error), text: "", error });
    } finally {
      changes?.endTurn();
      stopListening();
    }
  }

  /**
   * `/compact [instructions]`: compacts the conversation now. Throws what the compaction threw;
   * the history is unchanged then.
   */
  async compact(instructions: string | undefined, turn: TurnOptions = {}): Promise<void> {
    const stopListening = this.options.journal.listen(turn.onEvent);
    try {
      const { system, tools } = await this.options.turn();
      const request = {
        system,
        messages: this.history,
        tools: tools.map((tool) => tool.spec),
        ...(turn.signal && { signal: turn.signal }),
      };
      await this.compacting.compact(request, instructions);
    } finally {
      stopListening();
    }
  }

  /**
   * The conversation goes on from `history` (a rewind took it back: the session's branch as
   * loaded, from `resume`, its last compaction). What the agent has seen of files is what that
   * history's tool results saw: a file put back as it was then needs no new read, one that
   * differs still does.
   */
  restart(history: Message[], resume: Compaction | undefined): void {
    this.history = history;
    this.compacting.restart(resume);
    this.options.seen?.recall(history, this.options.info.workspace, "rewind");
  }

  /**
   * A request of the turn made after a compaction during the turn gets the system prompt built
   * again: what it says of the compaction (the text of the skills used before it) is then in the
   * very next request. Other requests (the summary request) go as they are.
   */
  private async *withFreshSystem(
    inner: ModelClient,
    request: ModelRequest,
  ): AsyncGenerator<ModelEvent> {
    const turn = this.turnSystem;
    const current = this.compacting.current;
    const { system } = this.options;
    if (
      system === undefined ||
      turn === undefined ||
      request.system !== turn.text ||
      current === turn.builtFor
    ) {
      yield* inner.stream(request);
      return;
    }
    let rebuilt = this.rebuilt;
    if (rebuilt === undefined || rebuilt.builtFor !== current) {
      rebuilt = { text: await system(), builtFor: current };
      this.rebuilt = rebuilt;
    }
    yield* inner.stream({ ...request, system: rebuilt.text });
  }

  /** The plan as of the end of the history: its last `plan` call's, else its compaction's. */
  get plan(): PlanItem[] | undefined {
    return planOf(this.history) ?? this.compacting.current?.facts.plan;
  }

  /** A message of the loop committed; a result that sets the plan is followed by a `plan` event. */
  private async commitAndTell(message: Message): Promise<void> {
    await this.commit(message);
    if (message.role !== "tool") return;
    const round = this.history.findLast(isRound);
    const call =
      round?.role === "assistant"
        ? round.toolCalls.find((c) => c.id === message.toolCallId)
        : undefined;
    const items = planSetBy(call, message);
    if (items) await this.options.journal.record({ type: "plan", items });
  }

  /** A message joins the history once it is in the session. */
  private async commit(message: Message): Promise<void> {
    await this.options.journal.record({ type: "message", message });
    this.history.push(message);
  }
}

/**
 * The prompt as a user message; with images, their placeholder lines and the parts to send. A
 * prompt of images alone (an editor's) has no text part: a provider refuses an empty one.
 */
function userMessage(prompt: string, images: readonly ImageAttachment[]): Message {
  if (images.length === 0) return { role: "user", content: prompt };
  const text = prompt === "" ? [] : [prompt];
  return {
    role: "user",
    content: [...text, ...images.map((image) => image.placeholder)].join("\n"),
    parts: [
      ...text.map((line) => ({ type: "text" as const, text: line })),
      ...images.map((image) => image.part),
    ],
  };
}

/** Why a turn stopped: from its status, and for an error, from the model's stop the adapter told. */
function stopOf(status: TurnStatus, error: unknown): StopReason {
  switch (status) {
    case "completed":
      return "end_turn";
    case "aborted":
      return "cancelled";
    case "max_turns":
    case "budget_exceeded":
      return status;
    case "compaction_failed":
      return "error";
    case "error":
      return (error instanceof ProviderError && error.stop) || "error";
    default:
      return assertNever(status);
  }
}

function failedStatus(error: unknown): TurnStatus {
  if (budgetStop(error)) return "budget_exceeded";
  return error instanceof CompactionError ? "compaction_failed" : "error";
}

const isRound = (message: Message) => message.role === "assistant";
