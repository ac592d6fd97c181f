import OpenAI from "openai";
import * as sdkErrors from "openai/core/error";
import type {
  ResponseCreateParamsStreaming,
  ResponseStreamEvent,
} from "openai/resources/responses/responses";
import type { Reasoning } from "openai/resources/shared";
import type { Stream } from "openai/streaming";
import { callIdsIn } from "../history/calls.js";
import { normalizeHistory } from "../history/normalize.js";
import type { ModelClient, ModelEvent, ModelRequest, ThinkingLevel } from "../types.js";
import { failWhenIdle, linkedController } from "./idle.js";
import { ProviderError, providerErrorFrom } from "./provider-error.js";
import {
  toModelEventsFromResponses,
  toResponsesInput,
  toResponsesTools,
} from "./responses-protocol.js";

export interface OpenAIResponsesOptions {
  apiKey?: string;
  /** Default the OpenAI API, `https://api.openai.com/v1`. */
  baseURL?: string;
  model: string;
  /** Output token limit per round (`max_output_tokens`); unset leaves the server's default. */
  maxTokens?: number;
  /**
   * Sent as `reasoning.effort` (`off` as `none`), with `reasoning.summary: "auto"` for a level,
   * so the model's reasoning summary streams as thinking; unset sends neither.
   */
  thinking?: ThinkingLevel;
  /**
   * The `prompt_cache_key` of each request, asked for each time (the CLI's session id, known
   * once the session has begun); undefined or empty sends none.
   */
  promptCacheKey?: () => string | undefined;
  /** SDK retries before the first event (connection errors, 408/409/429/5xx). Default 2. */
  maxRetries?: number;
  /** Milliseconds to wait for response headers. Default 60 000. */
  timeout?: number;
  /** Milliseconds without an event before the round fails as stalled. Default 90 000. */
  idleTimeout?: number;
  /** The HTTP transport, a `fetch` (default: the SDK's); the CLI passes `httpFetch`. */
  fetch?: typeof fetch;
}

/**
 * `ModelClient` for OpenAI's Responses API (streaming `POST /responses`) over the official
 * `openai` SDK: the system prompt as `instructions`, nothing stored on OpenAI's side
 * (`store: false`), and each round's reasoning asked for encrypted
 * (`include: ["reasoning.encrypted_content"]`), kept in the history and sent back before the
 * call it preceded, so the model keeps its reasoning through a tool loop. Every request sends
 * the history as `normalizeHistory` makes it; every failure of the provider (an error status, an
 * in-band error, a connection refused or dropped, a stall) is thrown as a `ProviderError`.
 */
export class OpenAIResponsesModelClient implements ModelClient {
  private readonly client: OpenAI;
  /**
   * Cleared, for the client's life, when the model refused encrypted reasoning: a model without
   * reasoning (gpt-4o, gpt-4.1) answers "Encrypted content is not supported with this model."
   * (param `include`), and the request goes again without it; no list of models is kept.
   */
  private encrypted = true;
  /**
   * Reasoning items the API said it cannot verify ("The encrypted content for item rs_… could
   * not be verified.": another model wrote it, as when a gateway answered with a fallback model):
   * left out of every later request of this client, so the session goes on instead of being
   * refused forever. Dropping reasoning loses nothing the model needs to answer.
   */
  private readonly unverifiable = new Set<string>();

  constructor(private readonly options: OpenAIResponsesOptions) {
    this.client = new OpenAI({
      apiKey: options.apiKey || "no-key",
      ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeout ?? 60_000,
      ...(options.fetch !== undefined && { fetch: options.fetch }),
    });
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const { model, maxTokens } = this.options;
    const history = normalizeHistory([...request.messages], { startWithUser: true }).messages;
    const tools = toResponsesTools(request.tools);
    const cacheKey = this.options.promptCacheKey?.();
    const reasoning = reasoningOf(this.options.thinking);
    const [controller, release] = linkedController(request.signal);
    try {
      const body = {
        model,
        ...(request.system !== "" && { instructions: request.system }),
        input: toResponsesInput(history, model),
        ...(tools.length > 0 && { tools }),
        stream: true as const,
        store: false,
        ...(cacheKey && { prompt_cache_key: cacheKey }),
        ...(reasoning && { reasoning }),
        ...(maxTokens !== undefined && { max_output_tokens: maxTokens }),
      };
      const events = await this.open(body, controller.signal);
      yield* toModelEventsFromResponses(
        failWhenIdle(events, this.options.idleTimeout ?? 90_000, controller),
        { taken: callIdsIn(history), model },
      );
    } catch (error) {
      throw providerErrorFrom("openai-responses", error, sdkErrors);
    } finally {
      release();
    }
  }

  /**
   * The stream of `body`, with encrypted reasoning asked for unless the model refused it, and
   * without the reasoning items the API could not verify (each such refusal names one item: it is
   * left out and the request sent again, at most once per item the request holds).
   */
  private async open(
    body: ResponsesBody,
    signal: AbortSignal,
  ): Promise<Stream<ResponseStreamEvent>> {
    for (;;) {
      const include = this.encrypted ? { include: ["reasoning.encrypted_content" as const] } : {};
      const input = withoutItems(body.input, this.unverifiable);
      const sent: ResponsesBody = input === undefined ? body : { ...body, input };
      try {
        return await this.client.responses.create({ ...sent, ...include }, { signal });
      } catch (thrown) {
        const error = providerErrorFrom("openai-responses", thrown, sdkErrors);
        const item = unverifiedItem(error);
        if (item !== undefined && hasItem(input, item) && !this.unverifiable.has(item)) {
          this.unverifiable.add(item);
          continue;
        }
        if (!this.encrypted || !encryptionRefused(error)) throw error;
        this.encrypted = false;
      }
    }
  }
}

/** A request's body, before `include` is added to it. */
type ResponsesBody = Omit<ResponseCreateParamsStreaming, "include">;

function reasoningOf(level: ThinkingLevel | undefined): Reasoning | undefined {
  if (level === undefined) return undefined;
  if (level === "off") return { effort: "none" };
  return { effort: level, summary: "auto" };
}

/** The reasoning item of a "could not be verified" refusal, when that is what `error` is. */
function unverifiedItem(error: unknown): string | undefined {
  if (!(error instanceof ProviderError) || error.status !== 400) return undefined;
  return /The encrypted content for item (\S+) could not be verified\./.exec(
    error.providerMessage,
  )?.[1];
}

type Input = ResponsesBody["input"];

const idOf = (item: unknown): unknown =>
  typeof item === "object" && item !== null && (item as { type?: unknown }).type === "reasoning"
    ? (item as { id?: unknown }).id
    : undefined;

function hasItem(input: Input, id: string): boolean {
  return Array.isArray(input) && input.some((item) => idOf(item) === id);
}

function withoutItems(input: Input, ids: ReadonlySet<string>): Input {
  if (ids.size === 0 || !Array.isArray(input)) return input;
  return input.filter((item) => {
    const id = idOf(item);
    return typeof id !== "string" || !ids.has(id);
  });
}

function encryptionRefused(error: unknown): boolean {
  if (!(error instanceof ProviderError) || error.status !== 400) return false;
  // Matched anywhere in the message, as gateways pass it on inside their own.
  return error.providerMessage.includes("Encrypted content is not supported with this model.");
}
