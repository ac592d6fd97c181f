import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgent } from "../src/agent.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { OpenAIResponsesModelClient } from "../src/providers/openai-responses.js";
import {
  toModelEventsFromResponses,
  toResponsesInput,
} from "../src/providers/responses-protocol.js";
import { responsesReasoningData } from "../src/providers/responses-reasoning.js";
import * as anthropic from "../src/testing/anthropic-server.js";
import { notJson } from "../src/testing/openai-server.js";
import {
  encryptedReasoning,
  encryptedUnsupported,
  type ResponsesServer,
  response,
  startResponsesServer,
  status,
  stream,
} from "../src/testing/responses-server.js";
import { postRaw } from "../src/testing/sse-server.js";
import type { Message, ModelClient, ModelEvent, ThinkingLevel } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { scriptedTool } from "./support/tools.js";

/**
 * The Responses API adapter beyond the shared contract (`adapter-contract.test.ts`): what each
 * request carries, encrypted reasoning kept and sent back before the call it preceded, dropped
 * for another model or provider, the failures the API streams, and the strict server's refusals.
 */

const track = useCleanup();

async function* from<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}
const ls = scriptedTool("ls", async () => ({ content: "a.txt" }));
const user: Message = { role: "user", content: "What is here?" };
const lsCall = (id: string) => ({ id, name: "ls", input: {} });

const client = (
  server: ResponsesServer,
  options: { model?: string; thinking?: ThinkingLevel; key?: string; maxTokens?: number } = {},
) =>
  new OpenAIResponsesModelClient({
    baseURL: `${server.url}/v1`,
    model: options.model ?? "gpt-5.5",
    ...(options.thinking && { thinking: options.thinking }),
    ...(options.key !== undefined && { promptCacheKey: () => options.key }),
    ...(options.maxTokens !== undefined && { maxTokens: options.maxTokens }),
  });

async function run(model: ModelClient, messages: Message[]) {
  const events: AgentEvent[] = [];
  const result = await runAgent({
    client: model,
    tools: [ls],
    system: "Be brief.",
    messages,
    onEvent: (event) => void events.push(event),
  });
  return { result, events };
}

/** The `rs_` id of the first reasoning item in a response's frames. */
const reasoningIdOf = (reply: ReturnType<typeof stream>) => {
  if (reply.kind !== "stream") throw new Error("not a stream");
  const done = reply.frames.find(
    (frame) => (frame.data as { item?: { type?: string } }).item?.type === "reasoning",
  );
  return String((done?.data as { item?: { id?: string } } | undefined)?.item?.id);
};

describe("the Responses API adapter", () => {
  it("sends the system prompt as instructions, nothing stored, encrypted reasoning asked for, the level and the cache key", async () => {
    const server = track(await startResponsesServer([stream(response({ text: ["Hi."] }))]));
    await run(client(server, { thinking: "high", key: "20261201-120000-abcdef", maxTokens: 900 }), [
      user,
    ]);
    expect(server.rejections).toEqual([]);
    expect(server.requests[0]?.body).toEqual({
      model: "gpt-5.5",
      instructions: "Be brief.",
      input: [{ type: "message", role: "user", content: "What is here?" }],
      tools: [
        {
          type: "function",
          name: "ls",
          description: ls.spec.description,
          parameters: ls.spec.inputSchema,
          strict: false,
        },
      ],
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "20261201-120000-abcdef",
      reasoning: { effort: "high", summary: "auto" },
      max_output_tokens: 900,
    });
  });

  it("sends no cache key it does not know, no level when none is asked, and none for off", async () => {
    const server = track(
      await startResponsesServer([
        stream(response({ text: ["Hi."] })),
        stream(response({ text: ["Hi."] })),
      ]),
    );
    await run(client(server, { key: "" }), [user]);
    await run(client(server, { thinking: "off" }), [user]);
    const fields = server.requests.map(({ body }) => [body.prompt_cache_key, body.reasoning]);
    expect(fields).toEqual([
      [undefined, undefined],
      [undefined, { effort: "none" }],
    ]);
  });

  it("keeps the encrypted reasoning and sends it back right before the call it preceded", async () => {
    const first = stream(
      response({ reasoning: ["Let me ", "list."], calls: [lsCall("call_1")] }, "gpt-5.5"),
    );
    const second = stream(response({ reasoning: ["Listed."], text: ["One file."] }, "gpt-5.5"));
    const server = track(await startResponsesServer([first, second]));
    const { result, events } = await run(client(server, { thinking: "high" }), [user]);
    expect(server.rejections).toEqual([]);
    expect(result.text).toBe("One file.");
    const rs1 = reasoningIdOf(first);
    const rs2 = reasoningIdOf(second);
    const kept = (id: string) => ({
      type: "redacted_thinking",
      data: responsesReasoningData("gpt-5.5", {
        id,
        encrypted_content: encryptedReasoning("gpt-5.5", id),
      }),
      at: { text: 0, calls: 0 },
    });
    expect(result.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: "",
        toolCalls: [lsCall("call_1")],
        reasoning: [
          { type: "thinking", text: "Let me list.", at: { text: 0, calls: 0 } },
          kept(rs1),
        ],
      },
      { role: "tool", toolCallId: "call_1", content: "a.txt", isError: false },
      {
        role: "assistant",
        content: "One file.",
        toolCalls: [],
        reasoning: [{ type: "thinking", text: "Listed.", at: { text: 0, calls: 0 } }, kept(rs2)],
      },
    ]);
    expect(events.filter((event) => event.type === "thinking")).toEqual([
      { type: "thinking", text: "Let me " },
      { type: "thinking", text: "list." },
      { type: "thinking", text: "Listed." },
    ]);
    expect(server.requests[1]?.body.input).toEqual([
      { type: "message", role: "user", content: "What is here?" },
      {
        type: "reasoning",
        id: rs1,
        summary: [],
        encrypted_content: encryptedReasoning("gpt-5.5", rs1),
      },
      { type: "function_call", call_id: "call_1", name: "ls", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "a.txt" },
    ]);
  });

  it("drops encrypted reasoning written for another model, and never sends it to Anthropic", async () => {
    const round: Message = {
      role: "assistant",
      content: "",
      toolCalls: [lsCall("call_1")],
      reasoning: [
        {
          type: "redacted_thinking",
          data: responsesReasoningData("gpt-5.5", {
            id: "rs_old",
            encrypted_content: encryptedReasoning("gpt-5.5", "rs_old"),
          }),
          at: { text: 0, calls: 0 },
        },
      ],
    };
    const history: Message[] = [
      user,
      round,
      { role: "tool", toolCallId: "call_1", content: "a.txt", isError: false },
      { role: "user", content: "And now?" },
    ];
    const server = track(
      await startResponsesServer([
        stream(response({ text: ["Same."] }, "gpt-5.5")),
        stream(response({ text: ["Other."] }, "gpt-5.6")),
      ]),
    );
    await run(client(server, { model: "gpt-5.5" }), history);
    await run(client(server, { model: "gpt-5.6" }), history);
    expect(server.rejections).toEqual([]);
    const types = server.requests.map(({ body }) =>
      (body.input as { type: string }[]).map((item) => item.type),
    );
    expect(types).toEqual([
      ["message", "reasoning", "function_call", "function_call_output", "message"],
      ["message", "function_call", "function_call_output", "message"],
    ]);
    const claude = track(
      await anthropic.startAnthropicServer([anthropic.stream(anthropic.turn({ text: ["Fine."] }))]),
    );
    const other = new AnthropicModelClient({
      apiKey: "k",
      model: "claude-sonnet-5-5",
      baseURL: claude.url,
    });
    expect((await run(other, history)).result.text).toBe("Fine.");
    expect(claude.rejections).toEqual([]);
    expect(JSON.stringify(claude.requests[0]?.body)).not.toContain("rs_old");
  });

  it("fails on response.incomplete, response.failed and the error event, committing nothing", async () => {
    const server = track(
      await startResponsesServer([
        stream(
          response({ text: ["Half"], status: "incomplete", incompleteReason: "content_filter" }),
        ),
        stream(response({ text: ["Half"] }), { errorAfter: 4, failed: true }),
        stream(response({ text: ["Half"] }), { errorAfter: 4 }),
      ]),
    );
    const failures: string[] = [];
    for (let i = 0; i < 3; i++) {
      await run(client(server), [user]).catch((error: Error) =>
        failures.push(`${error.name}: ${error.message}`),
      );
    }
    expect(failures).toEqual([
      "ProviderError: the provider's content filter stopped the answer (response.incomplete content_filter)",
      "ProviderError: The server had an error processing your request. Sorry about that!",
      "ProviderError: The server had an error processing your request. Sorry about that!",
    ]);
  });

  it.each([
    ['{"path": ', "input is not valid JSON"],
    ["null", "input must be an object, not null"],
    ["[1]", "input must be an object, not an array"],
  ])(
    "yields a call whose arguments are %s as {} and why, with the round's other call",
    async (args, why) => {
      const frames = response({
        calls: [{ id: "call_1", name: "ls", input: { x: 1 } }, lsCall("call_2")],
      });
      const events = frames.map(
        (frame) =>
          JSON.parse(
            JSON.stringify(frame.data).replaceAll(JSON.stringify('{"x":1}').slice(1, -1), () =>
              JSON.stringify(args).slice(1, -1),
            ),
          ) as ResponseStreamEvent,
      );
      const out: ModelEvent[] = [];
      for await (const event of toModelEventsFromResponses(from(events), { model: "gpt-5.5" }))
        out.push(event);
      expect(out.filter((event) => event.type === "tool_call")).toEqual([
        { type: "tool_call", call: { id: "call_1", name: "ls", input: {} }, invalidInput: why },
        { type: "tool_call", call: lsCall("call_2") },
      ]);
    },
  );

  it("asks a model without reasoning no more for encrypted reasoning once it refused it", async () => {
    const server = track(
      await startResponsesServer(
        [
          status(500, "unused: this request is refused before its reply"),
          stream(response({ calls: [lsCall("call_1")] }, "gpt-4.1")),
          stream(response({ text: ["Listed."] }, "gpt-4.1")),
        ],
        { noReasoning: true },
      ),
    );
    const { result } = await run(client(server, { model: "gpt-4.1" }), [user]);
    expect(result.text).toBe("Listed.");
    expect(server.rejections).toEqual([encryptedUnsupported]);
    expect(server.requests.map(({ body }) => body.include)).toEqual([
      ["reasoning.encrypted_content"],
      undefined,
      undefined,
    ]);
  });

  it("does not resend on another refusal", async () => {
    const server = track(
      await startResponsesServer([
        status(400, "Unsupported parameter: 'reasoning.effort' is not supported with this model."),
      ]),
    );
    await expect(run(client(server, { thinking: "high" }), [user])).rejects.toThrow(
      "Unsupported parameter: 'reasoning.effort'",
    );
    expect(server.requests).toHaveLength(1);
  });

  it("fails a round cut off while thinking, and says so", async () => {
    const server = track(
      await startResponsesServer([
        stream(response({ reasoning: ["Let me think"], status: "incomplete" })),
      ]),
    );
    const error = await run(client(server, { thinking: "high" }), [user]).catch(
      (caught: Error) => caught.message,
    );
    expect(error).toBe(
      "the model reached its output token limit (response.incomplete max_output_tokens) before finishing; raise the limit or ask for less; it was cut off while thinking",
    );
  });

  it("reports cached input tokens apart from the rest, and reasoning tokens", async () => {
    const usage = { input: 1200, cached: 1000, output: 40, reasoning: 30 };
    const server = track(await startResponsesServer([stream(response({ text: ["Hi."], usage }))]));
    const events = [];
    for await (const event of client(server).stream({ system: "", messages: [user], tools: [] }))
      events.push(event);
    expect(events.at(-1)).toEqual({
      type: "done",
      usage: { inputTokens: 200, outputTokens: 40, cacheReadTokens: 1000, reasoningTokens: 30 },
    });
  });
});

describe("toResponsesInput", () => {
  const part = (id: string, at: { text: number; calls: number }, model = "gpt-5.5") => ({
    type: "redacted_thinking" as const,
    data: responsesReasoningData(model, { id, encrypted_content: `enc-${id}` }),
    at,
  });
  const item = (id: string) => ({
    type: "reasoning",
    id,
    summary: [],
    encrypted_content: `enc-${id}`,
  });
  const fn = (id: string) => ({ type: "function_call", call_id: id, name: "ls", arguments: "{}" });

  it("puts each item where it came in its round, and leaves out one that nothing followed", () => {
    const round: Message = {
      role: "assistant",
      content: "Hi there",
      toolCalls: [lsCall("call_1"), lsCall("call_2")],
      reasoning: [
        { type: "thinking", text: "readable only", at: { text: 0, calls: 0 } },
        part("rs_a", { text: 0, calls: 0 }),
        part("rs_b", { text: 2, calls: 0 }),
        part("rs_other", { text: 2, calls: 1 }, "gpt-5.6"),
        part("rs_c", { text: 8, calls: 1 }),
        part("rs_last", { text: 8, calls: 2 }),
      ],
    };
    expect(toResponsesInput([round], "gpt-5.5")).toEqual([
      item("rs_a"),
      { type: "message", role: "assistant", content: "Hi" },
      item("rs_b"),
      { type: "message", role: "assistant", content: " there" },
      fn("call_1"),
      item("rs_c"),
      fn("call_2"),
    ]);
  });
});

describe("the local Responses server is as strict as the API", () => {
  const post = async (server: ResponsesServer, body: Record<string, unknown>) => {
    const answer = await postRaw(`${server.url}/v1/responses`, JSON.stringify(body));
    return [
      answer.status,
      (JSON.parse(answer.text) as { error: { message: string } }).error.message,
    ];
  };
  const base = { model: "gpt-5.5", stream: true, store: false };
  const item = (id: string, model = "gpt-5.5") => ({
    type: "reasoning",
    id,
    summary: [],
    encrypted_content: encryptedReasoning(model, id),
  });
  const fc = { type: "function_call", call_id: "call_1", name: "ls", arguments: "{}" };
  const out = { type: "function_call_output", call_id: "call_1", output: "a.txt" };
  const say = { type: "message", role: "user", content: "hi" };

  it("refuses what the API refuses, with its texts", async () => {
    const server = track(await startResponsesServer([]));
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, input: [say], messages: [] }, "Unknown parameter: 'messages'."],
      [{ ...base, input: [{ ...say, name: "x" }] }, "Unknown parameter: 'input[0].name'."],
      [
        { ...base, input: [say, item("rs_1"), say] },
        "Item 'rs_1' of type 'reasoning' was provided without its required following item.",
      ],
      [
        { ...base, input: [say, out] },
        "No tool call found for function call output with call_id call_1.",
      ],
      [{ ...base, input: [say, fc] }, "No tool output found for function call call_1."],
      [
        {
          ...base,
          input: [say, item("rs_1"), fc, out, item("rs_1"), { ...fc, call_id: "call_2" }],
        },
        "Duplicate item found with id rs_1. Remove duplicate items from your input and try again.",
      ],
      [
        { ...base, input: [say, { type: "reasoning", id: "rs_1", summary: [] }, fc, out] },
        "Item with id 'rs_1' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
      ],
      [
        { ...base, input: [say, item("rs_1", "gpt-5.6"), fc, out] },
        "The encrypted content for item rs_1 could not be verified.",
      ],
    ];
    const answers = [];
    for (const [body] of cases) answers.push(await post(server, body));
    expect(answers).toEqual(cases.map(([, message]) => [400, message]));
  });

  it("refuses a lone surrogate and takes a pair", async () => {
    const server = track(await startResponsesServer([stream(response({ text: ["ok"] }))]));
    const body = (escaped: string) =>
      `{"model":"gpt-5.5","stream":true,"store":false,"input":[{"type":"message","role":"user","content":"a ${escaped} b"}]}`;
    const lone = await postRaw(`${server.url}/v1/responses`, body("\\ud83d"));
    expect([lone.status, server.rejections]).toEqual([400, [notJson]]);
    const pair = await postRaw(`${server.url}/v1/responses`, body("\\ud83d\\ude00"));
    expect(pair.status).toBe(200);
  });
});
