import { constants } from "node:fs";
import { open, stat } from "node:fs/promises";
import { resolve } from "node:path";
import {
  type Base64ImageProblem,
  base64Image,
  checkImage,
  IMAGE_SNIFF_BYTES,
  type ImageAttachment,
  imageTypeNames,
  oversize,
  sniffImage,
} from "../images.js";
import { systemErrorMeaning } from "../system-errors.js";
import { limits } from "../tools/limits.js";
import { UsageError } from "./exit.js";

/**
 * The prompt's images, from every front end: `--image FILE`, a stream-json user line's
 * `images`, an editor's image blocks. Each is checked as `read` checks an image (the type from
 * its bytes, whole, within `limits.imageBytes` and `limits.imageSide`); what is wrong is said
 * in words that follow the image's name (` is not a PNG, JPEG, GIF or WebP image`).
 */

/**
 * `--image FILE`: each file read whole and checked. The user names the file, so it may be
 * outside the workspace. A problem is a usage error, one line, before any request.
 */
export async function imageAttachments(
  paths: readonly string[],
  cwd: string,
): Promise<ImageAttachment[]> {
  const attachments: ImageAttachment[] = [];
  for (const path of paths) {
    const image = await imageFile(path, cwd);
    if (typeof image === "string") throw new UsageError(`--image ${path}${image}`);
    attachments.push(image);
  }
  return attachments;
}

/**
 * The image in the file at `path` (relative to `cwd`), or what is wrong with it. Opened without
 * blocking, so a FIFO there is refused at once instead of waiting for a writer forever.
 */
export async function imageFile(path: string, cwd: string): Promise<ImageAttachment | string> {
  let bytes: Buffer;
  try {
    const handle = await open(resolve(cwd, path), constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile()) return " is not a regular file";
      // The type from the first bytes before the size: a huge file of no image is no image.
      const head = Buffer.alloc(IMAGE_SNIFF_BYTES);
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      if (sniffImage(head.subarray(0, bytesRead)) === undefined)
        return problemText({ kind: "not_image" });
      if (info.size > limits.imageBytes) return problemText({ kind: "bytes", size: info.size });
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return `: ${typeof code === "string" ? systemErrorMeaning(code) : "cannot be read"}`;
  }
  const image = checkImage(bytes);
  return "part" in image ? image : problemText(image);
}

/**
 * The image a path typed at the prompt names, a refusal when it is an image that cannot be sent
 * (too big, not whole, too many pixels), or undefined when it is no image: no file there, not a
 * regular file, unreadable, or bytes that are no image's (then the path is text). Known by its
 * first bytes before the size is checked, so a big file that is no image stays text.
 */
export async function typedImageFile(
  path: string,
): Promise<ImageAttachment | { refusal: string } | undefined> {
  try {
    // Checked before it is opened, and opened without blocking: a FIFO swapped in between is
    // refused by the stat of the descriptor, never waited on.
    if (!(await stat(path)).isFile()) return undefined;
    const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const head = Buffer.alloc(IMAGE_SNIFF_BYTES);
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      if (sniffImage(head.subarray(0, bytesRead)) === undefined) return undefined;
      const info = await handle.stat();
      if (!info.isFile()) return undefined;
      if (info.size > limits.imageBytes)
        return { refusal: problemText({ kind: "bytes", size: info.size }) };
      const image = checkImage(await handle.readFile());
      return "part" in image ? image : { refusal: problemText(image) };
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * An image given as base64 with its media type (a program's, an editor's), or what is wrong with
 * it: the type its bytes have must be the one it says.
 */
export function inlineImage(mediaType: string, data: string): ImageAttachment | string {
  const image = base64Image(data);
  if (!("part" in image)) return problemText(image);
  if (image.part.mediaType === mediaType) return image;
  return ` is a ${imageTypeNames[image.part.mediaType]} image, not ${mediaType} as it says`;
}

function problemText(problem: Base64ImageProblem): string {
  switch (problem.kind) {
    case "not_base64":
      return " is not base64";
    case "bytes": {
      const words = oversize(problem.size);
      return ` is ${words.size}: images go up to ${words.bound}`;
    }
    case "not_image":
      return " is not a PNG, JPEG, GIF or WebP image";
    case "not_whole":
      return ` is not a whole ${problem.typeName} image (cut short or damaged)`;
    case "pixels":
      return ` is ${problem.width}x${problem.height} pixels: images go up to ${limits.imageSide} pixels a side`;
  }
}
