import OpenAI from "openai";
import * as sdkErrors from "openai/core/error";
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
} from "openai/resources/chat/completions";
import type { Stream } from "openai/streaming";
import { callIdsIn } from "../history/calls.js";
import { normalizeHistory } from "../history/normalize.js";
import type { ModelClient, ModelEvent, ModelRequest, ThinkingLevel } from "../types.js";
import { failWhenIdle, linkedController } from "./idle.js";
import { toModelEventsFromOpenAI, toOpenAIMessages, toOpenAITools } from "./openai-protocol.js";
import { ProviderError, providerErrorFrom } from "./provider-error.js";

export interface OpenAIOptions {
  /** Optional for local servers (Ollama, vLLM, llama.cpp), which ignore it. */
  apiKey?: string;
  /** For example `http://127.0.0.1:11434/v1`. Default the OpenAI API. */
  baseURL?: string;
  model: string;
  /** Output token limit per round; unset leaves the server's default. */
  maxTokens?: number;
  /**
   * Sent as `reasoning_effort` (`off` as `none`) to models that reason; unset sends nothing,
   * leaving the server's default.
   */
  thinking?: ThinkingLevel;
  /**
   * Send each round's reasoning back as `reasoning_content`, as DeepSeek's thinking mode
   * requires in a tool loop. Default true; false for a server that refuses the field.
   */
  replayReasoning?: boolean;
  /** SDK retries before the first chunk (connection errors, 408/409/429/5xx). Default 2. */
  maxRetries?: number;
  /** Milliseconds to wait for response headers. Default 60 000. */
  timeout?: number;
  /** Milliseconds without a chunk before the round fails as stalled. Default 90 000. */
  idleTimeout?: number;
  /**
   * The HTTP transport, a \`fetch\` (default: the SDK's, Node's global \`fetch\`). The CLI passes
   * \`httpFetch\`, which does not load Node's fetch stack.
   */
  fetch?: typeof fetch;
  /**
   * Answer a refusal of function tools with reasoning by sending `reasoning_effort: none` (see
   * `refusals`). Default true; false throws the refusal, for a caller that answers it otherwise
   * (`ResponsesSwitchClient` runs the turn on the Responses API).
   */
  reasoningOffForTools?: boolean;
  /**
   * Told once when the client changes what it sends for the rest of its life because the model
   * refused the request (see `refusals`); the CLI prints it on stderr.
   */
  onNotice?: (notice: string) => void;
}

/**
 * What OpenAI's current reasoning models (gpt-5.x) refuse on Chat Completions, each answered by
 * sending the request once more as the refusal asks; no list of models, so every other server
 * keeps what it is sent today:
 * - function tools with reasoning, whether `reasoning_effort` was sent or not (gpt-5.6 refuses
 *   its own default): "Function tools with reasoning_effort are not supported for gpt-5.6 in
 *   /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to
 *   'none'." (gpt-5.4 and 5.5 end it "Please use /v1/responses instead."). Sent again with
 *   `reasoning_effort: none`, which these models take with tools and which is what the refusal
 *   asks; leaving the field out is refused again by gpt-5.6. The model then does not reason;
 *   the Responses API (`OpenAIResponsesModelClient`) does it with tools.
 * - `max_tokens`: "Unsupported parameter: 'max_tokens' is not supported with this model. Use
 *   'max_completion_tokens' instead." Sent again as `max_completion_tokens`.
 * Each is matched by its sentence anywhere in the error's message, as gateways (LiteLLM, Copilot)
 * pass it on inside their own.
 */
const refusals = {
  effort:
    /\bfunction tools with reasoning_effort are not supported for \S+ in \/v1\/chat\/completions\b/i,
  maxTokens:
    /\bunsupported parameter: 'max_tokens' is not supported with this model\. use 'max_completion_tokens' instead/i,
};

export const effortRefusedNotice =
  "the model refuses function tools with reasoning on Chat Completions: this session sends reasoning_effort none from now on, so the model does not reason; for reasoning with tools, use --provider openai-responses";

/**
 * `ModelClient` for streaming Chat Completions over the official `openai` SDK. Every request
 * sends the history as `normalizeHistory` makes it, and every call it yields has an id and a
 * name the API takes. Every failure of the provider (an error status, an in-band error, a
 * connection refused or dropped, a stall) is thrown as a `ProviderError`.
 */
export class OpenAIModelClient implements ModelClient {
  private readonly client: OpenAI;
  /** Set, for the client's life, by a refusal of function tools with reasoning. */
  private effortNone: boolean;
  /** Set, for the client's life, by a refusal of `max_tokens`. */
  private completionTokens = false;

  constructor(private readonly options: OpenAIOptions) {
    this.client = new OpenAI({
      // The SDK insists on a key; local servers do not check it.
      apiKey: options.apiKey || "no-key",
      ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeout ?? 60_000,
      ...(options.fetch !== undefined && { fetch: options.fetch }),
    });
    this.effortNone = options.thinking === "off";
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const history = normalizeHistory([...request.messages], { startWithUser: true }).messages;
    const tools = toOpenAITools(request.tools);
    const [controller, release] = linkedController(request.signal);
    try {
      const messages = toOpenAIMessages(request.system, history, {
        replayReasoning: this.options.replayReasoning ?? true,
      });
      const chunks = await this.open(
        () => ({
          model: this.options.model,
          messages,
          stream: true,
          stream_options: { include_usage: true },
          ...(tools.length > 0 && { tools }),
          ...this.limit(),
          ...this.effort(),
        }),
        controller.signal,
      );
      yield* toModelEventsFromOpenAI(
        failWhenIdle(chunks, this.options.idleTimeout ?? 90_000, controller),
        { taken: callIdsIn(history) },
      );
    } catch (error) {
      throw providerErrorFrom("openai", error, sdkErrors);
    } finally {
      release();
    }
  }

  /**
   * The stream of the request `body()` makes; on a refusal `adjust` answers, the request is sent
   * again, changed as it says. Each adjustment happens once, before any chunk arrived: nothing
   * of the round was committed.
   */
  private async open(
    body: () => ChatCompletionCreateParamsStreaming,
    signal: AbortSignal,
  ): Promise<Stream<ChatCompletionChunk>> {
    for (;;) {
      try {
        return await this.client.chat.completions.create(body(), { signal });
      } catch (error) {
        const failure = providerErrorFrom("openai", error, sdkErrors);
        if (!this.adjust(failure)) throw failure;
      }
    }
  }

  /** Whether `error` is a refusal this client now answers by sending the request otherwise. */
  private adjust(error: unknown): boolean {
    if (!(error instanceof ProviderError) || error.status !== 400) return false;
    const message = error.providerMessage;
    const answer = this.options.reasoningOffForTools ?? true;
    if (answer && !this.effortNone && refusals.effort.test(message)) {
      this.effortNone = true;
      this.options.onNotice?.(effortRefusedNotice);
      return true;
    }
    if (!this.completionTokens && this.options.maxTokens !== undefined) {
      this.completionTokens = refusals.maxTokens.test(message);
      return this.completionTokens;
    }
    return false;
  }

  private limit(): { max_tokens?: number; max_completion_tokens?: number } {
    const tokens = this.options.maxTokens;
    if (tokens === undefined) return {};
    return this.completionTokens ? { max_completion_tokens: tokens } : { max_tokens: tokens };
  }

  private effort(): { reasoning_effort?: "none" | Exclude<ThinkingLevel, "off"> } {
    if (this.effortNone) return { reasoning_effort: "none" };
    const level = this.options.thinking;
    return level === undefined ? {} : { reasoning_effort: level === "off" ? "none" : level };
  }
}
