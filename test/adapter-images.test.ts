import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import { OpenAIResponsesModelClient } from "../src/providers/openai-responses.js";
import * as anthropic from "../src/testing/anthropic-server.js";
import * as chat from "../src/testing/openai-server.js";
import * as responses from "../src/testing/responses-server.js";
import type { ScriptedServer } from "../src/testing/sse-server.js";
import type { Message, ModelClient, ToolResult } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { png } from "./support/images.js";
import { scriptedTool } from "./support/tools.js";

/**
 * Each adapter sends a tool result's image where its API takes one, and the strict servers,
 * which refuse a malformed image as the real APIs do, accept every request.
 */

const track = useCleanup();
const data = png(2, 2).toString("base64");
const shotResult: ToolResult = {
  content: "screen:\n[image: image/png, 2x2, 75 B]",
  parts: [
    { type: "text", text: "screen:" },
    { type: "image", mediaType: "image/png", data },
  ],
};
const user: Message = { role: "user", content: "Look at the screen" };
const call = { id: "c1", name: "shot", input: {} };

/** Runs one tool round and the answer after it; returns the second request's body. */
async function secondRequest(server: ScriptedServer, client: ModelClient) {
  const shot = scriptedTool("shot", async () => shotResult);
  const result = await runAgent({ client, tools: [shot], system: "Be brief.", messages: [user] });
  expect(result.text).toBe("a red square");
  expect(server.rejections).toEqual([]);
  return server.requests[1]?.body;
}

describe("an image in a tool result, through each adapter and its strict server", () => {
  it("Anthropic: image blocks inside the tool_result content", async () => {
    const server = track(
      await anthropic.startAnthropicServer([
        anthropic.stream(anthropic.turn({ calls: [call] })),
        anthropic.stream(anthropic.turn({ text: "a red square" })),
      ]),
    );
    const client = new AnthropicModelClient({
      apiKey: "test-key-not-real",
      model: "local-model",
      baseURL: server.url,
    });
    const body = await secondRequest(server, client);
    expect(body?.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Look at the screen" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "shot", input: {} }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "c1",
            content: [
              { type: "text", text: "screen:" },
              { type: "image", source: { type: "base64", media_type: "image/png", data } },
            ],
            is_error: false,
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);
  });

  it("Chat Completions: the tool message as text, the image in a user message right after", async () => {
    const server = track(
      await chat.startOpenAIServer([
        chat.stream(chat.completion({ calls: [call] })),
        chat.stream(chat.completion({ text: "a red square" })),
      ]),
    );
    const client = new OpenAIModelClient({ baseURL: `${server.url}/v1`, model: "local-model" });
    const body = await secondRequest(server, client);
    expect(body?.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Look at the screen" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "shot", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "screen:\n[image: image/png, 2x2, 75 B]" },
      {
        role: "user",
        content: [
          { type: "text", text: "The images of tool call c1's result:" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${data}` } },
        ],
      },
    ]);
  });

  it("Responses: input_image in the function_call_output", async () => {
    const server = track(
      await responses.startResponsesServer([
        responses.stream(responses.response({ calls: [call] })),
        responses.stream(responses.response({ text: ["a red square"] })),
      ]),
    );
    const client = new OpenAIResponsesModelClient({
      baseURL: `${server.url}/v1`,
      model: "local-model",
    });
    const body = await secondRequest(server, client);
    expect(body?.input).toEqual([
      { type: "message", role: "user", content: "Look at the screen" },
      { type: "function_call", call_id: "c1", name: "shot", arguments: "{}" },
      {
        type: "function_call_output",
        call_id: "c1",
        output: [
          { type: "input_text", text: "screen:" },
          { type: "input_image", image_url: `data:image/png;base64,${data}` },
        ],
      },
    ]);
  });
});

describe("an error result with an image", () => {
  it("Anthropic: goes as its text, which is all an error's tool_result may hold, saying the image was not shown", async () => {
    const server = track(
      await anthropic.startAnthropicServer([
        anthropic.stream(anthropic.turn({ calls: [call] })),
        anthropic.stream(anthropic.turn({ text: "it failed" })),
      ]),
    );
    const client = new AnthropicModelClient({
      apiKey: "k",
      model: "local-model",
      baseURL: server.url,
    });
    // The placeholder as the image's own bytes give it (the shared result's line is written by hand).
    const content = `screen:\n[image: image/png, 2x2, ${png(2, 2).length} B]`;
    const failed = scriptedTool("shot", async () => ({ ...shotResult, content, isError: true }));
    await runAgent({ client, tools: [failed], system: "", messages: [user] });
    expect(server.rejections).toEqual([]);
    const last = server.requests[1]?.body.messages as { content: unknown }[];
    expect(last.at(-1)?.content).toEqual([
      {
        type: "tool_result",
        tool_use_id: "c1",
        content: `screen:\n[image not shown: image/png, 2x2, ${png(2, 2).length} B: an error result carries only text to this provider]`,
        is_error: true,
        cache_control: { type: "ephemeral" },
      },
    ]);
  });
});

describe("an image in a user message, through each adapter and its strict server", () => {
  const prompt: Message = {
    role: "user",
    content: "What is this?\n[image: image/png, 2x2, 75 B]",
    parts: [
      { type: "text", text: "What is this?" },
      { type: "image", mediaType: "image/png", data },
    ],
  };
  const send = async (server: ScriptedServer, client: ModelClient) => {
    for await (const _ of client.stream({ system: "", messages: [prompt], tools: [] }));
    expect(server.rejections).toEqual([]);
    return server.requests[0]?.body;
  };

  it("Anthropic: text and image blocks in the user message", async () => {
    const server = track(
      await anthropic.startAnthropicServer([
        anthropic.stream(anthropic.turn({ text: "a square" })),
      ]),
    );
    const client = new AnthropicModelClient({
      apiKey: "k",
      model: "local-model",
      baseURL: server.url,
    });
    expect((await send(server, client))?.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          {
            type: "image",
            source: { type: "base64", media_type: "image/png", data },
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);
  });

  it("Chat Completions: text and image_url parts in the user message", async () => {
    const server = track(
      await chat.startOpenAIServer([chat.stream(chat.completion({ text: "a square" }))]),
    );
    const client = new OpenAIModelClient({ baseURL: `${server.url}/v1`, model: "local-model" });
    expect((await send(server, client))?.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${data}` } },
        ],
      },
    ]);
  });

  it("Responses: input_text and input_image in the user message", async () => {
    const server = track(
      await responses.startResponsesServer([
        responses.stream(responses.response({ text: ["a square"] })),
      ]),
    );
    const client = new OpenAIResponsesModelClient({
      baseURL: `${server.url}/v1`,
      model: "local-model",
    });
    expect((await send(server, client))?.input).toEqual([
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "What is this?" },
          { type: "input_image", image_url: `data:image/png;base64,${data}`, detail: "auto" },
        ],
      },
    ]);
  });
});
