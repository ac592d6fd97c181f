import { sha256Hex } from "../crypto.js";
import { holdBack, readableData } from "../images.js";
import { ProviderError } from "../providers/provider-error.js";
import type {
  ImagePart,
  Message,
  ModelClient,
  ModelEvent,
  ModelRequest,
  ResultPart,
} from "../types.js";

/**
 * What a provider's 400 about images means. An image it could not process (`Could not process
 * image`, `You uploaded an unsupported image`) is that image's fault: it alone is sent as a
 * placeholder saying so from then on, recorded (`onRefused` with the image's key, so a resumed
 * session leaves it out too), and the request is sent again at once. Any other 400 naming images
 * (`image_url is only supported by certain models`, `does not support image input`) is the
 * model's refusal of images: recorded, the turn fails with `ImagesRefusedError`, and from then on
 * every request goes with the images' text placeholders instead (`withoutImages`).
 *
 * Which image a provider could not process it does not say: the newest one no request the
 * provider accepted has carried yet is left out, then the next, until the request is taken.
 */
export class ImageFallbackClient implements ModelClient {
  /** The keys of images the provider took in a request it answered. */
  private readonly accepted = new Set<string>();
  private readonly unprocessable: Set<string>;
  private readonly keys = new Map<string, string>();

  constructor(
    private readonly inner: ModelClient,
    private textOnly: boolean,
    private readonly onRefused: (reason: string, image?: string) => Promise<void>,
    unprocessable: Iterable<string> = [],
  ) {
    this.unprocessable = new Set(unprocessable);
  }

  /**
   * Whether a request would carry the image: not once the model refused images, nor an image
   * the provider could not process.
   */
  sends(part: ImagePart): boolean {
    if (this.textOnly) return false;
    if (this.unprocessable.size === 0) return true;
    const data = readableData(part);
    return data === undefined || !this.unprocessable.has(this.key(data));
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    if (this.textOnly) {
      const messages = holdingBack(request.messages, () => "this model takes no images");
      yield* this.inner.stream({ ...request, messages });
      return;
    }
    for (;;) {
      const messages = this.withoutUnprocessable(request.messages);
      let answered = false;
      try {
        for await (const event of this.inner.stream({ ...request, messages })) {
          if (!answered)
            for (const part of imagesOf(messages)) this.accepted.add(this.key(part.data));
          answered = true;
          yield event;
        }
        return;
      } catch (error) {
        const refusal = answered ? undefined : imageRefusal(error);
        if (refusal === undefined) throw error;
        const suspect = refusal.kind === "image" ? this.suspect(messages) : undefined;
        if (suspect === undefined) {
          this.textOnly = true;
          await this.onRefused(refusal.reason);
          throw new ImagesRefusedError(error);
        }
        this.unprocessable.add(suspect);
        await this.onRefused(refusal.reason, suspect);
      }
    }
  }

  /** The key of the newest image no answered request carried, if any. */
  private suspect(messages: readonly Message[]): string | undefined {
    return imagesOf(messages)
      .map((part) => this.key(part.data))
      .reverse()
      .find((key) => !this.accepted.has(key));
  }

  private withoutUnprocessable(messages: readonly Message[]): readonly Message[] {
    if (this.unprocessable.size === 0) return messages;
    return holdingBack(messages, (part) =>
      this.unprocessable.has(this.key(part.data)) ? "the provider could not process it" : undefined,
    );
  }

  /** The key of an image by its base64, made once. */
  private key(data: string): string {
    let key = this.keys.get(data);
    if (key === undefined) {
      key = imageKey(data);
      this.keys.set(data, key);
    }
    return key;
  }
}

/**
 * The history with each image `why` gives a reason for left out: in its message's text and in
 * its parts, the image stands as `[image not shown: …: why]` (`holdBack`); a message left
 * without images is text alone.
 */
export function holdingBack(
  messages: readonly Message[],
  why: (part: ImagePart) => string | undefined,
): readonly Message[] {
  return messages.map((message) => {
    if (message.role === "assistant" || message.parts === undefined) return message;
    let content = message.content;
    let changed = false;
    const parts = message.parts.map((part): ResultPart => {
      const reason = part.type === "image" ? why(part) : undefined;
      if (reason === undefined || part.type !== "image") return part;
      changed = true;
      const held = holdBack(content, part, reason);
      content = held.content;
      return { type: "text", text: held.line };
    });
    if (!changed) return message;
    const { parts: _, ...text } = message;
    return parts.some((part) => part.type === "image")
      ? { ...text, content, parts }
      : { ...text, content };
  });
}

/** How an image is named in a record: the sha256 (hex) of its base64. */
export const imageKey = (data: string): string => sha256Hex(data);

/** A turn ended by the model's refusal of images; `cause` is the provider's error. */
export class ImagesRefusedError extends Error {
  override name = "ImagesRefusedError";

  constructor(cause: unknown) {
    super("this model is sent text placeholders for images from now on: send your prompt again", {
      cause,
    });
  }
}

/** The images of a history's user and tool messages, in order. */
export const imagesOf = (messages: readonly Message[]): ImagePart[] =>
  messages.flatMap((message) =>
    message.role === "assistant" || message.parts === undefined
      ? []
      : message.parts.filter((part): part is ImagePart => part.type === "image"),
  );

/** The history as a model without images reads it: each text, placeholders included. */
export function withoutImages(messages: readonly Message[]): Message[] {
  return messages.map((message) => {
    if (message.role === "assistant" || message.parts === undefined) return message;
    const { parts: _, ...text } = message;
    return text;
  });
}

/** The providers' words for one image they could not decode, as opposed to images refused. */
const UNPROCESSABLE = /could not process image|unsupported image|not represent a valid image/i;

/**
 * The provider's words when `error` is about images: an HTTP 400 whose message names images.
 * `image` when it says one image could not be processed, `model` otherwise. Anything else is not
 * one.
 */
function imageRefusal(error: unknown): { kind: "image" | "model"; reason: string } | undefined {
  if (!(error instanceof ProviderError) || error.status !== 400) return undefined;
  const reason = error.providerMessage.split("\n")[0]?.slice(0, 500);
  if (reason === undefined || !/image/i.test(reason)) return undefined;
  return { kind: UNPROCESSABLE.test(reason) ? "image" : "model", reason };
}
