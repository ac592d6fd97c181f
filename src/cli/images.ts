import { open } from "node:fs/promises";
import { resolve } from "node:path";
import { byteSize, checkImage, type ImageAttachment } from "../images.js";
import { systemErrorMeaning } from "../system-errors.js";
import { limits } from "../tools/limits.js";
import { UsageError } from "./args.js";

/**
 * `--image FILE`: each file read whole and checked as `read` checks an image (the type from its
 * bytes, whole, within `limits.imageBytes` and `limits.imageSide`). The user names the file, so
 * it may be outside the workspace. A problem is a usage error, one line, before any request.
 */
export async function imageAttachments(
  paths: readonly string[],
  cwd: string,
): Promise<ImageAttachment[]> {
  const attachments: ImageAttachment[] = [];
  for (const path of paths) attachments.push(await attachment(path, cwd));
  return attachments;
}

async function attachment(path: string, cwd: string): Promise<ImageAttachment> {
  const fail = (why: string) => new UsageError(`--image ${path}${why}`);
  let bytes: Buffer;
  try {
    const handle = await open(resolve(cwd, path));
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw fail(" is not a file");
      if (info.size > limits.imageBytes)
        throw fail(
          ` is a ${byteSize(info.size)} image: images go up to ${limits.imageBytes / 1024 / 1024} MB`,
        );
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as { code?: unknown }).code;
    throw fail(`: ${typeof code === "string" ? systemErrorMeaning(code) : "cannot be read"}`);
  }
  const image = checkImage(bytes);
  if ("part" in image) return image;
  switch (image.kind) {
    case "not_image":
      throw fail(" is not a PNG, JPEG, GIF or WebP image");
    case "not_whole":
      throw fail(` is not a whole ${image.typeName} image (cut short or damaged)`);
    case "pixels":
      throw fail(
        ` is ${image.width}x${image.height} pixels: images go up to ${limits.imageSide} pixels a side`,
      );
  }
}
