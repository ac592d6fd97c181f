import type { ModelClient, ModelEvent, ModelRequest } from "../types.js";
import { effortRefusedNotice } from "./openai.js";
import { ProviderError } from "./provider-error.js";

export interface ResponsesSwitchOptions {
  model: string;
  /**
   * The Chat Completions client: with `reasoningOff` false it throws a refusal of function tools
   * with reasoning (`reasoningOffForTools: false`); true sends `reasoning_effort: none` from the
   * first request, for a server without the Responses API.
   */
  chat: (reasoningOff: boolean) => ModelClient;
  /** The Responses API client at the same endpoint, made when first needed. */
  responses: () => Promise<ModelClient>;
  /** A line for the person (without `mini-agent: `). */
  tell: (notice: string) => void;
  /** Told once, before the first event of the Responses API, to record the switch. */
  switched: (reason: string) => Promise<void>;
}

/**
 * Runs a session on Chat Completions until the model refuses function tools there and names the
 * Responses API (OpenAI's gpt-6 family at every effort; gpt-5.x with reasoning; the codex and
 * `-pro` models always): from that refusal on, every request goes to the Responses API of the
 * same endpoint, if it has one, said in one line and recorded. An endpoint that answers 404 or
 * 405 on `/responses` has none: the session goes on with `reasoning_effort: none` on Chat
 * Completions (what the gpt-5.x refusal offers), and a model that refuses that too ends the turn
 * in one line. Each refusal comes before any event, so the round committed nothing.
 */
export class ResponsesSwitchClient implements ModelClient {
  private current: ModelClient;
  /** Set once the session left the first Chat Completions client. */
  private decided = false;

  constructor(private readonly options: ResponsesSwitchOptions) {
    this.current = options.chat(false);
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    if (this.decided) return yield* this.current.stream(request);
    let refusal: ProviderError;
    try {
      return yield* this.current.stream(request);
    } catch (error) {
      if (!needsResponses(error)) throw error;
      refusal = error;
    }
    const responses = await this.options.responses();
    let switched = false;
    const switchNow = async () => {
      switched = true;
      this.current = responses;
      this.decided = true;
      this.options.tell(
        `${this.options.model} refuses function tools on Chat Completions: this session runs on the Responses API (/responses) from now on`,
      );
      await this.options.switched(refusal.providerMessage);
    };
    try {
      for await (const event of responses.stream(request)) {
        if (!switched) await switchNow();
        yield event;
      }
      if (!switched) await switchNow();
      return;
    } catch (error) {
      if (switched || !noResponsesApi(error)) {
        if (!switched) await switchNow();
        throw error;
      }
    }
    yield* this.withoutReasoning(request);
  }

  /** The turn on Chat Completions with `reasoning_effort: none`, for an endpoint without Responses. */
  private async *withoutReasoning(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const chat = this.options.chat(true);
    let started = false;
    try {
      for await (const event of chat.stream(request)) {
        if (!started) {
          started = true;
          this.current = chat;
          this.decided = true;
          this.options.tell(effortRefusedNotice);
        }
        yield event;
      }
    } catch (error) {
      if (started || !(error instanceof ProviderError) || error.status !== 400) throw error;
      throw new Error(
        `${this.options.model} refuses function tools on Chat Completions at every reasoning effort, and this endpoint has no Responses API (/responses): use OpenAI's endpoint or a server that serves /responses`,
        { cause: error },
      );
    }
  }
}

/** A refusal of Chat Completions that sends the caller to the Responses API. */
function needsResponses(error: unknown): error is ProviderError {
  return (
    error instanceof ProviderError &&
    error.status === 400 &&
    /\bv1\/responses\b/i.test(error.providerMessage)
  );
}

/** The endpoint has no `/responses` (a local server's 404, or 405 on a path it serves otherwise). */
function noResponsesApi(error: unknown): boolean {
  return error instanceof ProviderError && (error.status === 404 || error.status === 405);
}
