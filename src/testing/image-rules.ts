import { inflateSync } from "node:zlib";

/**
 * How the strict servers check an image, as the real APIs do: one of the four media types every
 * provider takes, base64 that decodes, bytes that are an image of the type declared, a bound on
 * the size, and (for a PNG) pixel data that inflates, as a decoder needs. Written apart from the product's own image reader, so a mistake in one is caught by
 * the other. Each server says where an image may stand and words the refusal as its API does.
 */

export const allowedImageTypes = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/** What is wrong with an image's base64 `data` declared as `mediaType`. */
export type ImageFault = "media_type" | "base64" | "mismatch" | "size" | "undecodable";

/**
 * The first fault of an image, or undefined when it is a good one. `maxBytes` bounds the base64
 * text (Anthropic) or the decoded bytes (OpenAI), as `bound` says.
 */
export function imageFault(
  mediaType: string,
  data: string,
  maxBytes: number,
  bound: "base64" | "decoded",
): ImageFault | undefined {
  if (!allowedImageTypes.includes(mediaType)) return "media_type";
  if (data.length === 0 || data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data))
    return "base64";
  const bytes = Buffer.from(data, "base64");
  if ((bound === "base64" ? data.length : bytes.length) > maxBytes) return "size";
  if (magicType(bytes) !== mediaType) return "mismatch";
  return mediaType === "image/png" && !pngInflates(bytes) ? "undecodable" : undefined;
}

/** Whether a PNG's IDAT chunks, together, are a zlib stream that inflates. */
function pngInflates(b: Buffer): boolean {
  const data: Buffer[] = [];
  for (let at = 8; at + 8 <= b.length; ) {
    const length = b.readUInt32BE(at);
    if (b.toString("latin1", at + 4, at + 8) === "IDAT")
      data.push(b.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  try {
    inflateSync(Buffer.concat(data));
    return true;
  } catch {
    return false;
  }
}

function magicType(b: Buffer): string | undefined {
  const hex = b.subarray(0, 8).toString("hex");
  if (hex === "89504e470d0a1a0a") return "image/png";
  if (hex.startsWith("ffd8ff")) return "image/jpeg";
  if (/^GIF8[79]a/.test(b.toString("latin1", 0, 6))) return "image/gif";
  if (b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP")
    return "image/webp";
  return undefined;
}

/** A data URL's media type and base64, or undefined when it is not `data:TYPE;base64,DATA`. */
export function dataUrl(url: unknown): { mediaType: string; data: string } | undefined {
  const match = typeof url === "string" ? /^data:([^;,]+);base64,(.*)$/s.exec(url) : null;
  return match ? { mediaType: match[1] as string, data: match[2] as string } : undefined;
}

type Block = Record<string, unknown>;
const list = (value: unknown): Block[] => (Array.isArray(value) ? (value as Block[]) : []);

/** A server started to refuse images answers every request that holds one with this (its own text). */
export const anthropicImagesRefused = (path: string) =>
  `${path}: this model does not support image input`;

/**
 * Messages API: `image` blocks (base64 source) in user messages and inside `tool_result`
 * content, nowhere else; at most 5 MB of base64 each.
 */
export function anthropicImageProblem(body: Block, refuse: boolean): string | undefined {
  return anthropicEachImageProblem(body, refuse) ?? anthropicManyImagesProblem(body);
}

/**
 * The request's limits: at most 100 images (confirmed text, anthropics/claude-code#19822), and
 * with more than 20, none over 2000 pixels a side (confirmed text, anthropics/claude-code#24630;
 * the size read from a PNG's header only).
 */
function anthropicManyImagesProblem(body: Block): string | undefined {
  const images: [string, Block][] = [];
  for (const [i, message] of list(body.messages).entries()) {
    for (const [j, block] of list(message.content).entries()) {
      if (block.type === "image") images.push([`messages.${i}.content.${j}`, block]);
      if (block.type !== "tool_result") continue;
      for (const [k, inner] of list(block.content).entries())
        if (inner.type === "image") images.push([`messages.${i}.content.${j}.content.${k}`, inner]);
    }
  }
  if (images.length > 100)
    return `Too much media: 0 document pages + ${images.length} images > 100`;
  if (images.length <= 20) return undefined;
  for (const [path, block] of images) {
    const side = pngSide(String((block.source as Block | undefined)?.data ?? ""));
    if (side > 2000)
      return `${path}.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels`;
  }
  return undefined;
}

/** The longer side of a PNG given as base64 (from its IHDR), or 0 for another image. */
function pngSide(data: string): number {
  const head = Buffer.from(data.slice(0, 32), "base64");
  if (head.length < 24 || magicType(head) !== "image/png") return 0;
  return Math.max(head.readUInt32BE(16), head.readUInt32BE(20));
}

function anthropicEachImageProblem(body: Block, refuse: boolean): string | undefined {
  for (const [i, message] of list(body.messages).entries()) {
    for (const [j, block] of list(message.content).entries()) {
      const path = `messages.${i}.content.${j}`;
      if (block.type === "image") {
        // Approximate: the API names the block types a role takes.
        if (message.role !== "user")
          return `${path}.type: Input tag 'image' found using 'type' does not match any of the expected tags for an assistant message`;
        const problem = anthropicImage(block, path, refuse);
        if (problem) return problem;
      }
      if (block.type !== "tool_result" || !Array.isArray(block.content)) continue;
      // Confirmed text (vellum-ai/vellum-assistant#18387); the path approximate.
      if (block.is_error === true && list(block.content).some((inner) => inner.type !== "text"))
        return `${path}.tool_result: all content must be type 'text' if 'is_error' is true`;
      for (const [k, inner] of list(block.content).entries()) {
        const at = `${path}.tool_result.content.${k}`;
        if (inner.type === "text") continue;
        if (inner.type !== "image")
          return `${at}.type: Input tag '${String(inner.type)}' found using 'type' does not match any of the expected tags: 'text', 'image'`;
        const problem = anthropicImage(inner, at, refuse);
        if (problem) return problem;
      }
    }
  }
  return undefined;
}

function anthropicImage(block: Block, path: string, refuse: boolean): string | undefined {
  if (refuse) return anthropicImagesRefused(path);
  const source = (block.source ?? {}) as Block;
  if (source.type !== "base64")
    return `${path}.image.source: Input should be a valid base64 source`;
  const mediaType = String(source.media_type);
  const data = typeof source.data === "string" ? source.data : "";
  // Confirmed (anthropics/claude-code#8947).
  if (data === "") return `${path}.image.source.base64: image cannot be empty`;
  switch (imageFault(mediaType, data, 5 * 1024 * 1024, "base64")) {
    case "media_type":
      return `${path}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
    case "base64":
      return `${path}.image.source.base64.data: The image data is not valid base64`;
    case "size":
      return `${path}.image.source.base64: image exceeds 5 MB maximum: ${data.length} bytes > 5242880 bytes`;
    case "mismatch":
      return `${path}.image.source.base64.data: Image does not match the provided media type ${mediaType}`;
    case "undecodable":
      // Confirmed text (anthropics/claude-code#8647): no path, whichever image it was.
      return anthropicUnprocessable;
    default:
      return undefined;
  }
}

/** Anthropic's refusal of an image it cannot decode. */
export const anthropicUnprocessable = "Could not process image";

/** OpenAI's refusal of an image it cannot decode (openai/openai-node#1463). */
export const openaiUnprocessable =
  "You uploaded an unsupported image. Please make sure your image is valid.";

/** OpenAI's refusal of an image it cannot take: a bad data URL, type, encoding or size. */
export const unsupportedImage =
  "You uploaded an unsupported image. Please make sure your image is below 20 MB in size and is of one the following formats: ['png', 'jpeg', 'gif', 'webp'].";
/** OpenAI's refusal of an image sent to a model without vision. */
export const openaiImagesRefused =
  "Invalid content type. image_url is only supported by certain models.";

const openaiImage = (url: unknown, refuse: boolean): string | undefined => {
  if (refuse) return openaiImagesRefused;
  const image = dataUrl(url);
  if (!image) return unsupportedImage;
  const fault = imageFault(image.mediaType, image.data, 20 * 1024 * 1024, "decoded");
  if (fault === "undecodable") return openaiUnprocessable;
  return fault === undefined ? undefined : unsupportedImage;
};

/** OpenAI's limit on a request's size: 50 MB of payload, documented (the wording approximate). */
export const openaiMaxBody = { bytes: 50_000_000, message: "Request too large: 50 MB at most." };

/** OpenAI's limit on the images of one request (documented; the wording is approximate). */
export const openaiMaxImages = 500;
const tooManyImages = (count: number) =>
  count > openaiMaxImages
    ? `Too many images in the request: ${count} > ${openaiMaxImages}.`
    : undefined;

/** Chat Completions: `image_url` parts in user messages only (tool messages are text only). */
export function chatImageProblem(body: Block, refuse: boolean): string | undefined {
  const count = list(body.messages).flatMap((message) =>
    list(message.content).filter((part) => part.type === "image_url"),
  ).length;
  const many = tooManyImages(count);
  if (many !== undefined) return many;
  for (const message of list(body.messages)) {
    for (const part of list(message.content)) {
      if (part.type === "text") continue;
      if (part.type !== "image_url" || message.role !== "user")
        return `Invalid value: '${String(part.type)}'. Supported values are: 'text'.`;
      const problem = openaiImage((part.image_url as Block | undefined)?.url, refuse);
      if (problem) return problem;
    }
  }
  return undefined;
}

/**
 * Responses: `input_image` in user messages and in a `function_call_output`'s output list, whose
 * items are `input_text` and `input_image` (and files, which no adapter sends).
 */
export function responsesImageProblem(body: Block, refuse: boolean): string | undefined {
  const count = list(body.input).flatMap((item) =>
    [...list(item.output), ...list(item.content)].filter((part) => part.type === "input_image"),
  ).length;
  const many = tooManyImages(count);
  if (many !== undefined) return many;
  for (const item of list(body.input)) {
    const parts = item.type === "function_call_output" ? list(item.output) : list(item.content);
    const allowed =
      item.type === "function_call_output" || item.role === "user"
        ? ["input_text", "input_image"]
        : ["output_text", "refusal"];
    for (const part of parts) {
      // Approximate: the API lists the part types it takes there.
      if (!allowed.includes(String(part.type)))
        return `Invalid value: '${String(part.type)}'. Supported values are: ${allowed.map((type) => `'${type}'`).join(" and ")}.`;
      if (part.type !== "input_image") continue;
      const problem = openaiImage(part.image_url, refuse);
      if (problem) return problem;
    }
  }
  return undefined;
}
