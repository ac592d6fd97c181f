import { describe, expect, it } from "vitest";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import { OpenAIResponsesModelClient } from "../src/providers/openai-responses.js";
import { ImageFallbackClient, ImagesRefusedError, imageKey } from "../src/runner/images.js";
import * as anthropic from "../src/testing/anthropic-server.js";
import {
  anthropicUnprocessable,
  openaiImagesRefused,
  openaiUnprocessable,
} from "../src/testing/image-rules.js";
import * as chat from "../src/testing/openai-server.js";
import * as responses from "../src/testing/responses-server.js";
import type { Message, ModelClient, ModelEvent } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { png, undecodablePng } from "./support/images.js";

/**
 * `ImageFallbackClient` over each real adapter and a strict server that refuses images: the
 * first refusal is told once and fails the request; every request after it carries the
 * placeholders, and the server takes them. A 400 that does not name images passes unchanged.
 */

const track = useCleanup();
const data = png(2, 2).toString("base64");
const history: Message[] = [
  { role: "user", content: "look" },
  { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "read", input: {} }] },
  {
    role: "tool",
    toolCallId: "c1",
    content: "[image: image/png, 2x2, 75 B]",
    isError: false,
    parts: [{ type: "image", mediaType: "image/png", data }],
  },
];

async function drain(client: ModelClient, messages: Message[]): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  for await (const event of client.stream({ system: "", messages, tools: [] })) events.push(event);
  return events;
}

const providers = [
  {
    name: "Anthropic",
    unprocessable: anthropicUnprocessable,
    refusal: "messages.2.content.0.tool_result.content.0: this model does not support image input",
    async start(refuseImages: boolean, first = 500) {
      const server = track(
        await anthropic.startAnthropicServer(
          [
            anthropic.status(first, undefined, "messages: the prompt is refused"),
            anthropic.stream(anthropic.turn({ text: "ok" })),
          ],
          { refuseImages },
        ),
      );
      const client = new AnthropicModelClient({
        apiKey: "k",
        model: "local-model",
        baseURL: server.url,
        maxRetries: 0,
      });
      return { server, client };
    },
  },
  {
    name: "Chat Completions",
    unprocessable: openaiUnprocessable,
    refusal: openaiImagesRefused,
    async start(refuseImages: boolean, first = 500) {
      const server = track(
        await chat.startOpenAIServer(
          [
            chat.status(first, "the prompt is refused"),
            chat.stream(chat.completion({ text: "ok" })),
          ],
          { refuseImages },
        ),
      );
      const client = new OpenAIModelClient({
        baseURL: `${server.url}/v1`,
        model: "local-model",
        maxRetries: 0,
      });
      return { server, client };
    },
  },
  {
    name: "Responses",
    unprocessable: openaiUnprocessable,
    refusal: openaiImagesRefused,
    async start(refuseImages: boolean, first = 500) {
      const server = track(
        await responses.startResponsesServer(
          [
            responses.status(first, "the prompt is refused"),
            responses.stream(responses.response({ text: ["ok"] })),
          ],
          { refuseImages },
        ),
      );
      const client = new OpenAIResponsesModelClient({
        baseURL: `${server.url}/v1`,
        model: "local-model",
        maxRetries: 0,
      });
      return { server, client };
    },
  },
];

describe.each(providers)(
  "an image the provider cannot process, over $name",
  ({ unprocessable, start }) => {
    const damaged = undecodablePng(3, 2);
    const shown = `[image: image/png, 3x2, ${damaged.length} B]`;
    const withDamaged: Message[] = [
      ...history,
      { role: "assistant", content: "", toolCalls: [{ id: "c2", name: "read", input: {} }] },
      {
        role: "tool",
        toolCallId: "c2",
        content: shown,
        isError: false,
        parts: [{ type: "image", mediaType: "image/png", data: damaged.toString("base64") }],
      },
    ];
    const imagesIn = (body: unknown) =>
      [...JSON.stringify(body).matchAll(/iVBOR[A-Za-z0-9+/=]*/g)].map(([image]) =>
        image === data ? "good" : "damaged",
      );

    it("sends that image as a placeholder saying so, records it, and retries with images still on", async () => {
      const { server, client } = await start(false);
      const told: [string, string | undefined][] = [];
      const fallback = new ImageFallbackClient(client, false, async (reason, image) => {
        told.push([reason, image]);
      });
      const events = await drain(fallback, withDamaged);
      expect(events.filter((event) => event.type === "text")).toEqual([
        { type: "text", text: "ok" },
      ]);
      expect(server.rejections).toEqual([unprocessable]);
      expect(told).toEqual([[unprocessable, imageKey(damaged.toString("base64"))]]);
      expect(server.requests.map((request) => imagesIn(request.body))).toEqual([
        ["good", "damaged"],
        ["good"],
      ]);
      const sent = JSON.stringify(server.requests[1]?.body);
      expect(sent).toContain(
        `[image not shown: image/png, 3x2, ${damaged.length} B: the provider could not process it]`,
      );
      expect(sent).not.toContain(shown);
    });

    it("leaves out an image a session recorded as unprocessable from the start", async () => {
      const { server, client } = await start(false);
      const fallback = new ImageFallbackClient(
        client,
        false,
        async () => {
          throw new Error("not told again");
        },
        [imageKey(damaged.toString("base64"))],
      );
      await drain(fallback, withDamaged).catch(() => undefined);
      expect(server.rejections).toEqual([]);
      expect(server.requests.map((request) => imagesIn(request.body))).toEqual([["good"]]);
    });
  },
);

describe.each(providers)("the text-only fallback over $name", ({ refusal, start }) => {
  it("tells the refusal once, fails that request, then sends placeholders the server takes", async () => {
    const { server, client } = await start(true);
    const told: string[] = [];
    const fallback = new ImageFallbackClient(client, false, async (reason) => {
      told.push(reason);
    });
    const error = await drain(fallback, history).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ImagesRefusedError);
    expect(told).toEqual([refusal]);
    const events = await drain(fallback, history);
    expect(events.filter((event) => event.type === "text")).toEqual([{ type: "text", text: "ok" }]);
    expect(server.rejections).toEqual([refusal]);
    expect(told).toEqual([refusal]);
  });

  it("sends the placeholder of a user message's image once images were refused", async () => {
    const { server, client } = await start(true);
    const prompt: Message = {
      role: "user",
      content: "what is this?\n[image: image/png, 2x2, 75 B]",
      parts: [
        { type: "text", text: "what is this?" },
        { type: "image", mediaType: "image/png", data },
      ],
    };
    const fallback = new ImageFallbackClient(client, false, async () => {});
    const error = await drain(fallback, [prompt]).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ImagesRefusedError);
    const events = await drain(fallback, [prompt]);
    expect(events.filter((event) => event.type === "text")).toEqual([{ type: "text", text: "ok" }]);
    expect(server.rejections).toHaveLength(1);
  });

  it("sends placeholders from the start when the session recorded a refusal", async () => {
    const { server, client } = await start(true);
    const fallback = new ImageFallbackClient(client, true, async () => {
      throw new Error("not told again");
    });
    await drain(fallback, history).catch(() => undefined);
    expect(server.rejections).toEqual([]);
  });

  it("passes another 400 through unchanged, and tells nothing", async () => {
    const { client } = await start(false, 400);
    const told: string[] = [];
    const fallback = new ImageFallbackClient(client, false, async (reason) => {
      told.push(reason);
    });
    const error = await drain(fallback, history).catch((thrown: unknown) => thrown);
    expect(error).not.toBeInstanceOf(ImagesRefusedError);
    expect((error as { status?: number }).status).toBe(400);
    expect(told).toEqual([]);
  });
});
