import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createOutput } from "../src/cli/formats.js";
import type { Message, ToolCall } from "../src/types.js";

/** The text a stream received. */
function collected(stream: PassThrough): string {
  return (stream.read() as Buffer | null)?.toString() ?? "";
}

describe("the tool lines on stderr", () => {
  const run = (call: ToolCall, content: string) => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const output = createOutput("text", { stdout, stderr });
    const assistant: Message = { role: "assistant", content: "", toolCalls: [call] };
    const result: Message = { role: "tool", toolCallId: call.id, content, isError: true };
    output.event({ type: "message", message: assistant });
    output.event({ type: "message", message: result });
    return collected(stderr);
  };

  it("show a failed bash call by its last line, where its status stands", () => {
    const call = { id: "c1", name: "bash", input: { command: "npm test" } };
    expect(run(call, "FAIL one\nFAIL two\n[exit code 1]")).toBe(
      "  ✗ bash npm test: [exit code 1]\n",
    );
  });

  it("show another tool's failure by its first line, where its reason stands", () => {
    const call = { id: "c1", name: "write", input: { path: "a.txt" } };
    const stale =
      "a.txt has changed since you last read or wrote it: read it again, then edit\nline 1 differs; it now reads:\n1: user recreated a.txt";
    expect(run(call, stale)).toBe(
      "  ✗ write a.txt: a.txt has changed since you last read or wrote it: read it again, then edit\n",
    );
  });
});

describe("the json and stream-json lines of a long answer", () => {
  // Past the 32 Ki units escaped at a time, with line breaks some readers split at, at the edges
  // of those slices and between them, and text that JSON escapes.
  const answer = [0, 1, 2, 3]
    .map((i) => `${"\u2028".repeat(i)}${'ab"\\\n\u0001'.repeat(5461)}\u0085\u2029é\u{1F600}`)
    .join("");
  const summary = {
    status: "completed" as const,
    text: answer,
    sessionId: "s1",
    usage: { inputTokens: 3, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0 },
  };
  const finished = (format: "json" | "stream-json") => {
    const stdout = new PassThrough();
    createOutput(format, { stdout, stderr: new PassThrough() }).finish(summary);
    return collected(stdout);
  };

  it("is the whole summary on one line in json", () => {
    expect(answer.length).toBeGreaterThan(4 * 32_768);
    expect(finished("json")).toBe(`${JSON.stringify(summary)}\n`);
  });

  it("is the result with the breaks escaped in stream-json, the answer whole", () => {
    const line = finished("stream-json");
    const expected = JSON.stringify({ version: 1, type: "result", ...summary, denied: [] })
      .replaceAll("\u2028", "\\u2028")
      .replaceAll("\u2029", "\\u2029")
      .replaceAll("\u0085", "\\u0085");
    expect(line).toBe(`${expected}\n`);
    expect(JSON.parse(line).text).toBe(answer);
  });
});
