import { describe, expect, it } from "vitest";
import * as anthropic from "../src/testing/anthropic-server.js";
import { unsupportedImage } from "../src/testing/image-rules.js";
import * as chat from "../src/testing/openai-server.js";
import * as responses from "../src/testing/responses-server.js";
import { gif, jpeg, png, webp } from "./support/images.js";

/** The strict servers refuse a malformed or misplaced image as the real APIs do. */

const data = png(2, 2).toString("base64");
const big = Buffer.alloc(5 * 1024 * 1024, 1);
png(2, 2).copy(big);
const bigData = big.toString("base64");

const anthropicBody = (block: Record<string, unknown>, role = "user") => ({
  model: "local-model",
  max_tokens: 1024,
  messages:
    role === "user"
      ? [{ role: "user", content: [{ type: "text", text: "look" }, block] }]
      : [
          { role: "user", content: "look" },
          { role: "assistant", content: [block] },
        ],
});
const anthropicImage = (mediaType: string, bytes: string) => ({
  type: "image",
  source: { type: "base64", media_type: mediaType, data: bytes },
});
const inToolResult = (block: Record<string, unknown>) => ({
  model: "local-model",
  max_tokens: 1024,
  messages: [
    { role: "user", content: "look" },
    { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "shot", input: {} }] },
    {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "c1", content: [block], is_error: false }],
    },
  ],
});

const erroredToolResult = (block: Record<string, unknown>) => ({
  model: "local-model",
  max_tokens: 1024,
  messages: [
    { role: "user", content: "look" },
    { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "shot", input: {} }] },
    {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "c1", content: [block], is_error: true }],
    },
  ],
});

describe("the Messages server's image rules", () => {
  it("takes each image type in a user message and in a tool_result", () => {
    const images = [
      ["image/png", png(2, 2)],
      ["image/jpeg", jpeg()],
      ["image/gif", gif()],
      ["image/webp", webp()],
    ] as const;
    const bodies = images.flatMap(([type, bytes]) => [
      anthropicBody(anthropicImage(type, bytes.toString("base64"))),
      inToolResult(anthropicImage(type, bytes.toString("base64"))),
    ]);
    expect(bodies.map(anthropic.validate)).toEqual(bodies.map(() => undefined));
  });

  it("refuses a bad media type, bad base64, bytes of another type, an oversized image and one in an assistant message", () => {
    const at = "messages.0.content.1";
    expect([
      anthropic.validate(anthropicBody(anthropicImage("image/bmp", data))),
      anthropic.validate(anthropicBody(anthropicImage("image/png", `${data}!`))),
      anthropic.validate(anthropicBody(anthropicImage("image/jpeg", data))),
      anthropic.validate(anthropicBody(anthropicImage("image/png", bigData))),
      anthropic.validate(inToolResult(anthropicImage("image/png", "aGVsbG8="))),
      anthropic.validate(anthropicBody(anthropicImage("image/png", data), "assistant")),
      anthropic.validate(anthropicBody(anthropicImage("image/png", ""))),
      anthropic.validate(erroredToolResult(anthropicImage("image/png", data))),
    ]).toEqual([
      `${at}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`,
      `${at}.image.source.base64.data: The image data is not valid base64`,
      `${at}.image.source.base64.data: Image does not match the provided media type image/jpeg`,
      `${at}.image.source.base64: image exceeds 5 MB maximum: ${bigData.length} bytes > 5242880 bytes`,
      "messages.2.content.0.tool_result.content.0.image.source.base64.data: Image does not match the provided media type image/png",
      "messages.1.content.0.type: Input tag 'image' found using 'type' does not match any of the expected tags for an assistant message",
      `${at}.image.source.base64: image cannot be empty`,
      "messages.2.content.0.tool_result: all content must be type 'text' if 'is_error' is true",
    ]);
  });
});

const chatBody = (messages: Record<string, unknown>[]) => ({ model: "local-model", messages });
const chatImage = (url: string) => ({ type: "image_url", image_url: { url } });

describe("the Chat Completions server's image rules", () => {
  it("takes an image in a user message after tool messages, and refuses one in a tool message or malformed", () => {
    const called = [
      { role: "user", content: "look" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "shot", arguments: "{}" } }],
      },
    ];
    const followedBy = (url: string) =>
      chatBody([
        ...called,
        { role: "tool", tool_call_id: "c1", content: "[image]" },
        { role: "user", content: [chatImage(url)] },
      ]);
    expect([
      chat.validate(followedBy(`data:image/png;base64,${data}`)),
      chat.validate(
        chatBody([
          ...called,
          {
            role: "tool",
            tool_call_id: "c1",
            content: [chatImage(`data:image/png;base64,${data}`)],
          },
        ]),
      ),
      chat.validate(followedBy(`data:image/bmp;base64,${data}`)),
      chat.validate(followedBy("data:image/png;base64,aGVsbG8=")),
      chat.validate(followedBy(`data:image/png;base64,${data.slice(1)}`)),
    ]).toEqual([
      undefined,
      "Invalid value: 'image_url'. Supported values are: 'text'.",
      unsupportedImage,
      unsupportedImage,
      unsupportedImage,
    ]);
  });
});

describe("the Responses server's image rules", () => {
  it("takes input_image in a function_call_output and a user message, nowhere else, and refuses a malformed one", () => {
    const body = (output: unknown, extra: Record<string, unknown>[] = []) => ({
      model: "local-model",
      input: [
        { type: "message", role: "user", content: "look" },
        { type: "function_call", call_id: "c1", name: "shot", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output },
        ...extra,
      ],
    });
    const image = (url: string) => ({ type: "input_image", image_url: url });
    const good = image(`data:image/png;base64,${data}`);
    expect([
      responses.validate(body([{ type: "input_text", text: "screen:" }, good])),
      responses.validate(body("text", [{ type: "message", role: "user", content: [good] }])),
      responses.validate(body("text", [{ type: "message", role: "assistant", content: [good] }])),
      responses.validate(body([image(`data:image/webp;base64,${data}`)])),
      responses.validate(body([{ type: "image_url", image_url: { url: "x" } }])),
    ]).toEqual([
      undefined,
      undefined,
      "Invalid value: 'input_image'. Supported values are: 'output_text' and 'refusal'.",
      unsupportedImage,
      "Invalid value: 'image_url'. Supported values are: 'input_text' and 'input_image'.",
    ]);
  });
});
