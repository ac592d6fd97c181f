import { describe, expect, it } from "vitest";
import { messageTokens } from "../src/compaction/size.js";
import { transcriptOf } from "../src/compaction/summary.js";
import type { Message } from "../src/types.js";

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

  it("leaves the thinking out of the transcript it summarises", () => {
    expect(transcriptOf([round])).toBe(transcriptOf([bare]));
    expect(transcriptOf([round])).toBe("[assistant]\nListing.\n\n[tool call ls {}]");
  });
});
