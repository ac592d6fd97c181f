import { describe, expect, it } from "vitest";
import * as anthropic from "../src/testing/anthropic-server.js";
import * as chat from "../src/testing/openai-server.js";
import { useCleanup } from "./support/cleanup.js";
import { png } from "./support/images.js";

/** The strict servers refuse a request over the APIs' limits on images, in their words. */

const track = useCleanup();
const block = (bytes: Buffer) => ({
  type: "image",
  source: { type: "base64", media_type: "image/png", data: bytes.toString("base64") },
});
const anthropicBody = (images: Buffer[]) => ({
  model: "local-model",
  max_tokens: 1024,
  messages: [{ role: "user", content: [{ type: "text", text: "look" }, ...images.map(block)] }],
});
const chatBody = (images: Buffer[]) => ({
  model: "local-model",
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "look" },
        ...images.map((bytes) => ({
          type: "image_url",
          image_url: { url: `data:image/png;base64,${bytes.toString("base64")}` },
        })),
      ],
    },
  ],
});
const times = (count: number, bytes: Buffer) => Array.from({ length: count }, () => bytes);

describe("the strict servers' limits on a request's images", () => {
  it("Messages: at most 100 images, and none over 2000 pixels a side once there are more than 20", () => {
    const small = png(2, 2);
    const wide = png(2500, 1);
    expect(
      [
        anthropicBody(times(100, small)),
        anthropicBody(times(101, small)),
        anthropicBody(times(20, wide)),
        anthropicBody([...times(20, small), wide]),
      ].map(anthropic.validate),
    ).toEqual([
      undefined,
      "Too much media: 0 document pages + 101 images > 100",
      undefined,
      "messages.0.content.21.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels",
    ]);
  });

  it("Chat Completions: at most 500 images", () => {
    const small = png(2, 2);
    expect([chatBody(times(500, small)), chatBody(times(501, small))].map(chat.validate)).toEqual([
      undefined,
      "Too many images in the request: 501 > 500.",
    ]);
  });

  it("Messages answers a request over 32 MB with 413 request_too_large", async () => {
    const server = track(
      await anthropic.startAnthropicServer([anthropic.stream(anthropic.turn({ text: "ok" }))]),
    );
    const noise = Buffer.alloc(3_000_000, 7);
    png(2, 2).copy(noise);
    const response = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k" },
      body: JSON.stringify(anthropicBody(times(9, noise))),
    });
    expect([response.status, await response.json()]).toEqual([
      413,
      {
        type: "error",
        error: { type: "request_too_large", message: "Request exceeds the maximum size" },
        request_id: "req_local",
      },
    ]);
  });
});
