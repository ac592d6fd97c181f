import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import {
  toModelEventsFromOpenAI,
  toOpenAIMessages,
  toOpenAITools,
} from "../src/providers/openai-protocol.js";
import { responsesReasoningData } from "../src/providers/responses-reasoning.js";
import { type CompletionScript, completion } from "../src/testing/openai-server.js";
import type { Message, ModelEvent } from "../src/types.js";
import { collect, shapeOf, testIds } from "./support/events.js";

async function caught(chunks: unknown[], taken: string[] = []) {
  async function* source() {
    yield* chunks as ChatCompletionChunk[];
  }
  return collect(toModelEventsFromOpenAI(source(), testIds(taken)));
}

async function run(chunks: unknown[], taken: string[] = []) {
  const { out, error } = await caught(chunks, taken);
  return { out, error: error?.message };
}

const chunksOf = (script: CompletionScript) =>
  completion(script)
    .map((frame) => frame.data)
    .filter((data) => data !== "[DONE]");
const done: ModelEvent = { type: "done", usage: { inputTokens: 10, outputTokens: 5 } };
const call = (id: string, name: string, input: Record<string, unknown>): ModelEvent => ({
  type: "tool_call",
  call: { id, name, input },
});
const twoCalls = [
  { id: "call_a", name: "read", input: { path: "a" } },
  { id: "call_b", name: "read", input: { path: "b" } },
];

describe("toModelEventsFromOpenAI", () => {
  it("streams text and assembles calls split across fragments", async () => {
    const input = { path: "src/x.ts", limit: 5 };
    expect(
      await run(
        chunksOf({ text: ["Hi", "!"], calls: [{ id: "call_1", name: "read", input, pieces: 7 }] }),
      ),
    ).toEqual({
      out: [
        { type: "text", text: "Hi" },
        { type: "text", text: "!" },
        call("call_1", "read", input),
        done,
      ],
      error: undefined,
    });
  });

  it("reports the reasoning tokens of a model that counts them", async () => {
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 50,
      total_tokens: 150,
      completion_tokens_details: { reasoning_tokens: 40 },
    };
    const chunks = chunksOf({ text: ["Hi"] }).map((chunk) =>
      (chunk as { usage?: object }).usage ? { ...(chunk as object), usage } : chunk,
    );
    expect((await run(chunks)).out.at(-1)).toEqual({
      type: "done",
      usage: { inputTokens: 100, outputTokens: 50, reasoningTokens: 40 },
    });
  });

  it.each([
    ["whole arguments in one chunk (Ollama)", { wholeArguments: true }],
    ["arguments as an object", { argumentsAsObject: true }],
    ["finish_reason stop with calls", { stopWithCalls: true }],
  ])("accepts %s", async (_name, quirks) => {
    expect((await run(chunksOf({ calls: twoCalls, quirks }))).out).toEqual([
      call("call_a", "read", { path: "a" }),
      call("call_b", "read", { path: "b" }),
      done,
    ]);
  });

  it("generates ids when the server sends none", async () => {
    expect((await run(chunksOf({ calls: twoCalls, quirks: { noIds: true } }))).out).toEqual([
      call("gen_0", "read", { path: "a" }),
      call("gen_1", "read", { path: "b" }),
      done,
    ]);
  });

  it("separates parallel calls that all reuse index 0", async () => {
    expect(
      (await run(chunksOf({ calls: twoCalls, quirks: { reuseIndexZero: true } }))).out,
    ).toEqual([call("call_a", "read", { path: "a" }), call("call_b", "read", { path: "b" }), done]);
  });

  it("reads empty arguments as {}", async () => {
    expect(
      (
        await run(
          chunksOf({
            calls: [{ id: "call_1", name: "ls", input: {} }],
            quirks: { wholeArguments: true },
          }),
        )
      ).out,
    ).toEqual([call("call_1", "ls", {}), done]);
    const empty = chunksOf({
      calls: [{ id: "call_1", name: "ls", input: {} }],
      quirks: { wholeArguments: true },
    }).map((data) =>
      JSON.parse(JSON.stringify(data).replace('"arguments":"{}"', '"arguments":""')),
    );
    expect(JSON.stringify(empty)).toContain('"arguments":""');
    expect((await run(empty)).out).toEqual([call("call_1", "ls", {}), done]);
  });

  it("fails on length in the middle of a call and never yields it", async () => {
    const chunks = chunksOf({
      text: ["writing"],
      calls: [{ id: "call_1", name: "write", input: { path: "a" } }],
      finishReason: "length",
    });
    expect(await run(chunks)).toEqual({
      out: [{ type: "text", text: "writing" }],
      error:
        "the model reached its output token limit (finish_reason length) before finishing; raise the limit or ask for less; the cut-off tool call was not run",
    });
  });

  it("fails when the stream ends without a finish_reason", async () => {
    expect((await run(chunksOf({ text: ["partial"], finishReason: null }))).error).toBe(
      "the model stream ended without a finish_reason",
    );
  });

  it.each([
    [
      "content_filter",
      "the provider's content filter stopped the answer (finish_reason content_filter)",
    ],
    ["weird", 'unsupported finish_reason "weird"'],
  ])("fails on finish_reason %s", async (reason, message) => {
    expect((await run(chunksOf({ text: ["x"], finishReason: reason }))).error).toBe(message);
  });

  it("throws in-band errors in OpenAI's and vLLM's shapes as a ProviderError", async () => {
    const openai = await caught([{ error: { message: "boom", type: "server_error" } }]);
    expect(openai.error).toBeInstanceOf(Error);
    expect(shapeOf(openai.error)).toEqual({
      name: "ProviderError",
      type: "server_error",
      message: "boom",
    });
    const vllm = await caught([{ object: "error", message: "overloaded", code: 503 }]);
    expect(shapeOf(vllm.error)).toEqual({
      name: "ProviderError",
      type: "error",
      message: "overloaded",
    });
    expect(shapeOf((await caught([{ error: {} }])).error)).toEqual({
      name: "ProviderError",
      type: "error",
      message: "the provider sent an error without a message",
    });
  });

  it("gives fresh ids to calls whose id is repeated, has spaces, is empty, missing or taken by the history, and a safe name to an empty or missing one", async () => {
    const fragment = (index: number, id: string | undefined, name: string | undefined) => ({
      index,
      ...(id !== undefined && { id }),
      function: { ...(name !== undefined && { name }), arguments: "{}" },
    });
    const chunks = [
      {
        object: "chat.completion.chunk",
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                fragment(0, "call_a", "read"),
                fragment(1, "call_a", "ls"),
                fragment(2, "call b", "ls"),
                fragment(3, "", "ls"),
                fragment(4, "call_old", "ls"),
                fragment(5, "call_c", ""),
                fragment(6, "call_d", undefined),
                fragment(7, "call_e", "read file"),
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
      },
    ];
    expect(await run(chunks, ["call_old", "gen_1"])).toEqual({
      out: [
        call("call_a", "read", {}),
        call("gen_0", "ls", {}),
        call("gen_2", "ls", {}),
        call("gen_3", "ls", {}),
        call("gen_4", "ls", {}),
        call("call_c", "unnamed_tool", {}),
        call("call_d", "unnamed_tool", {}),
        call("call_e", "read_file", {}),
        { type: "done" },
      ],
      error: undefined,
    });
  });

  it("yields non-object and invalid arguments as {} and why", async () => {
    const withArgs = (args: string) =>
      chunksOf({
        calls: [{ id: "c", name: "ls", input: {} }],
        quirks: { wholeArguments: true },
      }).map((data) =>
        JSON.parse(
          JSON.stringify(data).replace('"arguments":"{}"', `"arguments":${JSON.stringify(args)}`),
        ),
      );
    const invalid = async (args: string) =>
      (await run(withArgs(args))).out.flatMap((event) =>
        event.type === "tool_call" ? [[event.call.input, event.invalidInput]] : [],
      );
    expect(await invalid("[1]")).toEqual([[{}, "input must be an object, not an array"]]);
    expect(await invalid("null")).toEqual([[{}, "input must be an object, not null"]]);
    expect(await invalid("{oops")).toEqual([[{}, "input is not valid JSON"]]);
  });
});

describe("toModelEventsFromOpenAI edge cases", () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  it("assembles fragments without an index by position, keeps a repeated id as one call and the first name", async () => {
    const chunks = [
      { object: "chat.completion.chunk" },
      chunk({
        tool_calls: [
          { id: "a", function: { name: "read", arguments: '{"path":' } },
          { id: "b", function: { name: "ls" } },
        ],
      }),
      chunk({ tool_calls: [{ id: "a", function: { name: "write", arguments: '"x"}' } }] }),
      chunk({ tool_calls: [{ index: 1 }, { index: 1, function: { arguments: null } }] }),
      chunk({}, "function_call"),
    ];
    expect((await run(chunks)).out).toEqual([
      call("a", "read", { path: "x" }),
      call("b", "ls", {}),
      { type: "done" },
    ]);
  });

  it("starts a new call when a name comes after complete arguments, without ids", async () => {
    const chunks = [
      chunk({ tool_calls: [{ index: 0, function: { name: "read", arguments: '{"path":"a"}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: "read", arguments: { path: "b" } } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: "ls", arguments: "  " } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: "ls" } }] }),
      chunk({}, "tool_calls"),
    ];
    expect((await run(chunks)).out).toEqual([
      call("gen_0", "read", { path: "a" }),
      call("gen_1", "read", { path: "b" }),
      call("gen_2", "ls", {}),
      { type: "done" },
    ]);
  });

  it("says what was cut only when a call was cut, and names content_filter plainly", async () => {
    expect((await run([chunk({ content: "long" }, "length")])).error).toBe(
      "the model reached its output token limit (finish_reason length) before finishing; raise the limit or ask for less",
    );
    expect(
      (
        await run([
          chunk(
            { tool_calls: [{ index: 0, id: "c", function: { name: "ls", arguments: "{}" } }] },
            "content_filter",
          ),
        ])
      ).error,
    ).toBe("the provider's content filter stopped the answer (finish_reason content_filter)");
  });
});

describe("toOpenAIMessages", () => {
  it("sends no system message for an empty prompt and tools as functions", () => {
    expect(toOpenAIMessages("", [{ role: "user", content: "x" }])).toEqual([
      { role: "user", content: "x" },
    ]);
    expect(
      toOpenAITools([{ name: "ls", description: "list", inputSchema: { type: "object" } }]),
    ).toEqual([
      {
        type: "function",
        function: { name: "ls", description: "list", parameters: { type: "object" } },
      },
    ]);
  });

  it("maps roles, sends arguments as a JSON string and marks errors in the text", () => {
    expect(
      toOpenAIMessages("be brief", [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "c1", name: "ls", input: { path: "." } }],
        },
        { role: "tool", toolCallId: "c1", content: "denied", isError: true },
        { role: "assistant", content: "ok", toolCalls: [] },
      ]),
    ).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "ls", arguments: '{"path":"."}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "Error: denied" },
      { role: "assistant", content: "ok" },
    ]);
  });
});

describe("reasoning another API wrote", () => {
  it("sends no reasoning_content for rounds whose reasoning came from the Responses API", () => {
    const data = responsesReasoningData("gpt-5", { id: "rs_1", encrypted_content: "sealed" });
    const history: Message[] = [
      { role: "user", content: "list" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name: "ls", input: {} }],
        reasoning: [
          { type: "thinking", text: "r1", at: { text: 0, calls: 0 } },
          { type: "redacted_thinking", data, at: { text: 0, calls: 0 } },
        ],
      },
      { role: "tool", toolCallId: "c1", content: "(empty)", isError: false },
    ];
    expect(toOpenAIMessages("", history, { replayReasoning: true })).toEqual([
      { role: "user", content: "list" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "(empty)" },
    ]);
  });
});
