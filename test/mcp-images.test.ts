import { describe, expect, it } from "vitest";
import { receiptOf } from "../src/mcp/result.js";
import { secretRedactor } from "../src/secrets.js";
import { gif, jpeg, png } from "./support/images.js";

/** MCP image content becomes image parts; what no provider could take stays a placeholder. */

const plain = (text: string) => text;

describe("an MCP result with images", () => {
  it("keeps text and images in order as parts, with placeholders in its text", () => {
    const shot = png(2, 2);
    const logo = jpeg(3, 5);
    const result = {
      content: [
        { type: "text", text: "Here is the screen:" },
        { type: "image", mimeType: "image/png", data: shot.toString("base64") },
        { type: "image", mimeType: "image/jpeg", data: logo.toString("base64") },
        { type: "text", text: "and the logo." },
      ],
    };
    const pngLine = `[image: image/png, 2x2, ${shot.length} B]`;
    const jpegLine = `[image: image/jpeg, 3x5, ${logo.length} B]`;
    expect(receiptOf(result, plain)).toEqual({
      content: ["Here is the screen:", pngLine, jpegLine, "and the logo."].join("\n"),
      isError: false,
      parts: [
        { type: "text", text: "Here is the screen:" },
        { type: "image", mediaType: "image/png", data: shot.toString("base64") },
        { type: "image", mediaType: "image/jpeg", data: logo.toString("base64") },
        { type: "text", text: "and the logo." },
      ],
    });
  });

  it("leaves as placeholders saying why an image of another type than it says, one cut short, an unsupported type, and audio", () => {
    const result = {
      content: [
        { type: "image", mimeType: "image/png", data: gif().toString("base64") },
        {
          type: "image",
          mimeType: "image/png",
          data: png(2, 2).subarray(0, 30).toString("base64"),
        },
        { type: "image", mimeType: "image/bmp", data: "Qk0=" },
        { type: "audio", mimeType: "audio/wav", data: "AA==" },
      ],
    };
    expect(receiptOf(result, plain)).toEqual({
      content: [
        `[image not shown: image/png, ${gif().length} B: its bytes are a GIF image]`,
        "[image not shown: image/png, 30 B: not a whole PNG image (cut short or damaged)]",
        "[image not shown: image/bmp, 2 B: not a PNG, JPEG, GIF or WebP image]",
        "[audio: audio/wav, 1 B]",
      ].join("\n"),
      isError: false,
    });
  });

  it("redacts the text parts as it redacts the text", () => {
    const redact = secretRedactor({ DEPLOY_KEY: "dk-0123456789abcdef" });
    const shot = png(1, 1);
    const result = {
      content: [
        { type: "text", text: "key dk-0123456789abcdef" },
        { type: "image", mimeType: "image/png", data: shot.toString("base64") },
      ],
      isError: true,
    };
    expect(receiptOf(result, redact)).toEqual({
      content: `key [redacted]\n[image: image/png, 1x1, ${shot.length} B]`,
      isError: true,
      parts: [
        { type: "text", text: "key [redacted]" },
        { type: "image", mediaType: "image/png", data: shot.toString("base64") },
      ],
    });
  });
});
