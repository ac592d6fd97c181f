import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import {
  toAnthropicMessages,
  toModelEvents,
  withCacheBreakpoints,
} from "../src/providers/anthropic-protocol.js";
import { blockStart, blockStop, delta, type Frame, turn } from "../src/testing/anthropic-server.js";
import type { Message, ModelEvent } from "../src/types.js";
import { collect, shapeOf, testIds } from "./support/events.js";

async function caught(frames: (Frame | Record<string, unknown>)[], taken: string[] = []) {
  const events = frames.map((frame) =>
    "event" in frame ? frame.data : frame,
  ) as RawMessageStreamEvent[];
  async function* source() {
    yield* events;
  }
  return collect(toModelEvents(source(), testIds(taken)));
}

async function run(frames: (Frame | Record<string, unknown>)[], taken: string[] = []) {
  const { out, error } = await caught(frames, taken);
  return { out, error: error?.message };
}

const start = turn({}).slice(0, 2); // message_start, ping
const stop = (reason: string | null): Frame[] => [
  {
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: reason, stop_sequence: null },
      usage: { output_tokens: 5 },
    },
  },
  { event: "message_stop", data: { type: "message_stop" } },
];
const done: ModelEvent = { type: "done", usage: { inputTokens: 10, outputTokens: 5 } };
const call = (id: string, name: string, input: Record<string, unknown>): ModelEvent => ({
  type: "tool_call",
  call: { id, name, input },
});

describe("toModelEvents", () => {
  it("streams text and ends with done", async () => {
    expect(await run(turn({ text: ["Hel", "lo"] }))).toEqual({
      out: [{ type: "text", text: "Hel" }, { type: "text", text: "lo" }, done],
      error: undefined,
    });
  });

  it("assembles a tool call whose JSON is split across many deltas", async () => {
    const input = { path: "src/deep/file.ts", offset: 10, nested: { list: [1, "two", null] } };
    expect(await run(turn({ calls: [{ id: "t1", name: "read", input, pieces: 17 }] }))).toEqual({
      out: [call("t1", "read", input), done],
      error: undefined,
    });
  });

  it("yields text then two calls in block order", async () => {
    const frames = turn({
      text: ["Reading both."],
      calls: [
        { id: "t1", name: "read", input: { path: "a" } },
        { id: "t2", name: "read", input: { path: "b" } },
      ],
    });
    expect((await run(frames)).out).toEqual([
      { type: "text", text: "Reading both." },
      call("t1", "read", { path: "a" }),
      call("t2", "read", { path: "b" }),
      done,
    ]);
  });

  it("reads an empty input as {}", async () => {
    const frames = [
      ...start,
      blockStart(0, { type: "tool_use", id: "t1", name: "ls", input: {} }),
      blockStop(0),
      ...stop("tool_use"),
    ];
    expect(await run(frames)).toEqual({
      out: [call("t1", "ls", {}), done],
      error: undefined,
    });
  });

  it.each([
    ["[1,2]", "an array"],
    ["null", "null"],
    ['"text"', "a string"],
    ["42", "a number"],
  ])(
    "yields the non-object input %s as {} and why, with the round's other calls",
    async (json, kind) => {
      const frames = [
        ...start,
        blockStart(0, { type: "text", text: "" }),
        delta(0, { type: "text_delta", text: "hi" }),
        blockStop(0),
        blockStart(1, { type: "tool_use", id: "t1", name: "ls", input: {} }),
        delta(1, { type: "input_json_delta", partial_json: json }),
        blockStop(1),
        blockStart(2, { type: "tool_use", id: "t2", name: "ls", input: {} }),
        blockStop(2),
        ...stop("tool_use"),
      ];
      expect(await run(frames)).toEqual({
        out: [
          { type: "text", text: "hi" },
          { ...call("t1", "ls", {}), invalidInput: `input must be an object, not ${kind}` },
          call("t2", "ls", {}),
          done,
        ],
        error: undefined,
      });
    },
  );

  it("yields a call whose input is not JSON as {} and why", async () => {
    const frames = [
      ...start,
      blockStart(0, { type: "tool_use", id: "t1", name: "ls", input: {} }),
      delta(0, { type: "input_json_delta", partial_json: '{"path": ' }),
      delta(0, { type: "input_json_delta", partial_json: "}" }),
      blockStop(0),
      ...stop("tool_use"),
    ];
    expect(await run(frames)).toEqual({
      out: [{ ...call("t1", "ls", {}), invalidInput: "input is not valid JSON" }, done],
      error: undefined,
    });
  });

  it("fails with max_tokens in the middle of a tool call and never yields the call", async () => {
    const frames = [
      ...start,
      blockStart(0, { type: "text", text: "" }),
      delta(0, { type: "text_delta", text: "Writing the file" }),
      blockStop(0),
      blockStart(1, { type: "tool_use", id: "t1", name: "write", input: {} }),
      delta(1, { type: "input_json_delta", partial_json: '{"path": "a.txt", "content": "lo' }),
      blockStop(1),
      ...stop("max_tokens"),
    ];
    expect(await run(frames)).toEqual({
      out: [{ type: "text", text: "Writing the file" }],
      error:
        "the model reached its output token limit (stop_reason max_tokens) before finishing; raise the limit or ask for less; the cut-off tool call was not run",
    });
  });

  it("fails with max_tokens on a text-only answer without the tool note", async () => {
    const frames = turn({ text: ["a long ans"], stopReason: "max_tokens" });
    expect((await run(frames)).error).toBe(
      "the model reached its output token limit (stop_reason max_tokens) before finishing; raise the limit or ask for less",
    );
  });

  it("fails when the stream ends before message_stop, holding back complete calls", async () => {
    const frames = turn({ text: ["hi"], calls: [{ id: "t1", name: "ls", input: {} }] }).slice(
      0,
      -1,
    );
    expect(await run(frames)).toEqual({
      out: [{ type: "text", text: "hi" }],
      error: "the model stream ended before message_stop",
    });
  });

  it("fails when stop_reason is missing", async () => {
    expect((await run([...turn({ text: ["hi"] }).slice(0, -2), ...stop(null)])).error).toBe(
      "the model stream ended without a stop_reason",
    );
    const noDelta = turn({ text: ["hi"] }).filter((frame) => frame.event !== "message_delta");
    expect((await run(noDelta)).error).toBe("the model stream ended without a stop_reason");
  });

  it.each([
    ["refusal", "the model declined to continue (stop_reason refusal)"],
    [
      "model_context_window_exceeded",
      "the conversation no longer fits the model's context window (stop_reason model_context_window_exceeded); start a new session",
    ],
    [
      "pause_turn",
      "the model paused a long turn (stop_reason pause_turn), which mini-agent cannot resume",
    ],
    [
      "stop_sequence",
      "the model stopped at a stop sequence (stop_reason stop_sequence), which mini-agent never sets",
    ],
    ["brand_new_reason", 'unsupported stop_reason "brand_new_reason"'],
  ])("fails on the unsupported stop reason %s with its own message", async (reason, message) => {
    const frames = turn({
      text: ["x"],
      calls: [{ id: "t1", name: "ls", input: {} }],
      stopReason: reason,
    });
    expect(await run(frames)).toEqual({ out: [{ type: "text", text: "x" }], error: message });
  });

  it("throws a mid-stream error event as a ProviderError with the provider's type and message", async () => {
    const frames = [
      ...turn({ text: ["partial"] }).slice(0, 4),
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      ...turn({ text: ["partial"] }).slice(4),
    ];
    const { out, error } = await caught(frames);
    expect(out).toEqual([{ type: "text", text: "partial" }]);
    expect(error).toBeInstanceOf(Error);
    expect(shapeOf(error)).toEqual({
      name: "ProviderError",
      type: "overloaded_error",
      message: "Overloaded",
    });
  });

  it("keeps a mid-stream error's message on one line and names a bare error plainly", async () => {
    const multiline = { type: "error", error: { type: "api_error", message: "Internal\n  error" } };
    expect(shapeOf((await caught([...start, multiline])).error)).toEqual({
      name: "ProviderError",
      type: "api_error",
      message: "Internal error",
    });
    expect(shapeOf((await caught([...start, { type: "error" }])).error)).toEqual({
      name: "ProviderError",
      type: "error",
      message: "the provider sent an error without a message",
    });
  });

  it("gives fresh ids to calls whose id is repeated, has spaces, is empty or is taken by the history, and a safe name to an empty one", async () => {
    const tool = (index: number, id: string, name: string) => [
      blockStart(index, { type: "tool_use", id, name, input: {} }),
      blockStop(index),
    ];
    const frames = [
      ...start,
      ...tool(0, "toolu_a", "read"),
      ...tool(1, "toolu_a", "ls"),
      ...tool(2, "toolu b", "ls"),
      ...tool(3, "", "ls"),
      ...tool(4, "toolu_old", "ls"),
      ...tool(5, "toolu_c", ""),
      ...tool(6, "toolu_d", "read file"),
      ...stop("tool_use"),
    ];
    expect(await run(frames, ["toolu_old", "gen_1"])).toEqual({
      out: [
        call("toolu_a", "read", {}),
        call("gen_0", "ls", {}),
        call("gen_2", "ls", {}),
        call("gen_3", "ls", {}),
        call("gen_4", "ls", {}),
        call("toolu_c", "unnamed_tool", {}),
        call("toolu_d", "read_file", {}),
        done,
      ],
      error: undefined,
    });
  });

  it("ignores pings and unknown events, and yields a thinking block's pieces and the whole block", async () => {
    const frames = [
      ...start,
      { type: "brand_new_event", payload: 1 },
      blockStart(0, { type: "thinking", thinking: "", signature: "" }),
      delta(0, { type: "thinking_delta", thinking: "hmm" }),
      delta(0, { type: "signature_delta", signature: "sig" }),
      blockStop(0),
      { type: "ping" },
      blockStart(1, { type: "text", text: "" }),
      delta(1, { type: "text_delta", text: "answer" }),
      blockStop(1),
      ...stop("end_turn"),
    ];
    expect(await run(frames)).toEqual({
      out: [
        { type: "thinking", text: "hmm" },
        {
          type: "reasoning",
          part: { type: "thinking", text: "hmm", signature: "sig", at: { text: 0, calls: 0 } },
        },
        { type: "text", text: "answer" },
        done,
      ],
      error: undefined,
    });
  });

  it("reports usage with cache reads and writes on done", async () => {
    const [messageStart, ...rest] = turn({ text: ["hi"] });
    const message = (messageStart?.data.message ?? {}) as Record<string, unknown>;
    const usage = {
      input_tokens: 3,
      output_tokens: 1,
      cache_read_input_tokens: 900,
      cache_creation_input_tokens: 40,
    };
    const frames = [{ type: "message_start", message: { ...message, usage } }, ...rest];
    expect((await run(frames)).out.at(-1)).toEqual({
      type: "done",
      usage: { inputTokens: 3, outputTokens: 5, cacheReadTokens: 900, cacheWriteTokens: 40 },
    });
  });

  it("ignores deltas of the wrong kind for a block and emits a block's initial text", async () => {
    const frames = [
      ...start,
      blockStart(0, { type: "text", text: "Hi " }),
      delta(0, { type: "input_json_delta", partial_json: '{"x":1}' }),
      delta(0, { type: "text_delta", text: "there" }),
      blockStop(0),
      blockStart(1, { type: "tool_use", id: "t1", name: "ls", input: {} }),
      delta(1, { type: "text_delta", text: "not text" }),
      delta(1, { type: "input_json_delta", partial_json: '{"path":"."}' }),
      blockStop(1),
      ...stop("tool_use"),
    ];
    expect(await run(frames)).toEqual({
      out: [
        { type: "text", text: "Hi " },
        { type: "text", text: "there" },
        call("t1", "ls", { path: "." }),
        done,
      ],
      error: undefined,
    });
  });

  it("uses a tool block's own input when no deltas come, and reads blank JSON as {}", async () => {
    const frames = [
      ...start,
      blockStart(0, { type: "tool_use", id: "t1", name: "read", input: { path: "given" } }),
      blockStop(0),
      blockStart(1, { type: "tool_use", id: "t2", name: "ls", input: {} }),
      delta(1, { type: "input_json_delta", partial_json: "  " }),
      blockStop(1),
      ...stop("tool_use"),
    ];
    expect((await run(frames)).out).toEqual([
      call("t1", "read", { path: "given" }),
      call("t2", "ls", {}),
      done,
    ]);
  });

  it("fails on a delta after its block stopped", async () => {
    const frames = [
      ...start,
      blockStart(0, { type: "tool_use", id: "t1", name: "ls", input: {} }),
      blockStop(0),
      delta(0, { type: "input_json_delta", partial_json: "{}" }),
      ...stop("tool_use"),
    ];
    expect((await run(frames)).error).toBe("content_block_delta after content block 0 stopped");
  });

  it("reports no usage when the stream carries none", async () => {
    const bare = [
      {
        type: "message_start",
        message: { id: "m", type: "message", role: "assistant", content: [] },
      },
      blockStart(0, { type: "text", text: "" }),
      delta(0, { type: "text_delta", text: "ok" }),
      blockStop(0),
      { type: "message_delta", delta: { stop_reason: "end_turn" } },
      { type: "message_stop" },
    ];
    expect((await run(bare)).out).toEqual([{ type: "text", text: "ok" }, { type: "done" }]);
  });

  it("fails on a delta for a block that never started", async () => {
    const frames = [...start, delta(3, { type: "text_delta", text: "x" }), ...stop("end_turn")];
    expect((await run(frames)).error).toBe(
      "content_block_delta for content block 3, which never started",
    );
  });
});

describe("toAnthropicMessages", () => {
  it("groups results in one user message, results first, keeping is_error and dropping empty text", () => {
    const messages: Message[] = [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "t1", name: "read", input: { path: "a" } },
          { id: "t2", name: "bash", input: { command: "ls" } },
        ],
      },
      { role: "tool", toolCallId: "t1", content: "file a", isError: false },
      { role: "tool", toolCallId: "t2", content: "denied", isError: true },
      { role: "user", content: "and then?" },
      { role: "assistant", content: "done", toolCalls: [] },
    ];
    expect(toAnthropicMessages(messages)).toEqual([
      { role: "user", content: [{ type: "text", text: "go" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "t1", name: "read", input: { path: "a" } },
          { type: "tool_use", id: "t2", name: "bash", input: { command: "ls" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "file a", is_error: false },
          { type: "tool_result", tool_use_id: "t2", content: "denied", is_error: true },
          { type: "text", text: "and then?" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "done" }] },
    ]);
  });

  it("always replays an object input and omits empty result content", () => {
    const broken = { id: "t1", name: "ls", input: null as unknown as Record<string, unknown> };
    expect(
      toAnthropicMessages([
        { role: "user", content: "x" },
        { role: "assistant", content: "  ", toolCalls: [broken] },
        { role: "tool", toolCallId: "t1", content: "", isError: false },
      ]),
    ).toEqual([
      { role: "user", content: [{ type: "text", text: "x" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "ls", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", is_error: false }] },
    ]);
  });

  it.each<[string, Message[]]>([
    [
      "two user messages",
      [
        { role: "user", content: "first" },
        { role: "user", content: "second" },
      ],
    ],
    [
      "user messages around an assistant turn left with nothing to say",
      [
        { role: "user", content: "first" },
        { role: "assistant", content: "   ", toolCalls: [] },
        { role: "user", content: "second" },
      ],
    ],
  ])("merges %s into one turn", (_name, history) => {
    expect(toAnthropicMessages(history)).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "first" },
          { type: "text", text: "second" },
        ],
      },
    ]);
  });
});

describe("withCacheBreakpoints", () => {
  it("sends no system block for an empty prompt and leaves a string message as it is", () => {
    const messages = [{ role: "user" as const, content: "plain" }];
    expect(withCacheBreakpoints({ system: "", tools: [], messages })).toEqual({
      system: [],
      tools: [],
      messages,
    });
  });

  it("marks the last tool, the system prompt and the newest message's last block", () => {
    const tool = { name: "ls", description: "list", input_schema: { type: "object" as const } };
    const result = withCacheBreakpoints({
      system: "be careful",
      tools: [tool, { ...tool, name: "read" }],
      messages: [
        { role: "user", content: [{ type: "text", text: "a" }] },
        { role: "assistant", content: [{ type: "text", text: "b" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "c" },
            { type: "text", text: "d" },
          ],
        },
      ],
    });
    const mark = { cache_control: { type: "ephemeral" } };
    expect(result).toEqual({
      system: [{ type: "text", text: "be careful", ...mark }],
      tools: [tool, { ...tool, name: "read", ...mark }],
      messages: [
        { role: "user", content: [{ type: "text", text: "a" }] },
        { role: "assistant", content: [{ type: "text", text: "b" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "c" },
            { type: "text", text: "d", ...mark },
          ],
        },
      ],
    });
  });
});
