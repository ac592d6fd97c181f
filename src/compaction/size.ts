import { imageFacts, imageLimits } from "../images.js";
import type { ImagePart, Message, ToolSpec } from "../types.js";

/**
 * Token estimates without a tokenizer: one token per 4 characters of what a request carries
 * (texts, tool inputs as JSON, tool results, the model's thinking with its signatures, the system
 * prompt, the tool specs as JSON), plus a few tokens of framing per message, and each image as
 * its provider counts it from its pixel size (`imageTokens`), never by its base64. Providers
 * count differently; `CompactingClient` measures against what the provider reported for the last
 * request and scales its estimates up when the provider counted more.
 */
export const charsPerToken = 4;
const framingPerMessage = 4;

/**
 * Whose rule counts an image: `anthropic` (the Messages API) or `openai` (Chat Completions and
 * Responses). Without one, an image counts as the larger of the two.
 */
export type ImageTokenRule = "anthropic" | "openai";

export function textTokens(text: string): number {
  return Math.ceil(text.length / charsPerToken);
}

/**
 * The tokens an image of `width` x `height` pixels costs, by the provider's published rule.
 *
 * Anthropic (docs.anthropic.com, Vision, "Evaluate image size" and "Calculate image costs"):
 * `tokens = (width px * height px) / 750`; an image whose long edge is over 1568 pixels, or that
 * would be over about 1600 tokens, is first scaled down, keeping its aspect ratio (the page's
 * table puts 1092x1092 at about 1590 tokens, 1000x1000 at 1334, 200x200 at 54).
 *
 * OpenAI (platform.openai.com, Images and vision, "Calculating costs", detail `high`, which the
 * default `auto` may choose): scaled to fit a 2048x2048 square, then so that its short side is at
 * most 768 pixels; 170 tokens for each 512-pixel tile it covers, plus 85 (1024x1024 costs 765,
 * 2048x4096 costs 1105). Newer models count patches instead; the measured count corrects the
 * estimate (`CompactingClient`).
 */
export function imageTokens(width: number, height: number, rule?: ImageTokenRule): number {
  if (rule === "anthropic") return anthropicImageTokens(width, height);
  if (rule === "openai") return openaiImageTokens(width, height);
  return Math.max(anthropicImageTokens(width, height), openaiImageTokens(width, height));
}

function anthropicImageTokens(width: number, height: number): number {
  const scale = Math.min(
    1,
    1568 / Math.max(width, height),
    Math.sqrt((1600 * 750) / (width * height)),
  );
  // Whole pixels, down (with a hair of slack: 1568/3000 × 3000 is 1568, not 1567).
  const side = (pixels: number) => Math.max(1, Math.floor(pixels * scale + 1e-6));
  return Math.ceil((side(width) * side(height)) / 750);
}

function openaiImageTokens(width: number, height: number): number {
  const box = Math.min(1, 2048 / Math.max(width, height));
  const short = Math.min(1, 768 / (Math.min(width, height) * box));
  const tiles = (pixels: number) => Math.max(1, Math.ceil(Math.round(pixels * box * short) / 512));
  return 85 + 170 * tiles(width) * tiles(height);
}

/**
 * An image part's tokens, from its size (read from its header, or what its record knew, never
 * its bytes); an image whose pixels are not known counts as the largest allowed.
 */
function imagePartTokens(part: ImagePart, rule: ImageTokenRule | undefined): number {
  const { width, height } = imageFacts(part);
  const size =
    width !== undefined && height !== undefined
      ? { width, height }
      : { width: imageLimits.side, height: imageLimits.side };
  return imageTokens(size.width, size.height, rule);
}

/**
 * A message's tokens: its text (for a message with images, the text with a placeholder line
 * where each image stands) and each image by `rule`.
 */
export function messageTokens(message: Message, rule?: ImageTokenRule): number {
  switch (message.role) {
    case "user":
    case "tool": {
      let tokens = framingPerMessage + textTokens(message.content);
      for (const part of message.parts ?? [])
        if (part.type === "image") tokens += imagePartTokens(part, rule);
      return tokens;
    }
    case "assistant": {
      let chars = message.content.length;
      for (const call of message.toolCalls)
        chars += call.id.length + call.name.length + JSON.stringify(call.input).length;
      for (const part of message.reasoning ?? [])
        chars +=
          part.type === "thinking"
            ? part.text.length + (part.signature?.length ?? 0)
            : part.data.length;
      return framingPerMessage + Math.ceil(chars / charsPerToken);
    }
  }
}

export function messagesTokens(
  messages: readonly Message[],
  from = 0,
  to = messages.length,
  rule?: ImageTokenRule,
) {
  let total = 0;
  for (let i = from; i < to; i++) total += messageTokens(messages[i] as Message, rule);
  return total;
}

export function requestTokens(
  request: { system: string; messages: readonly Message[]; tools: readonly ToolSpec[] },
  rule?: ImageTokenRule,
): number {
  return (
    textTokens(request.system) +
    textTokens(request.tools.length > 0 ? JSON.stringify(request.tools) : "") +
    messagesTokens(request.messages, 0, request.messages.length, rule)
  );
}
