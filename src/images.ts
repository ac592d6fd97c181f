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
  const size = sizeOf[mediaType](bytes);
  if (size === undefined || size.width < 1 || size.height < 1) return undefined;
  return { mediaType, ...size };
}

/** The one-line text that stands where an image is: `[image: image/png, 2x2, 1.2 KB]`. */
export function imagePlaceholder(image: ImageHeader, bytes: number): string {
  return `[image: ${image.mediaType}, ${image.width}x${image.height}, ${byteSize(bytes)}]`;
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
 * An image given as base64 (an MCP server's) as an attachment, or undefined unless `data` is
 * canonical base64 of a whole image of `mediaType` within the bounds (`checkImage`).
 */
export function imagePartOf(mediaType: unknown, data: unknown): ImageAttachment | undefined {
  if (typeof data !== "string") return undefined;
  const image = base64Image(data);
  return "part" in image && image.part.mediaType === mediaType ? image : undefined;
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
  const size = (data.length / 4) * 3 - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
  if (size > imageLimits.bytes) return { kind: "bytes", size };
  const bytes = Buffer.from(data, "base64");
  if (bytes.toString("base64") !== data) return { kind: "not_base64" };
  return checkImage(bytes);
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
    const size = headerSizeOf[mediaType](bytes);
    if (size !== undefined || chars >= data.length) return size;
  }
  return undefined;
}

/** An image to send, whole, with the placeholder line that stands for it in text. */
export interface ImageAttachment {
  part: ImagePart;
  placeholder: string;
}

/** `75 B`, `1.2 KB`, `3.8 MB` (units of 1024). */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

type Size = { width: number; height: number } | undefined;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const sizeOf: Record<ImageMediaType, (b: Buffer) => Size> = {
  "image/png": pngSize,
  "image/jpeg": jpegSize,
  "image/gif": gifSize,
  "image/webp": webpSize,
};

/** The sizes in the headers alone, from the first bytes of a file (all a JPEG's segments up to its frame header). */
const headerSizeOf: Record<ImageMediaType, (b: Buffer) => Size> = {
  "image/png": (b) =>
    b.length >= 24 && b.toString("latin1", 12, 16) === "IHDR"
      ? { width: b.readUInt32BE(16), height: b.readUInt32BE(20) }
      : undefined,
  "image/jpeg": (b) => jpegWalk(b, true),
  "image/gif": gifHeader,
  "image/webp": webpHeader,
};

/** IHDR first; every chunk whole, to `IEND`. */
function pngSize(b: Buffer): Size {
  let size: Size;
  for (let at = 8; at + 12 <= b.length; ) {
    const length = b.readUInt32BE(at);
    const type = b.toString("latin1", at + 4, at + 8);
    const end = at + 12 + length;
    if (end > b.length) return undefined;
    if (at === 8) {
      if (type !== "IHDR" || length !== 13) return undefined;
      size = { width: b.readUInt32BE(at + 8), height: b.readUInt32BE(at + 12) };
    }
    if (type === "IEND") return size;
    at = end;
  }
  return undefined;
}

/** Segments walked to the start of scan; a frame header (SOFn) before it; `EOI` at the end. */
function jpegSize(b: Buffer): Size {
  return jpegWalk(b, false);
}

/** The walk of `jpegSize`; with `header`, it ends at the frame header, whatever follows. */
function jpegWalk(b: Buffer, header: boolean): Size {
  let size: Size;
  for (let at = 2; at + 4 <= b.length; ) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1] as number;
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = b.readUInt16BE(at + 2);
    if (length < 2 || at + 2 + length > b.length) return undefined;
    const frame = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
    if (frame) {
      if (length < 8) return undefined;
      size = { height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) };
      if (header) return size;
    }
    if (marker === 0xda) {
      const whole = b.length >= at + 4 && b[b.length - 2] === 0xff && b[b.length - 1] === 0xd9;
      return whole ? size : undefined;
    }
    at += 2 + length;
  }
  return undefined;
}

/** The logical screen's size; the trailer byte at the end. */
function gifSize(b: Buffer): Size {
  if (b.length < 14 || b[b.length - 1] !== 0x3b) return undefined;
  return gifHeader(b);
}

function gifHeader(b: Buffer): Size {
  return b.length < 10 ? undefined : { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
}

/** The size the RIFF header promises is there; the first chunk (VP8, VP8L or VP8X) gives the size. */
function webpSize(b: Buffer): Size {
  if (b.length < 30 || b.readUInt32LE(4) + 8 > b.length) return undefined;
  return webpHeader(b);
}

function webpHeader(b: Buffer): Size {
  if (b.length < 30) return undefined;
  const chunk = b.toString("latin1", 12, 16);
  if (chunk === "VP8 ") {
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return undefined;
    return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  }
  if (chunk === "VP8L") {
    if (b[20] !== 0x2f) return undefined;
    const bits = b.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8X") return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  return undefined;
}
