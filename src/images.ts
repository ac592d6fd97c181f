import { imageHeaderSizeOf, imageSizeOf, PNG_SIGNATURE } from "./image-formats.js";
import type { IMAGE_MEDIA_TYPES } from "./message-schema.js";
import type { ImagePart } from "./types.js";

/**
 * The biggest image sent: 3.75 MB of file, whose base64 (what every request carries) is 5 MB,
 * Anthropic's limit per image; and 8000 pixels a side, Anthropic's limit too. OpenAI takes more
 * of both, so one bound serves every provider.
 */
export const imageLimits = { bytes: 3_932_160, side: 8000 } as const;

/**
 * Images known by their bytes, never by a name: the magic numbers say the type, the header says
 * the pixel size, and the structure says whether the file is whole (a PNG reaches `IEND`, a JPEG
 * ends with `EOI`, a GIF with its trailer, a WebP holds the size its RIFF header promises).
 * One place for `read` and for MCP results, and the one placeholder text of an image.
 */

export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

export interface ImageHeader {
  mediaType: ImageMediaType;
  width: number;
  height: number;
}

/** The name each type goes by in a message: `not a whole PNG image`. */
export const imageTypeNames: Record<ImageMediaType, string> = {
  "image/png": "PNG",
  "image/jpeg": "JPEG",
  "image/gif": "GIF",
  "image/webp": "WebP",
};

/** Bytes `sniffImage` needs to see. */
export const IMAGE_SNIFF_BYTES = 12;

/** The image type the first bytes announce, or undefined when they are no image's. */
export function sniffImage(bytes: Uint8Array): ImageMediaType | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.subarray(0, 8).equals(PNG_SIGNATURE)) return "image/png";
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  const head = b.subarray(0, 6).toString("latin1");
  if (head === "GIF87a" || head === "GIF89a") return "image/gif";
  if (b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP")
    return "image/webp";
  return undefined;
}

/**
 * The type and pixel size of a whole image, or undefined when `bytes` is not one: no image's
 * magic number, a header that promises more than is there, a structure cut short.
 */
export function imageHeader(bytes: Buffer): ImageHeader | undefined {
  const mediaType = sniffImage(bytes);
  if (mediaType === undefined) return undefined;
  const size = imageSizeOf[mediaType](bytes);
  if (size === undefined || size.width < 1 || size.height < 1) return undefined;
  return { mediaType, ...size };
}

/** An image as far as it is known: its type and, when its header gave them, its pixels. */
export type ImageShape = Pick<ImageHeader, "mediaType"> & Partial<ImageHeader>;

/** `image/png, 2x2, 1.2 KB`; without the pixels when they are not known. */
function described(image: ImageShape, bytes: number): string {
  const { mediaType, width, height } = image;
  const pixels = width !== undefined && height !== undefined ? `${width}x${height}, ` : "";
  return `${mediaType}, ${pixels}${byteSize(bytes)}`;
}

/** The one-line text that stands where an image is: `[image: image/png, 2x2, 1.2 KB]`. */
export function imagePlaceholder(image: ImageShape, bytes: number): string {
  return `[image: ${described(image, bytes)}]`;
}

/**
 * The one-line text that stands where an image was not sent, saying why, so a model knows what
 * it did not see: `[image not shown: image/png, 2x2, 1.2 KB: the provider could not process it]`.
 */
export function heldBackPlaceholder(image: ImageShape, bytes: number, why: string): string {
  return `[image not shown: ${described(image, bytes)}: ${why}]`;
}

/** What is known of an image without reading its bytes: their size, its type and pixels. */
export type ImageFacts = ImageShape & { bytes: number };

/** The facts of each image part: given when it was made (`deferredImage`), or read once. */
const factsOf = new WeakMap<ImagePart, ImageFacts>();

/**
 * An image's size and pixels without decoding it: those it was made with (`deferredImage`,
 * from a session's record), or read once from its base64's header (then kept by the part).
 */
export function imageFacts(part: ImagePart): ImageFacts {
  let facts = factsOf.get(part);
  if (facts === undefined) {
    const { data, mediaType } = part;
    facts = { mediaType, bytes: base64Bytes(data), ...base64ImageSize(data) };
    factsOf.set(part, facts);
  }
  return facts;
}

/**
 * Thrown when the bytes of an image part kept elsewhere (a loaded session's, in its blob store,
 * read when first sent) are gone, altered or unreadable by then.
 */
export class ImageBytesGone extends Error {
  override name = "ImageBytesGone";
}

/**
 * An image part whose `data` is `read` when first asked for, then kept; `facts` (what its record
 * knew) answer `imageFacts` without reading. `read` throws `ImageBytesGone` when it cannot give
 * the bytes, and so does `data` then. A getter, so `ImagePart` keeps its shape for every reader.
 */
export function deferredImage(facts: ImageFacts, read: () => Buffer): ImagePart {
  let data: string | undefined;
  const part: ImagePart = {
    type: "image",
    mediaType: facts.mediaType,
    get data(): string {
      data ??= read().toString("base64");
      return data;
    },
  };
  factsOf.set(part, facts);
  return part;
}

/** `part.data`, or undefined when its bytes are gone (`ImageBytesGone`). */
export function readableData(part: ImagePart): string | undefined {
  try {
    return part.data;
  } catch (error) {
    if (error instanceof ImageBytesGone) return undefined;
    throw error;
  }
}

/** Why an image whose bytes are gone is not shown. */
export const IMAGE_GONE = "its bytes are gone from the session's blob store, altered or unreadable";

/**
 * The `heldBackPlaceholder` line of the image `part`, and a message's text with the image's
 * placeholder turned into it (added at the end if the text has none). Its bytes are not read.
 */
export function holdBack(content: string, part: ImagePart, why: string) {
  const facts = imageFacts(part);
  return heldBackIn(content, facts, facts.bytes, why);
}

/** `holdBack` of an image known by its shape and size (a record's, whose bytes are gone). */
export function heldBackIn(content: string, image: ImageShape, bytes: number, why: string) {
  const shown = imagePlaceholder(image, bytes);
  const line = heldBackPlaceholder(image, bytes, why);
  const text = content.includes(shown) ? content.replace(shown, line) : `${content}\n${line}`;
  return { line, content: text };
}

/**
 * Why bytes are not an image to send: no image's magic number; not a whole image of the type
 * they announce; more pixels a side than `imageLimits.side`. (Callers bound the size in bytes,
 * `imageLimits.bytes`, before they read.)
 */
export type ImageProblem =
  | { kind: "not_image" }
  | { kind: "not_whole"; typeName: string }
  | { kind: "pixels"; width: number; height: number };

/** `bytes` as an image every provider takes, with its placeholder, or what is wrong with them. */
export function checkImage(bytes: Buffer): ImageAttachment | ImageProblem {
  const mediaType = sniffImage(bytes);
  if (mediaType === undefined) return { kind: "not_image" };
  const header = imageHeader(bytes);
  if (header === undefined || header.mediaType !== mediaType)
    return { kind: "not_whole", typeName: imageTypeNames[mediaType] };
  if (header.width > imageLimits.side || header.height > imageLimits.side)
    return { kind: "pixels", width: header.width, height: header.height };
  return {
    part: { type: "image", mediaType, data: bytes.toString("base64") },
    placeholder: imagePlaceholder(header, bytes.length),
  };
}

/**
 * An image given as base64 (an MCP server's) as an attachment when `data` is canonical base64 of
 * a whole image of `mediaType` within the bounds (`checkImage`); otherwise why it is not one, in
 * words for its placeholder (`not a whole PNG image (cut short or damaged)`).
 */
export function imagePartOf(mediaType: unknown, data: unknown): ImageAttachment | string {
  if (typeof data !== "string") return "no data";
  const image = base64Image(data);
  if (!("part" in image)) return imageProblemWords(image);
  if (image.part.mediaType === mediaType) return image;
  return `its bytes are a ${imageTypeNames[image.part.mediaType]} image`;
}

/** Why an image is not sent, in words a placeholder ends with. */
export function imageProblemWords(problem: Base64ImageProblem): string {
  switch (problem.kind) {
    case "not_base64":
      return "not base64";
    case "bytes":
      return `over ${byteSize(imageLimits.bytes)}`;
    case "not_image":
      return "not a PNG, JPEG, GIF or WebP image";
    case "not_whole":
      return `not a whole ${problem.typeName} image (cut short or damaged)`;
    case "pixels":
      return `over ${imageLimits.side} pixels a side`;
  }
}

/** Why base64 is not an image to send: not canonical base64, too many bytes, or `ImageProblem`. */
export type Base64ImageProblem =
  | ImageProblem
  | { kind: "not_base64" }
  | { kind: "bytes"; size: number };

/**
 * Canonical, padded base64 of an image, checked as `checkImage` checks bytes; the size in bytes
 * is known from the length, so an oversized image is never decoded.
 */
export function base64Image(data: string): ImageAttachment | Base64ImageProblem {
  if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) return { kind: "not_base64" };
  const size = base64Bytes(data);
  if (size > imageLimits.bytes) return { kind: "bytes", size };
  const bytes = Buffer.from(data, "base64");
  if (bytes.toString("base64") !== data) return { kind: "not_base64" };
  return checkImage(bytes);
}

/** The bytes that base64 text stands for, from its length and padding, without decoding it. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * The pixel size the header of an image in base64 gives, decoding only the start of it (a
 * JPEG's frame header may come after its metadata: then more), or undefined when there is none.
 * For estimates only: it does not check that the image is whole, as `checkImage` does.
 */
export function base64ImageSize(data: string): { width: number; height: number } | undefined {
  for (const chars of [64, 96 * 1024, data.length]) {
    const bytes = Buffer.from(data.slice(0, chars - (chars % 4)), "base64");
    const mediaType = sniffImage(bytes);
    if (mediaType === undefined) return undefined;
    const size = imageHeaderSizeOf[mediaType](bytes);
    if (size !== undefined || chars >= data.length) return size;
  }
  return undefined;
}

/** An image to send, whole, with the placeholder line that stands for it in text. */
export interface ImageAttachment {
  part: ImagePart;
  placeholder: string;
}

/** `75 B`, `1.2 KB`, `3.75 MB`, `10.00 GB` (units of 1024; MB to the hundredth, as the bound is). */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(2)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

/**
 * A size over `imageLimits.bytes` and the bound, in words that never read the same: `a 4.00 MB
 * image` and `3.75 MB`; in bytes when they would (`a 3,932,161-byte image`, `3,932,160 bytes`).
 */
export function oversize(size: number): { size: string; bound: string } {
  const bound = imageLimits.bytes;
  if (byteSize(size) !== byteSize(bound))
    return { size: `a ${byteSize(size)} image`, bound: byteSize(bound) };
  const exact = (bytes: number) => bytes.toLocaleString("en-US");
  return { size: `a ${exact(size)}-byte image`, bound: `${exact(bound)} bytes` };
}
