import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { CompactingClient } from "../src/compaction/client.js";
import type { Compaction } from "../src/compaction/record.js";
import { messageTokens } from "../src/compaction/size.js";
import { summaryPrompt, transcriptOf } from "../src/compaction/summary.js";
import { compactionMessage, projectedMessages } from "../src/compaction/view.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { startAnthropicServer, stream, turn } from "../src/testing/anthropic-server.js";
import type { Body } from "../src/testing/sse-server.js";
import type { Message, Tool } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";

/**
 * Compaction and the model's thinking: a round's thinking is sent back, so it counts in the
 * history's size; the summarised part is written without it (its reasoning is not the user's
 * words nor a fact), while the turns kept verbatim keep it whole.
 */

const thinking = "t".repeat(400);
const round: Message = {
  role: "assistant",
  content: "Listing.",
  toolCalls: [{ id: "call_1", name: "ls", input: {} }],
  reasoning: [
    { type: "thinking", text: thinking, signature: "s".repeat(200), at: { text: 0, calls: 0 } },
    { type: "redacted_thinking", data: "d".repeat(120), at: { text: 0, calls: 0 } },
  ],
};
const { reasoning: _reasoning, ...bare } = round;

describe("compaction with thinking", () => {
  it("counts a round's thinking, signature and redacted data in its size, as they are sent", () => {
    expect(messageTokens(round) - messageTokens(bare)).toBe((400 + 200 + 120) / 4);
  });

  it("keeps the thinking of the unfinished tool loop in the kept turns and drops the signed thinking of finished turns", () => {
    // Unsigned reasoning (Chat Completions servers) has no prefix to check, and DeepSeek wants it back.
    const unsigned = { type: "thinking" as const, text: "plain", at: { text: 0, calls: 0 } };
    const compaction: Compaction = {
      count: 1,
      trigger: "size",
      firstKept: 1,
      tokensBefore: 100,
      tokensAfter: 10,
      summary: "s",
      userMessages: ["first"],
      facts: { filesRead: [], filesChanged: [], commands: [], refused: [], omitted: 0 },
    };
    const answered = (id: string): Message => ({
      role: "tool",
      toolCallId: id,
      content: "a",
      isError: false,
    });
    const finished: Message = { ...round, toolCalls: [{ id: "call_0", name: "ls", input: {} }] };
    const history: Message[] = [
      { role: "user", content: "first" },
      finished,
      answered("call_0"),
      {
        role: "assistant",
        content: "Done.",
        toolCalls: [],
        reasoning: [...(round.reasoning ?? []), unsigned],
      },
      { role: "user", content: "next" },
      round,
      answered("call_1"),
    ];
    const { reasoning: _a, ...finishedBare } = finished;
    expect(projectedMessages(compaction, history, 1)).toEqual([
      compactionMessage(compaction),
      finishedBare,
      answered("call_0"),
      { role: "assistant", content: "Done.", toolCalls: [], reasoning: [unsigned] },
      { role: "user", content: "next" },
      round,
      answered("call_1"),
    ]);
  });

  it("leaves the thinking out of the transcript it summarises", () => {
    expect(transcriptOf([round])).toBe(transcriptOf([bare]));
    expect(transcriptOf([round])).toBe("[assistant]\n~~~\nListing.\n~~~\n\n[tool call ls {}]");
  });
});

const track = useCleanup();
const read: Tool = {
  spec: { name: "read", description: "read", inputSchema: { type: "object" } },
  execute: async () => ({ content: "line of code\n".repeat(300) }),
};
const systemText = (body: Body) =>
  ((body.system ?? []) as { text: string }[]).map((block) => block.text).join("");

describe("compaction of a thinking tool loop against the strict server", () => {
  it("compacts mid loop and every request keeps the loop's thinking as the API requires", {
    timeout: 60_000,
  }, async () => {
    let round = 0;
    const dispatch = (body: Body) => {
      if (systemText(body) === summaryPrompt)
        return stream(
          turn({ thinking: [["Summing up."]], text: ["## Goal\nread\n## Next\ngo on"] }),
        );
      round++;
      if (round === 30) return stream(turn({ thinking: [["Enough."]], text: ["done"] }));
      const calls = [{ id: `toolu_${round}`, name: "read", input: { path: `f${round}` } }];
      return stream(turn({ thinking: [[`Round ${round}: read the next file.`]], calls }));
    };
    const server = track(
      await startAnthropicServer(
        Array.from({ length: 200 }, () => dispatch),
        { contextLimit: 8000 },
      ),
    );
    const records: Compaction[] = [];
    const client = new CompactingClient(
      new AnthropicModelClient({
        apiKey: "k",
        model: "claude-sonnet-4-5-local",
        baseURL: server.url,
        maxRetries: 0,
        thinking: "low",
      }),
      { onCompaction: (compaction) => void records.push(compaction) },
    );
    const result = await runAgent({
      client,
      tools: [read],
      system: "sys",
      messages: [{ role: "user", content: "read every file" }],
    });
    expect(result.text).toBe("done");
    expect(records.length).toBeGreaterThanOrEqual(2);
    expect(
      server.rejections.every((text) =>
        /^prompt is too long: \d+ tokens > 8000 maximum$/.test(text),
      ),
    ).toBe(true);
    // Each round's request carried the previous round's thinking back, signed, first in its message.
    const rounds = server.requests.filter(({ body }) => systemText(body) === "sys").slice(1);
    for (const { body } of rounds) {
      const messages = body.messages as { role: string; content: { type: string }[] }[];
      const last = messages.findLast((m) => m.role === "assistant");
      expect(last?.content[0]?.type).toBe("thinking");
    }
  });
});
