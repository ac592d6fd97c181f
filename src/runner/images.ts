import { ProviderError } from "../providers/provider-error.js";
import type { Message, ModelClient, ModelEvent, ModelRequest } from "../types.js";

/**
 * The text-only fallback. A provider or model that refuses images answers a request holding one
 * with a 400 naming images, forever: resending the history would fail every turn after. The
 * first such refusal is recorded (`onRefused`, a session record, so a resumed session knows) and
 * fails the turn with `ImagesRefusedError`; from then on every request goes with the images'
 * text placeholders instead (`withoutImages`), a history that stays valid as it is.
 */
export class ImageFallbackClient implements ModelClient {
  constructor(
    private readonly inner: ModelClient,
    private textOnly: boolean,
    private readonly onRefused: (reason: string) => Promise<void>,
  ) {}

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    if (this.textOnly || !hasImages(request.messages)) {
      const messages = this.textOnly ? withoutImages(request.messages) : request.messages;
      yield* this.inner.stream({ ...request, messages });
      return;
    }
    try {
      yield* this.inner.stream(request);
    } catch (error) {
      const reason = imageRefusal(error);
      if (reason === undefined) throw error;
      this.textOnly = true;
      await this.onRefused(reason);
      throw new ImagesRefusedError(error);
    }
  }
}

/** A turn ended by the model's refusal of images; `cause` is the provider's error. */
export class ImagesRefusedError extends Error {
  override name = "ImagesRefusedError";

  constructor(cause: unknown) {
    super("this model is sent text placeholders for images from now on: send your prompt again", {
      cause,
    });
  }
}

const hasImages = (messages: readonly Message[]) =>
  messages.some((message) => message.role !== "assistant" && message.parts !== undefined);

/** The history as a model without images reads it: each text, placeholders included. */
export function withoutImages(messages: readonly Message[]): Message[] {
  return messages.map((message) => {
    if (message.role === "assistant" || message.parts === undefined) return message;
    const { parts: _, ...text } = message;
    return text;
  });
}

/**
 * The provider's words when `error` is a refusal of images: an HTTP 400 whose message names
 * images (`image_url is only supported by certain models`, `does not support image input`, an
 * image over the provider's size). Anything else is not one.
 */
function imageRefusal(error: unknown): string | undefined {
  if (!(error instanceof ProviderError) || error.status !== 400) return undefined;
  const reason = error.providerMessage.split("\n")[0]?.slice(0, 500);
  return reason !== undefined && /image/i.test(reason) ? reason : undefined;
}
