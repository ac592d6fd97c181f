import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import fc from "fast-check";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { afterAll, describe, expect, it } from "vitest";
import { isValidCallId, safeToolName } from "../src/history/call-ids.js";
import { toModelEvents } from "../src/providers/anthropic-protocol.js";
import { toModelEventsFromOpenAI } from "../src/providers/openai-protocol.js";
import { blockStart, blockStop, delta, turn } from "../src/testing/anthropic-server.js";
import { completion } from "../src/testing/openai-server.js";
import type { ModelEvent } from "../src/types.js";
import { watchdog } from "./support/until.js";

/**
 * Random legal and illegal streams into both state machines: each run ends in legal events or
 * one clear error, within a time bound, and never with a tool call whose input is not an object.
 */

const runs = 600;
let total = 0;
afterAll(() => {
  console.log(`fuzzing: ${total} random streams through the two adapters`);
});

async function drain(
  source: AsyncIterable<ModelEvent>,
): Promise<{ events: ModelEvent[]; error?: Error }> {
  const events: ModelEvent[] = [];
  const consume = async () => {
    for await (const event of source) events.push(event);
  };
  let disarm = () => {};
  const hung = new Promise<never>((_, reject) => {
    disarm = watchdog(10_000, () => reject(new Error("hung")));
  });
  try {
    await Promise.race([consume(), hung]);
    return { events };
  } catch (error) {
    return { events, error: error as Error };
  } finally {
    disarm();
  }
}

function checkOutcome({ events, error }: { events: ModelEvent[]; error?: Error }): void {
  expect(error?.message).not.toBe("hung");
  for (const event of events) {
    if (event.type === "tool_call") {
      const input = event.call.input;
      expect(typeof input === "object" && input !== null && !Array.isArray(input)).toBe(true);
      expect(isValidCallId(event.call.id)).toBe(true);
      expect(safeToolName(event.call.name)).toBe(event.call.name);
    }
  }
  const ids = events.flatMap((event) => (event.type === "tool_call" ? [event.call.id] : []));
  expect(new Set(ids).size).toBe(ids.length);
  const doneAt = events.findIndex((event) => event.type === "done");
  if (error) {
    expect(error).toBeInstanceOf(Error);
    expect(error.message.length).toBeGreaterThan(0);
    expect(doneAt).toBe(-1);
    expect(events.some((event) => event.type === "tool_call")).toBe(false);
  } else {
    expect(doneAt).toBe(events.length - 1);
  }
}

async function* from<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

// Through JSON and back, as the wire does (-0 becomes 0).
const jsonValue = fc
  .jsonValue({ maxDepth: 2 })
  .map((value) => JSON.parse(JSON.stringify(value)) as unknown);
const inputObject = fc.dictionary(fc.string({ maxLength: 8 }), jsonValue, { maxKeys: 4 });
const jsonPiece = fc.oneof(
  jsonValue.map((value) => JSON.stringify(value)),
  fc.constantFrom("{", "}", '{"a":', "1", '"x"', "[", "]", "null", ",", ""),
  fc.string({ maxLength: 6 }),
);
const stopReason = fc.constantFrom<string | null>(
  "end_turn",
  "tool_use",
  "max_tokens",
  "refusal",
  "pause_turn",
  "stop_sequence",
  "model_context_window_exceeded",
  "brand_new",
  null,
);

const anthropicEvent = fc.oneof(
  fc.constant(turn({})[0]?.data),
  fc
    .record({ index: fc.nat(3), text: fc.string({ maxLength: 5 }) })
    .map(({ index, text }) => blockStart(index, { type: "text", text }).data),
  fc
    .record({
      index: fc.nat(3),
      id: fc.string({ maxLength: 4 }),
      name: fc.constantFrom("read", "ls", ""),
    })
    .map(
      ({ index, id, name }) => blockStart(index, { type: "tool_use", id, name, input: {} }).data,
    ),
  fc.nat(3).map((index) => blockStart(index, { type: "thinking", thinking: "" }).data),
  fc
    .record({ index: fc.nat(3), text: fc.string({ maxLength: 5 }) })
    .map(({ index, text }) => delta(index, { type: "text_delta", text }).data),
  fc
    .record({ index: fc.nat(3), json: jsonPiece })
    .map(({ index, json }) => delta(index, { type: "input_json_delta", partial_json: json }).data),
  fc.nat(3).map((index) => blockStop(index).data),
  stopReason.map((reason) => ({
    type: "message_delta",
    delta: { stop_reason: reason },
    usage: { output_tokens: 1 },
  })),
  fc.constant({ type: "message_stop" }),
  fc.constant({ type: "ping" }),
  fc.constant({ type: "brand_new_event" }),
  fc.constant({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
);

const isPlainObject = (value: unknown) =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const legalTurn = fc.record({
  text: fc.array(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 3 }),
  calls: fc.array(
    fc.record({
      id: fc.string({ minLength: 1, maxLength: 6 }),
      name: fc.constantFrom("read", "ls"),
      // Mostly objects; sometimes any JSON value, which the call gets as {} and why.
      input: fc.oneof(
        { weight: 4, arbitrary: inputObject },
        { weight: 1, arbitrary: jsonValue },
      ) as fc.Arbitrary<Record<string, unknown>>,
      pieces: fc.integer({ min: 1, max: 6 }),
    }),
    { maxLength: 3 },
  ),
});

/**
 * A whole turn succeeds with exactly its calls, a call whose input is not an object with `{}` and
 * why. A call keeps its id when that id is valid and the first of its kind; any other gets a
 * fresh one.
 */
function expectWhole(
  script: { calls: { id: string; name: string; input: unknown }[] },
  outcome: { events: ModelEvent[]; error?: Error },
): void {
  expect(outcome.error).toBeUndefined();
  const events = outcome.events.flatMap((event) => (event.type === "tool_call" ? [event] : []));
  expect(
    events.map(({ call: { name, input }, invalidInput }) => ({ name, input, invalidInput })),
  ).toEqual(
    script.calls.map(({ name, input }) =>
      isPlainObject(input)
        ? { name, input, invalidInput: undefined }
        : {
            name,
            input: {},
            invalidInput: expect.stringMatching(/^input must be an object, not /),
          },
    ),
  );
  const calls = events.map(({ call }) => call);
  const kept = (id: string, i: number) =>
    isValidCallId(id) && script.calls.findIndex((call) => call.id === id) === i;
  for (const [i, { id }] of script.calls.entries()) {
    if (kept(id, i)) expect(calls[i]?.id).toBe(id);
    else expect(calls[i]?.id).not.toBe(id);
  }
}

const randomAnthropicStreams = fc.asyncProperty(
  fc.array(anthropicEvent, { maxLength: 25 }),
  async (events) => {
    total++;
    checkOutcome(await drain(toModelEvents(from(events as RawMessageStreamEvent[]))));
  },
);

describe("fuzzing the stream state machines", () => {
  // Seeds are random on purpose; a failure prints its seed and path, to be replayed like below.
  it("Anthropic: random event sequences give legal events or one clear error", async () => {
    await fc.assert(randomAnthropicStreams, { numRuns: runs });
  });

  it("Anthropic: a tool_use block with an empty id and name gives a call the provider takes", async () => {
    await fc.assert(randomAnthropicStreams, { seed: 1142961049, path: "205:3:5:8:11" });
  });

  it("Anthropic: legal turns, cut, dropped or duplicated at random, stay correct", async () => {
    await fc.assert(
      fc.asyncProperty(
        legalTurn,
        fc.nat(40),
        fc.constantFrom("whole", "cut", "drop", "repeat"),
        async (script, at, how) => {
          total++;
          const frames = turn(script).map((frame) => frame.data);
          const i = at % frames.length;
          const mangled =
            how === "cut"
              ? frames.slice(0, i)
              : how === "drop"
                ? frames.filter((_, j) => j !== i)
                : how === "repeat"
                  ? [...frames.slice(0, i + 1), ...frames.slice(i)]
                  : frames;
          const outcome = await drain(
            toModelEvents(from(mangled as unknown as RawMessageStreamEvent[])),
          );
          checkOutcome(outcome);
          if (how === "whole") expectWhole(script, outcome);
        },
      ),
      { numRuns: runs },
    );
  });

  it("OpenAI: random chunk sequences give legal events or one clear error", async () => {
    const fragment = fc.record({
      index: fc.option(fc.nat(2), { nil: undefined }),
      id: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }),
      name: fc.option(fc.constantFrom("read", "ls", ""), { nil: undefined }),
      arguments: fc.option(
        fc.oneof(
          jsonPiece,
          inputObject.map((o) => o as unknown as string),
        ),
        { nil: undefined },
      ),
    });
    const chunk = fc.oneof(
      fc
        .record({
          content: fc.option(fc.string({ maxLength: 5 }), { nil: undefined }),
          calls: fc.array(fragment, { maxLength: 2 }),
          finish: fc.option(
            fc.constantFrom("stop", "tool_calls", "length", "content_filter", "odd"),
            { nil: null },
          ),
        })
        .map(({ content, calls, finish }) => ({
          object: "chat.completion.chunk",
          choices: [
            {
              index: 0,
              delta: {
                ...(content !== undefined && { content }),
                ...(calls.length > 0 && {
                  tool_calls: calls.map((c) => ({
                    ...(c.index !== undefined && { index: c.index }),
                    ...(c.id !== undefined && { id: c.id }),
                    function: {
                      ...(c.name !== undefined && { name: c.name }),
                      ...(c.arguments !== undefined && { arguments: c.arguments }),
                    },
                  })),
                }),
              },
              finish_reason: finish,
            },
          ],
        })),
      fc.constant({
        object: "chat.completion.chunk",
        choices: [],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      }),
      fc.constant({ object: "error", message: "overloaded" }),
      fc.constant({ error: { message: "boom" } }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(chunk, { maxLength: 12 }), async (chunks) => {
        total++;
        checkOutcome(
          await drain(toModelEventsFromOpenAI(from(chunks as unknown as ChatCompletionChunk[]))),
        );
      }),
      { numRuns: runs },
    );
  });

  it("OpenAI: legal completions, cut or dropped at random, stay correct", async () => {
    await fc.assert(
      fc.asyncProperty(
        legalTurn,
        fc.nat(40),
        fc.constantFrom("whole", "cut", "drop"),
        async (script, at, how) => {
          total++;
          const chunks = completion(script)
            .map((frame) => frame.data)
            .filter((data) => data !== "[DONE]");
          const i = at % chunks.length;
          const mangled =
            how === "cut"
              ? chunks.slice(0, i)
              : how === "drop"
                ? chunks.filter((_, j) => j !== i)
                : chunks;
          const outcome = await drain(
            toModelEventsFromOpenAI(from(mangled as ChatCompletionChunk[])),
          );
          checkOutcome(outcome);
          if (how === "whole") expectWhole(script, outcome);
        },
      ),
      { numRuns: runs },
    );
  });
});
