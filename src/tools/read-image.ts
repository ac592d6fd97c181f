import type { FileHandle } from "node:fs/promises";
import {
  checkImage,
  IMAGE_SNIFF_BYTES,
  type ImageMediaType,
  type ImageProblem,
  oversize,
  sniffImage,
} from "../images.js";
import type { ToolResult } from "../types.js";
import { ToolError } from "./define.js";
import { limits } from "./limits.js";
import { Digest, type SeenContent } from "./seen.js";

/** The image type the file's first bytes announce, if any (`sniffImage`). */
export async function imageTypeOf(handle: FileHandle): Promise<ImageMediaType | undefined> {
  const head = Buffer.alloc(IMAGE_SNIFF_BYTES);
  const { bytesRead } = await handle.read(head, 0, head.length, 0);
  return sniffImage(head.subarray(0, bytesRead));
}

/**
 * An image file as a result: the image whole as a part, its placeholder as the text. Over the
 * bounds (`limits.imageBytes`, `limits.imageSide`) or not whole, it is refused in one line:
 * never a half image. `record` gets the hash of the bytes shown.
 */
export async function readImage(
  handle: FileHandle,
  shown: string,
  record: (seen: SeenContent) => void,
  signal?: AbortSignal,
): Promise<ToolResult> {
  const { size } = await handle.stat();
  const bytes = size > limits.imageBytes ? undefined : await readBounded(handle, size, signal);
  if (bytes === undefined) {
    const words = oversize(size);
    throw new ToolError(
      `${shown} is ${words.size}: read shows images up to ${words.bound} (5 MB in base64, what providers take)`,
    );
  }
  const image = checkImage(bytes);
  if (!("part" in image)) throw new ToolError(`${shown} ${refusal(image)}`);
  const digest = new Digest();
  digest.update(bytes);
  record(digest.finish());
  return { content: image.placeholder, parts: [image.part] };
}

/** What `read` says of bytes that announced an image and are not one to show. */
function refusal(problem: ImageProblem): string {
  switch (problem.kind) {
    case "not_whole":
      return `is not a whole ${problem.typeName} image (cut short or damaged): read shows whole images only`;
    case "not_image":
      // It announced an image when it was opened; it changed since.
      return "is not a whole image (cut short or damaged): read shows whole images only";
    case "pixels":
      return `is ${problem.width}x${problem.height} pixels: read shows images up to ${limits.imageSide} pixels a side`;
  }
}

/** The whole file, or undefined when it holds more than `max` bytes (it grew since its size was taken). */
async function readBounded(
  handle: FileHandle,
  max: number,
  signal?: AbortSignal,
): Promise<Buffer | undefined> {
  const buffer = Buffer.allocUnsafe(max + 1);
  let length = 0;
  for (;;) {
    if (signal?.aborted) throw new Error("aborted");
    const room = Math.min(buffer.length - length, 1 << 20);
    if (room === 0) return undefined;
    const { bytesRead } = await handle.read(buffer, length, room, length);
    if (bytesRead === 0) return Buffer.from(buffer.subarray(0, length));
    length += bytesRead;
  }
}
