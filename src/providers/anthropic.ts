import { BaseAnthropic } from "@anthropic-ai/sdk/client";
import * as sdkErrors from "@anthropic-ai/sdk/core/error";
import { Messages } from "@anthropic-ai/sdk/resources/messages/messages";
import { callIdsIn } from "../history/calls.js";
import { normalizeHistory } from "../history/normalize.js";
import type { ModelClient, ModelEvent, ModelRequest, ThinkingLevel } from "../types.js";
import {
  toAnthropicMessages,
  toAnthropicTools,
  toModelEvents,
  withCacheBreakpoints,
} from "./anthropic-protocol.js";
import { loopThinking } from "./anthropic-thinking.js";
import { failWhenIdle, linkedController } from "./idle.js";
import { providerErrorFrom } from "./provider-error.js";

export interface AnthropicOptions {
  apiKey: string;
  model: string;
  /** Defaults to the SDK's (`ANTHROPIC_BASE_URL` or the public API). */
  baseURL?: string;
  /** Output token limit per round, besides a thinking budget. Default 8192. */
  maxTokens?: number;
  /**
   * How much the model thinks (`anthropicThinking`: adaptive effort, or a token budget on the
   * models that take only that). Unset leaves the model's default.
   */
  thinking?: ThinkingLevel;
  /** SDK retries before the first event (connection errors, 408/409/429/5xx). Default 2. */
  maxRetries?: number;
  /** Milliseconds to wait for response headers (the SDK's timeout). Default 60 000. */
  timeout?: number;
  /** Milliseconds without a stream event before the round fails as stalled. Default 90 000. */
  idleTimeout?: number;
  /**
   * The HTTP transport, a \`fetch\` (default: the SDK's, Node's global \`fetch\`). The CLI passes
   * \`httpFetch\`, which does not load Node's fetch stack.
   */
  fetch?: typeof fetch;
}

/** The SDK's client with only the Messages resource: the bundle leaves the rest of the API out. */
class MessagesOnly extends BaseAnthropic {
  readonly messages = new Messages(this);
}

/**
 * `ModelClient` for the Anthropic Messages API over the official SDK. Every request sends the
 * history as `normalizeHistory` makes it, and every call it yields has an id and a name the API
 * takes. The SDK retries before the first event; nothing is retried after it. The abort signal
 * reaches the HTTP request. The SDK's timeout covers only the headers, so a stream that goes
 * quiet is failed by an idle timer. Every failure of the provider (an error status, a mid-stream
 * `error` event, a connection refused or dropped, a stall) is thrown as a `ProviderError`.
 * Thinking is asked for per tool loop, as the loop began (`loopThinking`).
 */
export class AnthropicModelClient implements ModelClient {
  private readonly client: MessagesOnly;

  constructor(private readonly options: AnthropicOptions) {
    this.client = new MessagesOnly({
      apiKey: options.apiKey,
      ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeout ?? 60_000,
      ...(options.fetch !== undefined && { fetch: options.fetch }),
    });
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const history = normalizeHistory([...request.messages], { startWithUser: true }).messages;
    const loop = loopThinking(
      this.options.model,
      toAnthropicMessages(history),
      this.options.thinking,
    );
    const { system, tools, messages } = withCacheBreakpoints({
      system: request.system,
      tools: toAnthropicTools(request.tools),
      messages: loop.messages,
    });
    const { extraTokens, headers, ...thinking } = loop.thinking;
    const [controller, release] = linkedController(request.signal);
    try {
      const events = await this.client.messages.create(
        {
          model: this.options.model,
          max_tokens: (this.options.maxTokens ?? 8192) + extraTokens,
          messages,
          stream: true,
          ...(system.length > 0 && { system }),
          ...(tools.length > 0 && { tools }),
          ...thinking,
        },
        { signal: controller.signal, headers },
      );
      yield* toModelEvents(failWhenIdle(events, this.options.idleTimeout ?? 90_000, controller), {
        taken: callIdsIn(history),
      });
    } catch (error) {
      throw providerErrorFrom("anthropic", error, sdkErrors);
    } finally {
      release();
    }
  }
}
