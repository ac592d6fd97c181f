import { dataUrl } from "./image-rules.js";
import type { Body } from "./sse-server.js";

/**
 * How the strict servers count a request's tokens: one per 4 bytes of its body as JSON, except
 * an image, which counts as its API counts it from its pixel size, not by its base64. Written
 * apart from the product's estimates (`src/compaction/size.ts`), so a mistake in one is caught
 * by the other.
 *
 * - Messages API (`image` blocks): width × height / 750, after scaling down to at most 1568
 *   pixels on the long side and about 1600 tokens (Anthropic, "Vision", calculate image costs).
 * - Chat Completions (`image_url`) and Responses (`input_image`), detail high: scaled down to fit
 *   2048 × 2048, then to at most 768 pixels on the short side; 170 tokens per 512-pixel tile
 *   and 85 more (OpenAI, "Images and vision", calculating costs).
 */
export function bodyTokens(body: Body): number {
  let images = 0;
  const json = JSON.stringify(body, (_key, value: unknown) => {
    const image = imageIn(value);
    if (image === undefined) return value;
    images += image.tokens;
    return image.without;
  });
  return Math.ceil(Buffer.byteLength(json) / 4) + images;
}

type Block = Record<string, unknown>;

/** The tokens of the image `value` is, and the block without its bytes; undefined for others. */
function imageIn(value: unknown): { tokens: number; without: Block } | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const block = value as Block;
  if (block.type === "image") {
    const source = block.source as Block | undefined;
    if (source?.type !== "base64" || typeof source.data !== "string") return undefined;
    const size = pixelSize(Buffer.from(source.data, "base64"));
    if (!size) return undefined;
    return {
      tokens: anthropicTokens(size.width, size.height),
      without: { ...block, source: { ...source, data: "" } },
    };
  }
  const url =
    block.type === "image_url"
      ? (block.image_url as Block | undefined)?.url
      : block.type === "input_image"
        ? block.image_url
        : undefined;
  const image = dataUrl(url);
  const size = image && pixelSize(Buffer.from(image.data, "base64"));
  if (!size) return undefined;
  const without =
    block.type === "image_url" ? { ...block, image_url: { url: "" } } : { ...block, image_url: "" };
  return { tokens: openaiTokens(size.width, size.height), without };
}

function anthropicTokens(width: number, height: number): number {
  const scale = Math.min(
    1,
    1568 / Math.max(width, height),
    Math.sqrt(1_200_000 / (width * height)),
  );
  // Whole pixels, down (a hair of slack, so 1568/3000 × 3000 is 1568, not 1567).
  const side = (pixels: number) => Math.floor(pixels * scale + 1e-6);
  return Math.ceil((side(width) * side(height)) / 750);
}

function openaiTokens(width: number, height: number): number {
  const box = Math.min(1, 2048 / Math.max(width, height));
  const short = Math.min(1, 768 / (Math.min(width, height) * box));
  const tiles = (side: number) => Math.ceil(Math.round(side * box * short) / 512);
  return 85 + 170 * tiles(width) * tiles(height);
}

/** The pixel size in an image's header (PNG, GIF, WebP, JPEG), or undefined. */
function pixelSize(b: Buffer): { width: number; height: number } | undefined {
  if (b.length >= 24 && b.toString("latin1", 12, 16) === "IHDR")
    return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 10 && b.toString("latin1", 0, 3) === "GIF")
    return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 30 && b.toString("latin1", 8, 12) === "WEBP") {
    const kind = b.toString("latin1", 12, 16);
    if (kind === "VP8X") return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
    if (kind === "VP8L") {
      const bits = b.readUInt32LE(21);
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    }
    return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  }
  // JPEG: the segments up to a frame header (SOF0 to SOF15, not DHT, JPG or DAC).
  for (let at = 2; b[0] === 0xff && b[1] === 0xd8 && at + 9 <= b.length; ) {
    const marker = b[at + 1] as number;
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker))
      return { width: b.readUInt16BE(at + 7), height: b.readUInt16BE(at + 5) };
    at += 2 + b.readUInt16BE(at + 2);
  }
  return undefined;
}
