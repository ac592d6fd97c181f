import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { toAnthropicMessages } from "../src/providers/anthropic-protocol.js";
import { OpenAIModelClient, type OpenAIOptions } from "../src/providers/openai.js";
import * as anthropic from "../src/testing/anthropic-server.js";
import * as openai from "../src/testing/openai-server.js";
import { postRaw } from "../src/testing/sse-server.js";
import type { Message, Reasoning, ThinkingLevel } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { scriptedTool } from "./support/tools.js";

/**
 * What each protocol says of thinking beyond the shared contract (`thinking.test.ts`): the
 * Messages API's redacted and interleaved thinking and its refusals, the levels each adapter
 * asks for, and the Chat Completions servers' reasoning fields, sent back or not.
 */

const track = useCleanup();
const user: Message = { role: "user", content: "Look around." };
const ls = scriptedTool("ls", async () => ({ content: "a.txt" }));
const read = scriptedTool("read", async () => ({ content: "text" }));
const sig = anthropic.thinkingSignature;

const anthropicClient = (server: { url: string }, model: string, thinking?: ThinkingLevel) =>
  new AnthropicModelClient({
    apiKey: "test-key",
    model,
    baseURL: server.url,
    ...(thinking && { thinking }),
  });

describe("Anthropic thinking", () => {
  it("sends redacted and interleaved thinking back in the order it came, unchanged", async () => {
    const server = track(
      await anthropic.startAnthropicServer([
        anthropic.stream(
          anthropic.turn({
            thinking: [{ redacted: "hidden reasoning" }, ["First ", "the listing."]],
            text: ["Two steps."],
            calls: [
              { id: "call_1", name: "ls", input: {} },
              { id: "call_2", name: "read", input: { path: "a" }, thinking: ["Then read a."] },
            ],
          }),
        ),
        anthropic.stream(anthropic.turn({ thinking: [["Both ran."]], text: ["Done."] })),
      ]),
    );
    const result = await runAgent({
      client: anthropicClient(server, "claude-opus-4-1-local", "high"),
      tools: [ls, read],
      system: "",
      messages: [user],
    });
    expect(result.text).toBe("Done.");
    expect(server.rejections).toEqual([]);
    expect(result.messages[1]).toEqual({
      role: "assistant",
      content: "Two steps.",
      toolCalls: [
        { id: "call_1", name: "ls", input: {} },
        { id: "call_2", name: "read", input: { path: "a" } },
      ],
      reasoning: [
        {
          type: "redacted_thinking",
          data: anthropic.redactedData("hidden reasoning"),
          at: { text: 0, calls: 0 },
        },
        {
          type: "thinking",
          text: "First the listing.",
          signature: sig("First the listing."),
          at: { text: 0, calls: 0 },
        },
        {
          type: "thinking",
          text: "Then read a.",
          signature: sig("Then read a."),
          at: { text: 10, calls: 1 },
        },
      ],
    });
    const sent = server.requests[1]?.body.messages as { content: unknown }[];
    expect(sent[1]?.content).toEqual([
      { type: "redacted_thinking", data: anthropic.redactedData("hidden reasoning") },
      { type: "thinking", thinking: "First the listing.", signature: sig("First the listing.") },
      { type: "text", text: "Two steps." },
      { type: "tool_use", id: "call_1", name: "ls", input: {} },
      { type: "thinking", thinking: "Then read a.", signature: sig("Then read a.") },
      { type: "tool_use", id: "call_2", name: "read", input: { path: "a" } },
    ]);
  });

  it.each([
    [
      "claude-sonnet-4-5-local",
      "low",
      { thinking: { type: "enabled", budget_tokens: 2048 }, max_tokens: 10240 },
      "interleaved-thinking-2025-05-14",
    ],
    [
      "claude-3-7-sonnet-local",
      "high",
      { thinking: { type: "enabled", budget_tokens: 24576 }, max_tokens: 32768 },
      "interleaved-thinking-2025-05-14",
    ],
    [
      "claude-sonnet-5-5",
      "medium",
      {
        thinking: { type: "adaptive", display: "summarized" },
        output_config: { effort: "medium" },
        max_tokens: 8192,
      },
      undefined,
    ],
    [
      "claude-sonnet-5",
      "high",
      {
        thinking: { type: "adaptive", display: "summarized" },
        output_config: { effort: "high" },
        max_tokens: 8192,
      },
      undefined,
    ],
    [
      "claude-opus-5-5",
      "low",
      {
        thinking: { type: "adaptive", display: "summarized" },
        output_config: { effort: "low" },
        max_tokens: 8192,
      },
      undefined,
    ],
    [
      "claude-opus-4-6",
      "high",
      { thinking: { type: "adaptive" }, output_config: { effort: "high" }, max_tokens: 8192 },
      undefined,
    ],
    [
      "claude-sonnet-5-5",
      "off",
      { thinking: { type: "between_tools" }, max_tokens: 8192 },
      undefined,
    ],
    ["claude-sonnet-5", "off", { thinking: { type: "disabled" }, max_tokens: 8192 }, undefined],
    ["claude-opus-5-5", "off", { output_config: { effort: "low" }, max_tokens: 8192 }, undefined],
    ["claude-fable-5-1", "off", { output_config: { effort: "low" }, max_tokens: 8192 }, undefined],
    ["claude-opus-4-6", "off", { thinking: { type: "disabled" }, max_tokens: 8192 }, undefined],
    ["local-model", "off", { thinking: { type: "disabled" }, max_tokens: 8192 }, undefined],
    ["claude-sonnet-5-5", undefined, { max_tokens: 8192 }, undefined],
    // Gateways spell the same models their own way: OpenRouter, Bedrock, Vertex, dotted versions.
    [
      "anthropic/claude-sonnet-4.5",
      "low",
      { thinking: { type: "enabled", budget_tokens: 2048 }, max_tokens: 10240 },
      "interleaved-thinking-2025-05-14",
    ],
    [
      "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      "low",
      { thinking: { type: "enabled", budget_tokens: 2048 }, max_tokens: 10240 },
      "interleaved-thinking-2025-05-14",
    ],
    [
      "claude-opus-4-1@20250805",
      "medium",
      { thinking: { type: "enabled", budget_tokens: 8192 }, max_tokens: 16384 },
      "interleaved-thinking-2025-05-14",
    ],
  ] as const)("asks %s for thinking %s as its API takes it", async (model, level, asked, beta) => {
    const server = track(
      await anthropic.startAnthropicServer([anthropic.stream(anthropic.turn({ text: ["ok"] }))]),
    );
    await runAgent({
      client: anthropicClient(server, model, level),
      tools: [],
      system: "",
      messages: [user],
    });
    expect(server.rejections).toEqual([]);
    const { thinking, output_config, max_tokens } = server.requests[0]?.body ?? {};
    expect({
      ...(thinking !== undefined && { thinking }),
      ...(output_config !== undefined && { output_config }),
      max_tokens,
    }).toEqual(asked);
    expect(server.requests[0]?.headers["anthropic-beta"]).toBe(beta);
  });
});

describe("Anthropic thinking per tool loop", () => {
  const call = (id: string) => ({ id, name: "ls", input: {} });
  const signed = (text: string): Reasoning => ({
    type: "thinking",
    text,
    signature: sig(text),
    at: { text: 0, calls: 0 },
  });
  const round = (id: string, reasoning?: Reasoning[]): Message => ({
    role: "assistant",
    content: "",
    toolCalls: [call(id)],
    ...(reasoning && { reasoning }),
  });
  const result = (id: string): Message => ({
    role: "tool",
    toolCallId: id,
    content: "a.txt",
    isError: false,
  });
  const back = (text: string) => ({ type: "thinking", thinking: text, signature: sig(text) });
  const use = (id: string) => ({ type: "tool_use", ...call(id) });
  const answer = (id: string) => ({
    type: "tool_result",
    tool_use_id: id,
    content: "a.txt",
    is_error: false,
  });
  const earlier: Message[] = [
    user,
    { role: "assistant", content: "Hello.", toolCalls: [], reasoning: [signed("Greet.")] },
    { role: "user", content: "List." },
  ];
  const earlierSent = [
    { role: "user", content: [{ type: "text", text: "Look around." }] },
    { role: "assistant", content: [back("Greet."), { type: "text", text: "Hello." }] },
  ];

  /** The request one round of `model` at `level` makes from `history`. */
  async function request(model: string, level: ThinkingLevel | undefined, history: Message[]) {
    const server = track(
      await anthropic.startAnthropicServer([anthropic.stream(anthropic.turn({ text: ["ok"] }))]),
    );
    const client = anthropicClient(server, model, level);
    for await (const _event of client.stream({ system: "", tools: [], messages: history })) {
      // Drained: only the request matters here.
    }
    expect(server.rejections).toEqual([]);
    const sent = server.requests[0];
    const { thinking, output_config, max_tokens, messages } = sent?.body ?? {};
    return {
      shape: {
        ...(thinking !== undefined && { thinking }),
        ...(output_config !== undefined && { output_config }),
        max_tokens,
        beta: sent?.headers["anthropic-beta"],
      },
      // Without the cache breakpoint on the newest block, which every request has.
      messages: (messages as { role: string; content: Record<string, unknown>[] }[]).map(
        (message) => ({
          ...message,
          content: message.content.map(({ cache_control: _, ...block }) => block),
        }),
      ),
    };
  }

  it("turns thinking off for a loop whose first round did not think, its later rounds' thinking left out", async () => {
    // The loop's first round came from another provider (no signature); its second thought.
    const unsigned: Reasoning = { type: "thinking", text: "Elsewhere.", at: { text: 0, calls: 0 } };
    const history = [
      ...earlier,
      round("call_1", [unsigned]),
      result("call_1"),
      round("call_2", [signed("Now.")]),
      result("call_2"),
    ];
    const sent = await request("claude-sonnet-4-5-local", "high", history);
    expect(sent.shape).toEqual({
      thinking: { type: "disabled" },
      max_tokens: 8192,
      beta: undefined,
    });
    expect(sent.messages).toEqual([
      ...earlierSent,
      { role: "user", content: [{ type: "text", text: "List." }] },
      { role: "assistant", content: [use("call_1")] },
      { role: "user", content: [answer("call_1")] },
      { role: "assistant", content: [use("call_2")] },
      { role: "user", content: [answer("call_2")] },
    ]);
  });

  it("keeps the level for a loop whose first round thought, even when a later round did not", async () => {
    const history = [
      ...earlier,
      round("call_1", [signed("Plan.")]),
      result("call_1"),
      round("call_2"),
      result("call_2"),
    ];
    const sent = await request("claude-sonnet-4-5-local", "high", history);
    expect(sent.shape).toEqual({
      thinking: { type: "enabled", budget_tokens: 24576 },
      max_tokens: 32768,
      beta: "interleaved-thinking-2025-05-14",
    });
    expect(sent.messages.slice(3)).toEqual([
      { role: "assistant", content: [back("Plan."), use("call_1")] },
      { role: "user", content: [answer("call_1")] },
      { role: "assistant", content: [use("call_2")] },
      { role: "user", content: [answer("call_2")] },
    ]);
  });

  it("finishes a loop that thought with thinking off and without the loop's thinking, earlier turns' kept", async () => {
    const history = [...earlier, round("call_1", [signed("Plan.")]), result("call_1")];
    const sent = await request("claude-opus-4-6", "off", history);
    expect(sent.shape).toEqual({
      thinking: { type: "disabled" },
      max_tokens: 8192,
      beta: undefined,
    });
    expect(sent.messages).toEqual([
      ...earlierSent,
      { role: "user", content: [{ type: "text", text: "List." }] },
      { role: "assistant", content: [use("call_1")] },
      { role: "user", content: [answer("call_1")] },
    ]);
  });

  it("finishes a loop begun without thinking on Claude Sonnet 5.5 with between_tools at the level's effort", async () => {
    const history = [
      ...earlier,
      round("call_1"),
      result("call_1"),
      round("call_2", [signed("Progress.")]),
      result("call_2"),
    ];
    const sent = await request("claude-sonnet-5-5", "high", history);
    expect(sent.shape).toEqual({
      thinking: { type: "between_tools" },
      output_config: { effort: "high" },
      max_tokens: 8192,
      beta: undefined,
    });
    // The progress notes between tool calls go back unchanged, as the model's docs ask.
    expect(sent.messages.slice(3)).toEqual([
      { role: "assistant", content: [use("call_1")] },
      { role: "user", content: [answer("call_1")] },
      { role: "assistant", content: [back("Progress."), use("call_2")] },
      { role: "user", content: [answer("call_2")] },
    ]);
  });

  it("finishes a loop that thought on Claude Sonnet 5.5 with between_tools, its thinking kept", async () => {
    const history = [...earlier, round("call_1", [signed("Plan.")]), result("call_1")];
    const sent = await request("claude-sonnet-5-5", "off", history);
    expect(sent.shape).toEqual({
      thinking: { type: "between_tools" },
      max_tokens: 8192,
      beta: undefined,
    });
    expect(sent.messages.slice(3)).toEqual([
      { role: "assistant", content: [back("Plan."), use("call_1")] },
      { role: "user", content: [answer("call_1")] },
    ]);
  });

  it("asks for the level again once a prompt follows the loop, and leaves an unset level alone", async () => {
    const done: Message[] = [
      ...earlier,
      round("call_1"),
      result("call_1"),
      { role: "assistant", content: "Listed.", toolCalls: [] },
      { role: "user", content: "Again." },
    ];
    const next = await request("claude-opus-4-6", "medium", done);
    expect(next.shape).toEqual({
      thinking: { type: "adaptive" },
      output_config: { effort: "medium" },
      max_tokens: 8192,
      beta: undefined,
    });
    const inLoop = [...earlier, round("call_1", [signed("Plan.")]), result("call_1")];
    const unset = await request("claude-opus-4-6", undefined, inLoop);
    expect(unset.shape).toEqual({ max_tokens: 8192, beta: undefined });
    expect(unset.messages[3]).toEqual({
      role: "assistant",
      content: [back("Plan."), use("call_1")],
    });
  });
});

describe("the strict Messages server's thinking rules", () => {
  const thought = { type: "thinking", thinking: "Plan.", signature: sig("Plan.") };
  const toolUse = { type: "tool_use", id: "call_1", name: "ls", input: {} };
  const loop = (assistant: unknown[], thinking = { type: "enabled", budget_tokens: 1024 }) => ({
    model: "m",
    max_tokens: 2048,
    thinking,
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: assistant },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "a" }] },
    ],
  });

  it.each([
    [
      "the thinking of the tool loop missing",
      loop([toolUse]),
      "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
    ],
    [
      "the thinking of the tool loop modified",
      loop([{ ...thought, thinking: "Plan!" }, toolUse]),
      "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
    ],
    [
      "redacted thinking altered",
      loop([{ type: "redacted_thinking", data: `${anthropic.redactedData("x")}=` }, toolUse]),
      "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
    ],
    [
      "thinking after the text",
      loop([{ type: "text", text: "Hm." }, thought, toolUse]),
      "messages.1.content.0: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found text.",
    ],
    [
      "a budget under the minimum",
      loop([thought, toolUse], { type: "enabled", budget_tokens: 1000 }),
      "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
    ],
    [
      "a temperature with thinking on",
      { ...loop([thought, toolUse]), temperature: 0.2 },
      "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking",
    ],
  ])("refuses %s", async (_name, body, message) => {
    expect(anthropic.validate(body)).toBe(message);
    const server = track(await anthropic.startAnthropicServer([]));
    const answer = await postRaw(`${server.url}/v1/messages`, JSON.stringify(body), {
      "x-api-key": "k",
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text).error.message).toBe(message);
  });

  it("takes the tool loop with its thinking as it was, and thinking off without it", () => {
    expect(anthropic.validate(loop([thought, toolUse]))).toBeUndefined();
    expect(anthropic.validate(loop([toolUse], { type: "disabled" } as never))).toBeUndefined();
  });

  /** A loop of two rounds, `first` then `second`, each calling a tool, under `thinking`. */
  const longLoop = (first: unknown[], second: unknown[], thinking: unknown) => ({
    model: "m",
    max_tokens: 2048,
    thinking,
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: [...first, toolUse] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "a" }] },
      { role: "assistant", content: [...second, { ...toolUse, id: "call_2" }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_2", content: "b" }] },
    ],
  });
  const enabled = { type: "enabled", budget_tokens: 1024 };
  const again = { type: "thinking", thinking: "Again.", signature: sig("Again.") };

  it("holds a loop to the thinking its first round began with, not its latest round", () => {
    expect(anthropic.validate(longLoop([thought], [], enabled))).toBeUndefined();
    expect(anthropic.validate(longLoop([], [again], enabled))).toMatch(
      /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`\./,
    );
  });

  it("refuses thinking blocks in the loop of a request with thinking disabled, and takes them from earlier turns", () => {
    const disabled = { type: "disabled" };
    expect(anthropic.validate(longLoop([thought], [], disabled))).toBe(
      `messages.1.content.0: When \`thinking\` is disabled, a final \`assistant\` turn (the tool use loop the request ends in) must not contain \`thinking\` or \`redacted_thinking\` blocks. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
    );
    expect(anthropic.validate(longLoop([], [again], disabled))).toMatch(
      /^messages\.3\.content\.0: /,
    );
    const earlier = {
      model: "m",
      max_tokens: 2048,
      thinking: disabled,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [thought, { type: "text", text: "Hello." }] },
        { role: "user", content: "list" },
        { role: "assistant", content: [toolUse] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "a" }] },
      ],
    };
    expect(anthropic.validate(earlier)).toBeUndefined();
  });

  const on = (model: string, thinking: unknown, effort?: string) => ({
    ...loop([toolUse], thinking as never),
    model,
    ...(effort !== undefined && { output_config: { effort } }),
  });

  it.each([
    [
      "claude-sonnet-5-5",
      { type: "disabled" },
      undefined,
      'thinking.type: "disabled" is not supported on this model. To turn off up-front thinking, send "between_tools".',
    ],
    [
      "claude-sonnet-5-5",
      { type: "enabled", budget_tokens: 1024 },
      undefined,
      'thinking.type: "enabled" is not supported on this model. Use "adaptive" or "between_tools", with `output_config.effort`.',
    ],
    [
      "claude-sonnet-5-5",
      { type: "between_tools" },
      "xhigh",
      'thinking.type: "between_tools" is not supported at effort "xhigh". Use "adaptive" thinking at this effort.',
    ],
    [
      "claude-opus-5-5",
      { type: "disabled" },
      undefined,
      'thinking.type: "disabled" is not supported on this model. Use "adaptive" and `output_config.effort` to control thinking.',
    ],
    [
      "claude-fable-5-1-20261001",
      { type: "between_tools" },
      undefined,
      'thinking.type: "between_tools" is not supported on this model. Use "adaptive" and `output_config.effort` to control thinking.',
    ],
    [
      "claude-opus-4-6",
      { type: "between_tools" },
      undefined,
      'thinking.type: "between_tools" is not supported on this model.',
    ],
  ])("refuses on %s the thinking %j at effort %s", async (model, thinking, effort, message) => {
    const body = on(model, thinking, effort);
    expect(anthropic.validate(body)).toBe(message);
    const server = track(await anthropic.startAnthropicServer([]));
    const answer = await postRaw(`${server.url}/v1/messages`, JSON.stringify(body), {
      "x-api-key": "k",
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text).error).toEqual({ type: "invalid_request_error", message });
  });

  it("takes between_tools on Claude Sonnet 5.5 at low to high effort, a loop with or without thinking", () => {
    for (const effort of [undefined, "low", "medium", "high"]) {
      expect(anthropic.validate(on("claude-sonnet-5-5", { type: "between_tools" }, effort))).toBe(
        undefined,
      );
    }
    const betweenTools = { type: "between_tools" };
    const sonnet = (body: object) => ({ ...body, model: "claude-sonnet-5-5" });
    expect(anthropic.validate(sonnet(longLoop([thought], [again], betweenTools)))).toBeUndefined();
    expect(anthropic.validate(sonnet(longLoop([], [again], betweenTools)))).toBeUndefined();
    expect(anthropic.validate(on("claude-sonnet-5", { type: "disabled" }))).toBeUndefined();
    expect(anthropic.validate(on("claude-opus-4-6", { type: "disabled" }))).toBeUndefined();
  });

  it.each([
    ["claude-sonnet-5-5", undefined, ""],
    ["claude-sonnet-5-5", "off", "Listing."],
    ["claude-sonnet-5-5", "low", "Listing."],
    ["claude-sonnet-5", undefined, ""],
    ["claude-opus-5-5", "off", ""],
    ["claude-opus-4-6", undefined, "Listing."],
  ] as const)("streams %s's thinking at %s with the text %j", async (model, level, text) => {
    const server = track(
      await anthropic.startAnthropicServer([
        anthropic.stream(anthropic.turn({ thinking: [["List", "ing."]], text: ["ok"] })),
      ]),
    );
    const parts: Reasoning[] = [];
    const client = anthropicClient(server, model, level);
    for await (const event of client.stream({ system: "", tools: [], messages: [user] }))
      if (event.type === "reasoning") parts.push(event.part);
    expect(server.rejections).toEqual([]);
    expect(parts).toEqual([
      { type: "thinking", text, signature: sig(text), at: { text: 0, calls: 0 } },
    ]);
  });

  it("is what refuses a round whose thinking the adapter dropped", () => {
    const history: Message[] = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call_1", name: "ls", input: {} }],
        reasoning: [{ type: "thinking", text: "Plan.", at: { text: 0, calls: 0 } }],
      },
      { role: "tool", toolCallId: "call_1", content: "a", isError: false },
    ];
    // Reasoning with no signature came from another provider: the API cannot take it back.
    const body = {
      model: "m",
      max_tokens: 2048,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: toAnthropicMessages(history),
    };
    expect(anthropic.validate(body)).toMatch(/^messages\.1\.content\.0\.type: Expected `thinking`/);
  });
});

describe("OpenAI-compatible reasoning", () => {
  const round = (field?: "reasoning" | "reasoning_content") =>
    openai.stream(
      openai.completion({
        reasoning: ["Check ", "the folder."],
        ...(field && { reasoningField: field }),
        calls: [{ id: "call_1", name: "ls", input: {} }],
      }),
    );
  const answer = openai.stream(openai.completion({ text: ["Done."] }));
  const runOn = async (
    reasoningBack: openai.OpenAIServerOptions["reasoningBack"],
    options: Partial<OpenAIOptions> = {},
    field?: "reasoning" | "reasoning_content",
  ) => {
    const server = track(
      await openai.startOpenAIServer([round(field), answer], {
        ...(reasoningBack && { reasoningBack }),
      }),
    );
    const client = new OpenAIModelClient({
      baseURL: `${server.url}/v1`,
      model: "local-model",
      ...options,
    });
    const outcome = await runAgent({ client, tools: [ls], system: "", messages: [user] }).then(
      (result) => result.messages,
      (error: Error) => error.message,
    );
    return { server, outcome };
  };

  it("keeps reasoning streamed as `reasoning` (Ollama, OpenRouter) and sends it back", async () => {
    const { server, outcome } = await runOn("required", {}, "reasoning");
    expect(server.rejections).toEqual([]);
    expect(outcome).toEqual([
      user,
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call_1", name: "ls", input: {} }],
        reasoning: [{ type: "thinking", text: "Check the folder.", at: { text: 0, calls: 0 } }],
      },
      { role: "tool", toolCallId: "call_1", content: "a.txt", isError: false },
      { role: "assistant", content: "Done.", toolCalls: [] },
    ]);
    const sent = server.requests[1]?.body.messages as Record<string, unknown>[];
    expect(sent[1]).toEqual({
      role: "assistant",
      content: null,
      reasoning_content: "Check the folder.",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "ls", arguments: "{}" } }],
    });
  });

  it("gives a DeepSeek-style server an empty reasoning_content for a tool round that did not reason", async () => {
    const server = track(
      await openai.startOpenAIServer(
        [
          round(),
          openai.stream(openai.completion({ calls: [{ id: "call_2", name: "ls", input: {} }] })),
          answer,
        ],
        { reasoningBack: "required" },
      ),
    );
    const client = new OpenAIModelClient({ baseURL: `${server.url}/v1`, model: "local-model" });
    await runAgent({ client, tools: [ls], system: "", messages: [user] });
    expect(server.rejections).toEqual([]);
    const sent = (server.requests[2]?.body.messages ?? []) as Record<string, unknown>[];
    expect(sent.filter((m) => m.role === "assistant").map((m) => m.reasoning_content)).toEqual([
      "Check the folder.",
      "",
    ]);
  });

  it("sends no reasoning_content to a server that never streamed reasoning", async () => {
    const server = track(
      await openai.startOpenAIServer(
        [
          openai.stream(openai.completion({ calls: [{ id: "call_1", name: "ls", input: {} }] })),
          answer,
        ],
        { reasoningBack: "refused" },
      ),
    );
    const client = new OpenAIModelClient({ baseURL: `${server.url}/v1`, model: "local-model" });
    const result = await runAgent({ client, tools: [ls], system: "", messages: [user] });
    expect(result.text).toBe("Done.");
    expect(server.rejections).toEqual([]);
  });

  it("is refused by a DeepSeek-style server when the reasoning is not sent back", async () => {
    const { server, outcome } = await runOn("required", { replayReasoning: false });
    expect(outcome).toBe(`400 ${openai.reasoningMissing}`);
    expect(server.rejections).toEqual([openai.reasoningMissing]);
  });

  it("sends no reasoning to a server that refuses the field, when told", async () => {
    const refused = await runOn("refused");
    expect(refused.server.rejections).toEqual([openai.reasoningUnexpected(1)]);
    const quiet = await runOn("refused", { replayReasoning: false });
    expect(quiet.server.rejections).toEqual([]);
    expect(quiet.outcome).toHaveLength(4);
  });

  it.each([
    ["low", "low"],
    ["high", "high"],
    ["off", "none"],
    [undefined, undefined],
  ] as const)("asks for thinking %s as reasoning_effort %s", async (level, effort) => {
    const server = track(await openai.startOpenAIServer([answer]));
    await runAgent({
      client: new OpenAIModelClient({
        baseURL: `${server.url}/v1`,
        model: "local-model",
        ...(level && { thinking: level }),
      }),
      tools: [],
      system: "",
      messages: [user],
    });
    expect(server.requests[0]?.body.reasoning_effort).toBe(effort);
  });
});
