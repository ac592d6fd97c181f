import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { call, done, FakeClient, text, toolCall } from "../src/testing/fake-client.js";
import type { Message, ToolResult } from "../src/types.js";
import { png } from "./support/images.js";
import { scriptedTool } from "./support/tools.js";

const user: Message = { role: "user", content: "look at it" };
const data = png(2, 2).toString("base64");

describe("runAgent with a tool result that holds an image", () => {
  it("records the result's parts in its tool message and sends them in the next request", async () => {
    const result: ToolResult = {
      content: "before\n[image: image/png, 2x2, 75 B]",
      parts: [
        { type: "text", text: "before" },
        { type: "image", mediaType: "image/png", data },
      ],
    };
    const shot = scriptedTool("shot", async () => result);
    const client = new FakeClient([
      [call("c1", "shot"), done],
      [text("a red square"), done],
    ]);
    const run = await runAgent({ client, tools: [shot], system: "", messages: [user] });
    const round: Message[] = [
      user,
      { role: "assistant", content: "", toolCalls: [toolCall("c1", "shot")] },
      { role: "tool", toolCallId: "c1", isError: false, ...result },
    ];
    expect(client.requests.map((request) => request.messages)).toEqual([[user], round]);
    expect(run.messages).toEqual([
      ...round,
      { role: "assistant", content: "a red square", toolCalls: [] },
    ]);
  });

  it("records a tool whose parts are not text and image parts as failed and throws", async () => {
    const odd = scriptedTool(
      "odd",
      async () =>
        ({
          content: "[image]",
          parts: [{ type: "image", mediaType: "image/bmp", data }],
        }) as unknown as ToolResult,
    );
    const client = new FakeClient([[call("c1", "odd"), done]]);
    const messages: Message[] = [];
    await expect(
      runAgent({
        client,
        tools: [odd],
        system: "",
        messages: [user],
        onEvent: (event) => void (event.type === "message" && messages.push(event.message)),
      }),
    ).rejects.toThrow("tool odd returned parts that are not text and image parts");
    expect(messages).toEqual([
      { role: "assistant", content: "", toolCalls: [toolCall("c1", "odd")] },
      { role: "tool", toolCallId: "c1", content: "tool execution failed", isError: true },
    ]);
  });
});
