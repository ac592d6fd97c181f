import { describe, expect, it } from "vitest";
import { CompactingClient } from "../src/compaction/client.js";
import { factsOf } from "../src/compaction/facts.js";
import { contextOverflow } from "../src/compaction/overflow.js";
import { type Compaction, CompactionError } from "../src/compaction/record.js";
import { requestTokens } from "../src/compaction/size.js";
import { summaryPrompt, transcriptOf } from "../src/compaction/summary.js";
import { capped, compactionMessage } from "../src/compaction/view.js";
import type { Message, ModelRequest } from "../src/types.js";
import { done, FakeClient, text, toolCall } from "./support/fake-client.js";

const system = "you are a test";
const tools = [{ name: "read", description: "reads", inputSchema: { type: "object" } }];
/** A read result long enough that the summary request gets a stub in its place. */
const output = (n: number) => String(n).repeat(2500);

/** A first task of three read rounds (about 1,900 tokens), then a second, short task. */
function longHistory(): Message[] {
  const history: Message[] = [{ role: "user", content: "task A" }];
  for (const n of [1, 2, 3]) {
    history.push({
      role: "assistant",
      content: "",
      toolCalls: [toolCall(`c${n}`, "read", { path: `f${n}` })],
    });
    history.push({ role: "tool", toolCallId: `c${n}`, content: output(n), isError: false });
  }
  history.push({ role: "assistant", content: "read them", toolCalls: [] });
  history.push({ role: "user", content: "task B" });
  return history;
}

const summaryText = "## Goal\nread files\n## Decisions\nnone\n## Done\nread\n## In progress\n-\n## Next\nB";
const request = (messages: Message[]): ModelRequest => ({ system, messages, tools });

describe("CompactingClient", () => {
  it("passes a request that fits through unchanged", async () => {
    const inner = new FakeClient([[text("ok"), done]]);
    const client = new CompactingClient(inner, { contextWindow: 100_000 });
    const events = [];
    for await (const event of client.stream(request(longHistory()))) events.push(event);
    expect(events).toEqual([text("ok"), done]);
    expect(inner.requests).toEqual([request(longHistory())]);
  });

  it("compacts a request over the limit: summary request, record, then the compacted view", async () => {
    const order: string[] = [];
    const inner = new FakeClient([
      [text(summaryText), done],
      async function* () {
        order.push("request");
        yield text("on B");
        yield done;
      },
    ]);
    const records: Compaction[] = [];
    const history = longHistory();
    const client = new CompactingClient(inner, {
      contextWindow: requestTokens(request(history)),
      reserve: 10,
      onCompaction: (compaction) => {
        order.push("record");
        records.push(compaction);
      },
    });
    for await (const _ of client.stream(request(history)));

    const [summaryRequest, compacted] = inner.requests;
    expect(summaryRequest).toEqual({
      system: summaryPrompt,
      messages: [{ role: "user", content: expect.any(String) }],
      tools: [],
    });
    const sent = summaryRequest?.messages[0]?.content ?? "";
    expect(sent).toContain(transcriptOf(history.slice(0, 7)));
    expect(sent).toContain(
      '[result of read]\n[pruned: the output of read {"path":"f1"}, 2500 characters, is not shown]',
    );
    expect(sent).not.toContain("read them");

    const expected: Compaction = {
      firstKept: 4,
      count: 1,
      trigger: "size",
      userMessages: ["task A"],
      facts: {
        filesRead: ["f1", "f2", "f3"],
        filesChanged: [],
        commands: [],
        refused: [],
        omitted: 0,
      },
      summary: summaryText,
      tokensBefore: requestTokens(request(history)),
      tokensAfter: requestTokens(
        request([compactionMessage({ ...records[0], tokensAfter: 0 } as Compaction), ...history.slice(7)]),
      ),
    };
    expect(records).toEqual([expected]);
    expect(order).toEqual(["record", "request"]);
    expect(compacted).toEqual(request([compactionMessage(expected), ...history.slice(7)]));
    expect(client.current).toEqual(expected);
  });
});
