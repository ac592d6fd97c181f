import OpenAI, { APIError } from "openai";
import { callIdsIn } from "../history/calls.js";
import { normalizeHistory } from "../history/normalize.js";
import type { ModelClient, ModelEvent, ModelRequest, ThinkingLevel } from "../types.js";
import { failWhenIdle, linkedController } from "./idle.js";
import { toModelEventsFromOpenAI, toOpenAIMessages, toOpenAITools } from "./openai-protocol.js";
import { streamErrorFrom } from "./stream-error.js";

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
}

/**
 * `ModelClient` for streaming Chat Completions over the official `openai` SDK. Every request
 * sends the history as `normalizeHistory` makes it, and every call it yields has an id and a
 * name the API takes. An in-band error throws a `ProviderStreamError`.
 */
export class OpenAIModelClient implements ModelClient {
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAIOptions) {
    this.client = new OpenAI({
      // The SDK insists on a key; local servers do not check it.
      apiKey: options.apiKey || "no-key",
      ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeout ?? 60_000,
      ...(options.fetch !== undefined && { fetch: options.fetch }),
    });
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const history = normalizeHistory([...request.messages], { startWithUser: true }).messages;
    const tools = toOpenAITools(request.tools);
    const [controller, release] = linkedController(request.signal);
    try {
      const chunks = await this.client.chat.completions.create(
        {
          model: this.options.model,
          messages: toOpenAIMessages(request.system, history, {
            replayReasoning: this.options.replayReasoning ?? true,
          }),
          stream: true,
          stream_options: { include_usage: true },
          ...(tools.length > 0 && { tools }),
          ...(this.options.maxTokens !== undefined && { max_tokens: this.options.maxTokens }),
          ...(this.options.thinking !== undefined && {
            reasoning_effort: this.options.thinking === "off" ? "none" : this.options.thinking,
          }),
        },
        { signal: controller.signal },
      );
      yield* toModelEventsFromOpenAI(
        failWhenIdle(chunks, this.options.idleTimeout ?? 90_000, controller),
        { taken: callIdsIn(history) },
      );
    } catch (error) {
      // The SDK throws `data: {"error": …}` as an APIError with the response's headers and no status.
      if (error instanceof APIError && error.status === undefined && error.headers !== undefined)
        throw streamErrorFrom(error.error);
      throw error;
    } finally {
      release();
    }
  }
}
