import * as acp from "@agentclientprotocol/sdk";
import { inlineImage } from "../app/prompt-images.js";
import type { ImageAttachment } from "../images.js";

/** A `session/prompt` as a turn's prompt: its text, and its images to send after it. */
export interface AcpPrompt {
  text: string;
  images: ImageAttachment[];
}

/**
 * The prompt's text (its text blocks, and the address of each resource link, a line each) and
 * its image blocks, each checked as `--image` checks a file (`inlineImage`). A bad image, or a
 * prompt with neither text nor an image (an empty user message the provider would refuse), is
 * the request's error, before anything is recorded.
 */
export function promptOf(prompt: readonly acp.ContentBlock[]): AcpPrompt {
  const images: ImageAttachment[] = [];
  for (const block of prompt) {
    if (block.type !== "image") continue;
    const image = inlineImage(block.mimeType, block.data);
    if (typeof image === "string")
      throw acp.RequestError.invalidParams(
        undefined,
        `image ${images.length + 1} of the prompt${image}`,
      );
    images.push(image);
  }
  const text = prompt
    .map((block) =>
      block.type === "text" ? block.text : block.type === "resource_link" ? block.uri : "",
    )
    .filter((part) => part !== "")
    .join("\n");
  if (text.trim() === "" && images.length === 0)
    throw acp.RequestError.invalidParams(undefined, "the prompt has no text");
  return { text: text.trim() === "" ? "" : text, images };
}
