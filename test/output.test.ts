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
