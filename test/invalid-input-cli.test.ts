import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Frame, stream, turn } from "../src/testing/anthropic-server.js";
import * as chat from "../src/testing/openai-server.js";
import * as responses from "../src/testing/responses-server.js";
import type { SseFrame } from "../src/testing/sse-server.js";
import { useCleanup } from "./support/cleanup.js";
import { runBin, toolResults, useCliSetup } from "./support/cli.js";

/**
 * A model's call whose input is not an object, or not JSON at all, gets a receipt like any
 * invalid input: the round's other calls run, and the round goes back to the strict local
 * servers with the call's input as `{}`, which they take.
 */

const setup = useCliSetup();
const track = useCleanup();

const bad = { id: "call_bad", name: "read", input: { path: "PLACEHOLDER" } };
const good = { id: "call_good", name: "read", input: { path: "notes.txt" } };

/** The frames with the bad call's arguments, wherever they stand whole, replaced by `raw`. */
function withArguments<F extends SseFrame>(frames: F[], raw: string): F[] {
  const escaped = (text: string) => JSON.stringify(text).slice(1, -1);
  const from = escaped(JSON.stringify(bad.input));
  const to = escaped(raw);
  return frames.map((frame) => JSON.parse(JSON.stringify(frame).replaceAll(from, () => to)) as F);
}

/** The Messages frames with the bad call's `input_json_delta` holding `raw`. */
function messagesTurn(raw: string): Frame[] {
  return withArguments(turn({ calls: [{ ...bad, pieces: 1 }, good] }), raw);
}

describe("a model's call whose input is not an object", () => {
  it.each([
    ['"notes.txt"', "input must be an object, not a string"],
    ["[1, 2]", "input must be an object, not an array"],
    ["null", "input must be an object, not null"],
  ])(
    "Messages: the input %s gets a receipt, the round's other call runs, and the next request is taken",
    async (raw, why) => {
      const { server, workspace, options } = await setup([
        stream(messagesTurn(raw)),
        stream(turn({ text: "done" })),
      ]);
      await writeFile(join(workspace, "notes.txt"), "hello\n");
      const run = await runBin(["--sandbox", "off", "read the notes"], options);
      expect(run).toEqual({
        code: 0,
        stdout: "done\n",
        stderr: `  ✗ read: invalid read input: ${why}\n  ✓ read notes.txt\n`,
      });
      expect(server.rejections).toEqual([]);
      const second = server.requests[1]?.body ?? {};
      const assistant = (second.messages as { role: string; content: unknown }[])[1];
      expect(assistant).toEqual({
        role: "assistant",
        content: [
          { type: "tool_use", id: "call_bad", name: "read", input: {} },
          { type: "tool_use", id: "call_good", name: "read", input: { path: "notes.txt" } },
        ],
      });
      expect(toolResults(second)).toEqual([
        { id: "call_bad", content: `invalid read input: ${why}`, isError: true },
        { id: "call_good", content: expect.stringContaining("hello"), isError: false },
      ]);
    },
  );
});

describe("a model's call whose arguments are not JSON", () => {
  it("Responses: the call gets a receipt, the round's other call runs, and it goes back as {}", async () => {
    const frames = withArguments(
      responses.response({ calls: [{ ...bad, pieces: 1 }, good] }, "gpt-5.5"),
      '{"path": "notes.txt"',
    );
    const server = track(
      await responses.startResponsesServer([
        responses.stream(frames),
        responses.stream(responses.response({ text: ["done"] }, "gpt-5.5")),
      ]),
    );
    const { workspace, options } = await setup([]);
    await writeFile(join(workspace, "notes.txt"), "hello\n");
    const env = { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${server.url}/v1` };
    const flags = ["--provider", "openai-responses", "--model", "gpt-5.5", "--sandbox", "off"];
    const run = await runBin([...flags, "read the notes"], { ...options, env });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("done\n");
    expect(server.rejections).toEqual([]);
    const input = server.requests[1]?.body.input as Record<string, unknown>[];
    expect(input.slice(1)).toEqual([
      { type: "function_call", call_id: "call_bad", name: "read", arguments: "{}" },
      {
        type: "function_call",
        call_id: "call_good",
        name: "read",
        arguments: '{"path":"notes.txt"}',
      },
      {
        type: "function_call_output",
        call_id: "call_bad",
        output: "Error: invalid read input: input is not valid JSON",
      },
      {
        type: "function_call_output",
        call_id: "call_good",
        output: expect.stringContaining("hello"),
      },
    ]);
  });

  it.each([
    ["null", "input must be an object, not null"],
    ['{"path": ', "input is not valid JSON"],
  ])(
    "Chat Completions: the arguments %s get a receipt, the round's other call runs, and it goes back as {}",
    async (raw, why) => {
      const frames = withArguments(
        chat.completion({ calls: [bad, good], quirks: { wholeArguments: true } }),
        raw,
      );
      const server = track(
        await chat.startOpenAIServer([
          chat.stream(frames),
          chat.stream(chat.completion({ text: ["done"] })),
        ]),
      );
      const { workspace, options } = await setup([]);
      await writeFile(join(workspace, "notes.txt"), "hello\n");
      const env = { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${server.url}/v1` };
      const flags = ["--provider", "openai", "--model", "llama3.1", "--sandbox", "off"];
      const run = await runBin([...flags, "read the notes"], { ...options, env });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe("done\n");
      expect(server.rejections).toEqual([]);
      const messages = server.requests[1]?.body.messages as Record<string, unknown>[];
      expect(messages.slice(-3)).toEqual([
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_bad", type: "function", function: { name: "read", arguments: "{}" } },
            {
              id: "call_good",
              type: "function",
              function: { name: "read", arguments: '{"path":"notes.txt"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_bad", content: `Error: invalid read input: ${why}` },
        { role: "tool", tool_call_id: "call_good", content: expect.stringContaining("hello") },
      ]);
    },
  );
});
