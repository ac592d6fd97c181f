import {
  deferredImage,
  heldBackIn,
  ImageBytesGone,
  type ImageMediaType,
  imageHeader,
  imagePlaceholder,
} from "../images.js";
import type { ImagePart, Message, ResultPart } from "../types.js";
import type { BlobStore } from "./blobs.js";
import type { StoredImagePart, StoredMessage } from "./records.js";

/**
 * Images in the session file are kept out of line: before a message record is written, each
 * image's bytes go into the session's blob store (`put` returns once they are on disk, so no
 * record names a blob a crash left half written), and the record holds a `StoredImagePart` that
 * names them by hash. Loading makes them image parts again (`inlineImages`) for the messages the
 * model still sees, never for those a compaction covers, and each reads its bytes when first
 * used. The bytes are never redacted: a secret's value is looked for in text, and an image is
 * not text.
 */

type StoredPart = NonNullable<(StoredMessage & { role: "user" | "tool" })["parts"]>[number];

/** An image the store could not take: its placeholder line and why. */
export interface UnkeptImage {
  placeholder: string;
  reason: string;
}

/**
 * The message as its record holds it: each inline image put in `blobs` and named by its hash,
 * or, when the store refuses it (its cap, or it cannot be written), described with `unkept`.
 * Messages without images are returned as they are.
 */
export function storeImages(
  message: StoredMessage,
  blobs: () => BlobStore,
): { message: StoredMessage; unkept: UnkeptImage[] } {
  const unkept: UnkeptImage[] = [];
  if (message.role === "assistant" || !message.parts?.some((p) => "data" in p))
    return { message, unkept };
  const parts = message.parts.map((part): StoredPart => {
    if (!("data" in part)) return part;
    const bytes = Buffer.from(part.data, "base64");
    const header = imageHeader(bytes);
    const described = {
      type: "image" as const,
      mediaType: part.mediaType,
      size: bytes.length,
      ...(header && { width: header.width, height: header.height }),
    };
    const put = blobs().put(bytes);
    if (put.ok) return { ...described, blob: put.hash };
    unkept.push({ placeholder: storedPlaceholder(described), reason: put.reason });
    return { ...described, unkept: put.reason };
  });
  return { message: { ...message, parts }, unkept };
}

/** Why an image a record names is not shown: its blob is gone or holds other bytes. */
export const missingImageWords = "its bytes are missing from the session's blob store";

/** Why an image the session could not keep is not shown. */
export const unkeptImageWords = (reason: string | undefined) =>
  `it was not kept in the session (${reason ?? "no reason recorded"})`;

/**
 * The messages with their images to be read back from `blobs`: each image whose blob is there
 * with the size its record gives becomes an image part whose bytes are read when first used
 * (`storedImage`), so a load reads none of them. An image whose blob is missing or of another
 * size, or that was never kept, is not shown: its placeholder line in the text becomes
 * `[image not shown: …: why]`, and a message left with no image loses its parts, so it reads
 * as a text-only model reads it. `missing` counts the blobs that were named but not found whole.
 */
export function inlineImages(
  messages: readonly StoredMessage[],
  blobs: () => BlobStore,
): { messages: Message[]; missing: number } {
  let missing = 0;
  const inlined = messages.map((message): Message => {
    if (message.role === "assistant" || message.parts === undefined) return message as Message;
    let content = message.content;
    const parts = message.parts.map((part): ResultPart => {
      if (part.type === "text" || "data" in part) return part;
      const { blob } = part;
      if (blob !== undefined && blobs().size(blob) === part.size)
        return storedImage(part, blob, blobs());
      if (blob !== undefined) missing++;
      const why = blob === undefined ? unkeptImageWords(part.unkept) : missingImageWords;
      const held = heldBackIn(content, part, part.size, why);
      content = held.content;
      return { type: "text", text: held.line };
    });
    if (parts.some((part) => part.type === "image")) return { ...message, content, parts };
    const { parts: _, ...text } = message;
    return { ...text, content };
  });
  return { messages: inlined, missing };
}

/**
 * The image a record names, its bytes read from `store` (their hash checked) when first sent;
 * what the record knew of it answers the rest. A blob gone, altered or unreadable by then is
 * `ImageBytesGone`.
 */
function storedImage(part: StoredImagePart, hash: string, store: BlobStore): ImagePart {
  const { mediaType, size, width, height } = part;
  const pixels = width !== undefined && height !== undefined ? { width, height } : {};
  return deferredImage({ mediaType, bytes: size, ...pixels }, () => {
    const bytes = store.get(hash);
    if (bytes === undefined)
      throw new ImageBytesGone(
        `${mediaType} image ${hash} is gone from the session's blob store, altered or unreadable (${store.dir})`,
      );
    return bytes;
  });
}

/** The placeholder line of an image a record holds inline (a file of an earlier version). */
export function inlinePlaceholder(part: { mediaType: ImageMediaType; data: string }): string {
  const bytes = Buffer.from(part.data, "base64");
  const header = imageHeader(bytes);
  return storedPlaceholder({ ...header, mediaType: part.mediaType, size: bytes.length });
}

/** The placeholder line of an image a record describes: `[image: image/png, 2x2, 1.2 KB]`. */
export function storedPlaceholder(
  image: Pick<StoredImagePart, "mediaType" | "size" | "width" | "height">,
): string {
  return imagePlaceholder(image, image.size);
}
