import { readFile, writeFile } from "node:fs/promises";
import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { admitCalls } from "../src/history/calls.js";
import { mapStrings } from "../src/map-strings.js";
import { toModelEvents } from "../src/providers/anthropic-protocol.js";
import { toModelEventsFromOpenAI } from "../src/providers/openai-protocol.js";
import { readSession } from "../src/session/session.js";
import {
  blockStart,
  blockStop,
  delta,
  type Frame,
  stream,
  turn,
} from "../src/testing/anthropic-server.js";
import { wellFormed } from "../src/text.js";
import { limits } from "../src/tools/limits.js";
import type { ModelEvent } from "../src/types.js";
import { runBin, sessionFiles, toolResults, useCliSetup } from "./support/cli.js";

/**
 * Tool input nested far deeper than any tool needs: no recursive walk overflows the stack on it,
 * and it never enters the history as it came.
 */

const DEEP = 10_000;

/** `[[[…]]]` nested `depth` times around `inner`, as a value. */
function nested(depth: number, inner: unknown = []): unknown {
  let value = inner;
  for (let level = 1; level < depth; level++) value = [value];
  return value;
}

/** What a call's input `{ path, x: <deep arrays> }` becomes: cut where it passes the limit. */
function cutInput(): Record<string, unknown> {
  // The input object is level 1, `x` level 2: the arrays at levels 2..65, the last one empty.
  return { path: "in.txt", x: nested(limits.inputDepth, []) };
}

const deepJson = `{"path":"in.txt","x":${"[".repeat(DEEP)}${"]".repeat(DEEP)}}`;

/** How deep a value is nested (the walk has its own stack). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

describe("mapStrings", () => {
  it("walks a value nested 100,000 levels deep", () => {
    let value: unknown = "A\ud83dB";
    for (let level = 0; level < 100_000; level++) value = level % 2 ? { k: value } : [value];
    const mapped = mapStrings(value, wellFormed);
    let inner: unknown = mapped;
    while (typeof inner === "object" && inner !== null) inner = Object.values(inner)[0];
    expect(inner).toBe("A\uFFFDB");
    expect(depthOf(mapped)).toBe(100_000);
    expect(mapStrings(mapped, wellFormed)).toBe(mapped);
  });

  it("changes values and, when asked, keys, and returns untouched parts as they were", () => {
    const untouched = { n: 1, list: [true, null] };
    const value = { "k\ud800": ["a\udc00", untouched], plain: "ok", untouched };
    const mapped = mapStrings(value, wellFormed, { keys: true });
    expect(mapped).toEqual({
      "k\uFFFD": ["a\uFFFD", untouched],
      plain: "ok",
      untouched,
    });
    expect(mapped.untouched).toBe(untouched);
    expect(mapStrings(value, wellFormed)).toEqual({
      "k\ud800": ["a\uFFFD", untouched],
      plain: "ok",
      untouched,
    });
    expect(mapStrings(untouched, wellFormed, { keys: true })).toBe(untouched);
  });
});

describe("admitCalls", () => {
  it("cuts an input nested deeper than the tools' limit, keeping the call", () => {
    const input = JSON.parse(deepJson) as Record<string, unknown>;
    const [call] = admitCalls([{ id: "toolu_1", name: "read", input }]);
    expect(call).toEqual({ id: "toolu_1", name: "read", input: cutInput() });
    expect(depthOf(call?.input)).toBe(limits.inputDepth + 1);
  });

  it("passes an input nested exactly to the limit as the same object", () => {
    const input = { x: nested(limits.inputDepth - 1) } as Record<string, unknown>;
    expect(depthOf(input)).toBe(limits.inputDepth);
    const [call] = admitCalls([{ id: "toolu_1", name: "read", input }]);
    expect(call?.input).toBe(input);
  });
});

describe("a 10,000-deep tool input through the adapters", () => {
  const expected: ModelEvent[] = [
    { type: "tool_call", call: { id: "toolu_1", name: "read", input: cutInput() } },
    { type: "done", usage: { inputTokens: 10, outputTokens: 5 } },
  ];

  it("comes out of the Anthropic adapter cut, as one call", async () => {
    async function* events() {
      yield* deepFrames().map((frame) => frame.data as unknown as RawMessageStreamEvent);
    }
    const out: ModelEvent[] = [];
    for await (const event of toModelEvents(events())) out.push(event);
    expect(out).toEqual([
      expected[0],
      { type: "done", usage: { inputTokens: 10, outputTokens: 5 } },
    ]);
  });

  it("comes out of the OpenAI adapter cut, as one call", async () => {
    const chunk = (choice: Record<string, unknown>, usage?: Record<string, unknown>) =>
      ({
        id: "c",
        object: "chat.completion.chunk",
        created: 0,
        model: "m",
        choices: [{ index: 0, ...choice }],
        ...(usage && { usage }),
      }) as unknown as ChatCompletionChunk;
    async function* chunks() {
      yield chunk({
        delta: {
          tool_calls: [
            {
              index: 0,
              id: "toolu_1",
              function: { name: "read", arguments: deepJson.slice(0, 9) },
            },
          ],
        },
      });
      yield chunk({
        delta: { tool_calls: [{ index: 0, function: { arguments: deepJson.slice(9) } }] },
      });
      yield chunk(
        { delta: {}, finish_reason: "tool_calls" },
        { prompt_tokens: 10, completion_tokens: 5 },
      );
    }
    const out: ModelEvent[] = [];
    for await (const event of toModelEventsFromOpenAI(chunks())) out.push(event);
    expect(out).toEqual(expected);
  });
});

/** One streamed tool round whose call carries the 10,000-deep input, in pieces. */
function deepFrames(): Frame[] {
  const [start, ping, ...rest] = turn({});
  const ending = rest.slice(-2).map((frame) =>
    frame.event === "message_delta"
      ? {
          ...frame,
          data: { ...frame.data, delta: { stop_reason: "tool_use", stop_sequence: null } },
        }
      : frame,
  );
  const pieces = [deepJson.slice(0, 5000), deepJson.slice(5000, 15000), deepJson.slice(15000)];
  return [
    start as Frame,
    ping as Frame,
    blockStart(0, { type: "tool_use", id: "toolu_1", name: "read", input: {} }),
    ...pieces.map((piece) => delta(0, { type: "input_json_delta", partial_json: piece })),
    blockStop(0),
    ...ending,
  ];
}

describe("a 10,000-deep tool input end to end", () => {
  const setup = useCliSetup();

  it("is refused as that call's error, the run goes on, and the session stays valid", async () => {
    const { server, workspace, home, options } = await setup([
      stream(deepFrames()),
      stream(turn({ text: ["fin"] })),
    ]);
    await writeFile(`${workspace}/in.txt`, "hi\n");
    const run = await runBin(["go"], options);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "fin\n" });
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: "invalid read input: nested more than 64 levels deep",
        isError: true,
      },
    ]);

    const [file] = await sessionFiles(home);
    const lines = (await readFile(file ?? "", "utf8")).trim().split("\n");
    expect(lines.map((line) => (JSON.parse(line) as { type: string }).type)).toEqual([
      "session",
      "message",
      "usage",
      "message",
      "approval",
      "message",
      "usage",
      "message",
      "turn_end",
    ]);
    const { messages, repaired, skipped } = await readSession(file ?? "");
    expect({ repaired, skipped }).toEqual({ repaired: 0, skipped: 0 });
    expect(messages).toEqual([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "toolu_1", name: "read", input: cutInput() }],
      },
      {
        role: "tool",
        toolCallId: "toolu_1",
        content: "invalid read input: nested more than 64 levels deep",
        isError: true,
      },
      { role: "assistant", content: "fin", toolCalls: [] },
    ]);
  });
});
