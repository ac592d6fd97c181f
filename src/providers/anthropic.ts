import Anthropic from "@anthropic-ai/sdk";
import type { ModelClient, ModelEvent, ModelRequest } from "../types.js";
import {
  toAnthropicMessages,
  toAnthropicTools,
  toModelEvents,
  withCacheBreakpoints,
} from "./anthropic-protocol.js";

export interface AnthropicOptions {
  apiKey: string;
  model: string;
  /** Defaults to the SDK's (`ANTHROPIC_BASE_URL` or the public API). */
  baseURL?: string;
  /** Output token limit per round. Default 8192. */
  maxTokens?: number;
  /** SDK retries before the first event (connection errors, 408/409/429/5xx). Default 2. */
  maxRetries?: number;
  /** Milliseconds to wait for response headers (the SDK's timeout). Default 60 000. */
  timeout?: number;
  /** Milliseconds without a stream event before the round fails as stalled. Default 90 000. */
  idleTimeout?: number;
}

/**
 * `ModelClient` for the Anthropic Messages API over the official SDK. The SDK retries before the
 * first event; nothing is retried after it. The abort signal reaches the HTTP request. The SDK's
 * timeout covers only the headers, so a stream that goes quiet is failed by an idle timer.
 */
export class AnthropicModelClient implements ModelClient {
  private readonly client: Anthropic;

  constructor(private readonly options: AnthropicOptions) {
    this.client = new Anthropic({
      apiKey: options.apiKey,
      ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeout ?? 60_000,
    });
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const { system, tools, messages } = withCacheBreakpoints({
      system: request.system,
      tools: toAnthropicTools(request.tools),
      messages: toAnthropicMessages(request.messages),
    });
    const controller = new AbortController();
    const abort = () => controller.abort();
    request.signal?.addEventListener("abort", abort, { once: true });
    if (request.signal?.aborted) abort();
    try {
      const events = await this.client.messages.create(
        {
          model: this.options.model,
          max_tokens: this.options.maxTokens ?? 8192,
          messages,
          stream: true,
          ...(system.length > 0 && { system }),
          ...(tools.length > 0 && { tools }),
        },
        { signal: controller.signal },
      );
      yield* toModelEvents(failWhenIdle(events, this.options.idleTimeout ?? 90_000, controller));
    } finally {
      request.signal?.removeEventListener("abort", abort);
      abort();
    }
  }
}

/** Passes events through; if none arrives for `ms` while waiting, aborts and throws. */
async function* failWhenIdle<T>(
  events: AsyncIterable<T>,
  ms: number,
  controller: AbortController,
): AsyncGenerator<T> {
  let stalled = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      stalled = true;
      controller.abort();
    }, ms);
  };
  try {
    arm();
    for await (const event of events) {
      clearTimeout(timer);
      yield event;
      arm();
    }
  } finally {
    clearTimeout(timer);
  }
  if (stalled) throw new Error(`the model stream stalled: no event for ${ms / 1000} s`);
}
