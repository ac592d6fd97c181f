import type { ImageTokenRule } from "../compaction/size.js";
import { IMAGE_GONE, imageFacts, readableData } from "../images.js";
import type { ImagePart, ModelClient, ModelEvent, ModelRequest } from "../types.js";
import { holdingBack, imagesOf, withoutImages } from "./images.js";

/**
 * What one request may carry of images, by API: Anthropic's Messages take at most 100 images and
 * 32 MB a request, and no image over 2000 pixels a side once a request holds more than 20;
 * OpenAI's, 500 images and 50 MB. (Each image alone is within `imageLimits` already.)
 */
export interface ImageRequestLimits {
  images: number;
  bytes: number;
  many?: { over: number; side: number };
}

export const anthropicImageLimits: ImageRequestLimits = {
  images: 100,
  bytes: 32_000_000,
  many: { over: 20, side: 2000 },
};
export const openaiImageLimits: ImageRequestLimits = { images: 500, bytes: 50_000_000 };

/**
 * What a provider's API takes of images, told by whoever builds its client: one request's limits,
 * and the rule compaction counts an image's tokens by.
 */
export interface ProviderImages {
  limits: ImageRequestLimits;
  tokenRule: ImageTokenRule;
}

/** The Messages API's. */
export const anthropicImages: ProviderImages = {
  limits: anthropicImageLimits,
  tokenRule: "anthropic",
};
/** Chat Completions' and the Responses API's. */
export const openaiImages: ProviderImages = { limits: openaiImageLimits, tokenRule: "openai" };

/** Room kept for what an adapter adds around the history (its JSON, the request's fields). */
const MARGIN = 1_000_000;

/**
 * Keeps every request within its API's limits on images, so a session with many screenshots
 * stays valid to send: walking from the newest image back, each is sent while the request stays
 * within the count, the bytes (the base64 of the images plus the text of the request) and the
 * many-image side; the rest, the oldest, go as `[image not shown: …: why]` placeholders. The same
 * history gives the same request, so the provider's prompt cache holds; `onHeldBack` is told the
 * first time a request holds images back for its limits. An image whose bytes are gone (a loaded
 * session's, its blob removed or altered since) goes as a placeholder saying so. An image `sends`
 * says the client inside leaves out (the model takes no images, or the provider could not
 * process that one) is passed over: it takes no room, and its bytes are not read here.
 */
export class ImageBudgetClient implements ModelClient {
  private told = false;

  constructor(
    private readonly inner: ModelClient,
    private readonly limits: ImageRequestLimits,
    private readonly onHeldBack: (count: number) => Promise<void> = async () => {},
    private readonly sends: (part: ImagePart) => boolean = () => true,
  ) {}

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const held = this.heldBack(request);
    if (held.size === 0) {
      yield* this.inner.stream(request);
      return;
    }
    const limited = [...held.values()].filter((why) => why !== IMAGE_GONE).length;
    if (!this.told && limited > 0) {
      this.told = true;
      await this.onHeldBack(limited);
    }
    const messages = holdingBack(request.messages, (part) => held.get(part));
    yield* this.inner.stream({ ...request, messages });
  }

  /** Each image part to leave out, with why, by identity. */
  private heldBack(request: ModelRequest): Map<ImagePart, string> {
    const images = imagesOf(request.messages);
    const held = new Map<ImagePart, string>();
    if (images.length === 0) return held;
    const { images: most, bytes, many } = this.limits;
    const text = JSON.stringify({ ...request, messages: withoutImages(request.messages) }).length;
    let room = bytes - MARGIN - text;
    let kept = 0;
    let widest = 0;
    for (const part of images.reverse()) {
      // One the client inside leaves out takes no room (the model takes no images, or not it).
      if (!this.sends(part)) continue;
      // What the request needs to know of an image, without reading its bytes.
      const facts = imageFacts(part);
      const length = 4 * Math.ceil(facts.bytes / 3);
      const side = Math.max(facts.width ?? 0, facts.height ?? 0);
      const tooMany =
        many !== undefined && kept + 1 > many.over && Math.max(widest, side) > many.side;
      const why =
        kept + 1 > most
          ? `the request holds ${most} newer images, the provider's limit`
          : length > room
            ? `newer images fill the ${bytes / 1_000_000} MB the provider takes in a request`
            : tooMany
              ? `over ${many.side} pixels a side in a request of more than ${many.over} images`
              : // Sent: read now, so an image whose bytes are gone is found before the request.
                readableData(part) === undefined
                ? IMAGE_GONE
                : undefined;
      if (why !== undefined) {
        held.set(part, why);
        continue;
      }
      kept++;
      room -= length;
      widest = Math.max(widest, side);
    }
    return held;
  }
}
