import { describe, expect, it } from "vitest";
import { isValidCallId } from "../src/history/call-ids.js";
import { admitCallEvents, callFromArguments } from "../src/history/calls.js";
import { normalizeHistory } from "../src/history/normalize.js";
import { receipts } from "../src/receipts.js";
import type { Message, ToolCall } from "../src/types.js";

const user = (content: string): Message => ({ role: "user", content });
const asks = (...toolCalls: ToolCall[]): Message => ({ role: "assistant", content: "", toolCalls });
const call = (id: string, name = "read", input: Record<string, unknown> = {}): ToolCall => ({
  id,
  name,
  input,
});
const result = (toolCallId: string, content = `result of ${toolCallId}`): Message => ({
  role: "tool",
  toolCallId,
  content,
  isError: false,
});
const unknown = (toolCallId: string): Message => ({
  role: "tool",
  toolCallId,
  content: receipts.outcomeUnknown,
  isError: true,
});
/** A predictable id maker: `fresh_1`, `fresh_2`, … */
const counter = () => {
  let made = 0;
  return () => `fresh_${++made}`;
};

/** What stands first when a history's first message was lost (a torn first record). */
const lostFirst = user(
  "[the first message of this session could not be recovered from the session file]",
);

const cases: { name: string; history: Message[]; expected: Message[]; repaired: number }[] = [
  {
    name: "a history that starts with the model's round gets a user placeholder first",
    history: [
      asks(call("c1")),
      result("c1"),
      { role: "assistant", content: "done", toolCalls: [] },
    ],
    expected: [
      lostFirst,
      asks(call("c1")),
      result("c1"),
      { role: "assistant", content: "done", toolCalls: [] },
    ],
    repaired: 0,
  },
  {
    name: "a history that starts with a result gets the placeholder before the next round",
    history: [result("gone"), asks(call("c1"))],
    expected: [lostFirst, asks(call("c1")), unknown("c1")],
    repaired: 1,
  },
  {
    name: "two calls with one id in one round each get exactly one result",
    history: [user("go"), asks(call("x"), call("x")), result("x", "first"), result("x", "second")],
    expected: [
      user("go"),
      asks(call("x"), call("fresh_1")),
      result("x", "first"),
      result("fresh_1", "second"),
    ],
    repaired: 0,
  },
  {
    name: "a repeated id left without its second result gets a receipt under its new id",
    history: [user("go"), asks(call("x"), call("x")), result("x", "first")],
    expected: [
      user("go"),
      asks(call("x"), call("fresh_1")),
      result("x", "first"),
      unknown("fresh_1"),
    ],
    repaired: 1,
  },
  {
    name: "an id used again in a later round gets a new id, and its result follows it",
    history: [user("go"), asks(call("x")), result("x", "one"), asks(call("x")), result("x", "two")],
    expected: [
      user("go"),
      asks(call("x")),
      result("x", "one"),
      asks(call("fresh_1")),
      result("fresh_1", "two"),
    ],
    repaired: 0,
  },
  {
    name: "ids with spaces, empty, too long or with a lone surrogate are replaced",
    history: [
      user("go"),
      asks(call("call 1"), call(""), call("a".repeat(41)), call("ab\uD800")),
      result("ab\uD800"),
      result("a".repeat(41)),
      result(""),
      result("call 1"),
    ],
    expected: [
      user("go"),
      asks(call("fresh_1"), call("fresh_2"), call("fresh_3"), call("fresh_4")),
      result("fresh_4", "result of ab\uFFFD"),
      result("fresh_3", `result of ${"a".repeat(41)}`),
      result("fresh_2", "result of "),
      result("fresh_1", "result of call 1"),
    ],
    repaired: 0,
  },
  {
    name: "tool names outside the rule are made safe",
    history: [user("go"), asks(call("c1", ""), call("c2", "my tool!")), result("c1"), result("c2")],
    expected: [
      user("go"),
      asks(call("c1", "unnamed_tool"), call("c2", "my_tool_")),
      result("c1"),
      result("c2"),
    ],
    repaired: 0,
  },
  {
    name: "lone surrogates in texts, results and deep inputs become U+FFFD",
    history: [
      user("a\uDC00b"),
      {
        role: "assistant",
        content: "c\uD83D",
        toolCalls: [
          call("c1", "write", { path: "p\uD800", list: [{ deep: "\uDFFFq" }], "k\uD800": 1 }),
        ],
      },
      result("c1", "out\uD83D"),
    ],
    expected: [
      user("a\uFFFDb"),
      {
        role: "assistant",
        content: "c\uFFFD",
        toolCalls: [
          call("c1", "write", { path: "p\uFFFD", list: [{ deep: "\uFFFDq" }], "k\uFFFD": 1 }),
        ],
      },
      result("c1", "out\uFFFD"),
    ],
    repaired: 0,
  },
  {
    name: "a thinking text with a lone surrogate becomes well formed and loses its signature; a whole one keeps it",
    history: [
      user("go"),
      {
        role: "assistant",
        content: "",
        toolCalls: [call("c1")],
        reasoning: [
          {
            type: "thinking",
            text: "lone \uD800 surrogate",
            signature: "c2ln",
            at: { text: 0, calls: 0 },
          },
          { type: "thinking", text: "whole", signature: "d2hvbGU=", at: { text: 0, calls: 1 } },
          { type: "redacted_thinking", data: "ZW5j", at: { text: 0, calls: 1 } },
        ],
      },
      result("c1"),
    ],
    expected: [
      user("go"),
      {
        role: "assistant",
        content: "",
        toolCalls: [call("c1")],
        reasoning: [
          { type: "thinking", text: "lone \uFFFD surrogate", at: { text: 0, calls: 0 } },
          { type: "thinking", text: "whole", signature: "d2hvbGU=", at: { text: 0, calls: 1 } },
          { type: "redacted_thinking", data: "ZW5j", at: { text: 0, calls: 1 } },
        ],
      },
      result("c1"),
    ],
    repaired: 0,
  },
];

describe("normalizeHistory", () => {
  it.each(cases)("$name", ({ history, expected, repaired }) => {
    const normalized = normalizeHistory(history, { newId: counter(), startWithUser: true });
    expect(normalized.messages).toEqual(expected);
    expect(normalized.repaired).toBe(repaired);
  });

  it("lets a history that continues a compacted one start mid-turn", () => {
    const history: Message[] = [asks(call("c1", "read", { path: "a" })), result("c1")];
    expect(normalizeHistory(history).messages).toEqual(history);
    expect(normalizeHistory(history, { startWithUser: true }).messages).toEqual([
      lostFirst,
      ...history,
    ]);
  });

  it("returns a valid history as the same objects", () => {
    const history: Message[] = [
      user("go 🚀"),
      asks(call("c1", "read", { path: "a", deep: ["x"] }), call("toolu_01-A", "bash")),
      result("c1"),
      { role: "tool", toolCallId: "toolu_01-A", content: "failed", isError: true },
      { role: "assistant", content: "done", toolCalls: [] },
    ];
    const normalized = normalizeHistory(history, {
      newId: () => {
        throw new Error("no id needed");
      },
    });
    expect(normalized.messages).toEqual(history);
    normalized.messages.forEach((message, index) => {
      expect(message).toBe(history[index]);
    });
    expect(normalized.trailingRepairs).toEqual([]);
  });

  it("leaves an empty history empty and uses the receipt text for the placeholder", () => {
    expect(normalizeHistory([]).messages).toEqual([]);
    expect(lostFirst).toEqual({ role: "user", content: receipts.firstMessageLost });
  });

  it("makes the same valid ids for the same history, and keeps them once written back", () => {
    const history = [user("go"), asks(call("x"), call("x"), call("bad id")), result("x")];
    const first = normalizeHistory(history);
    expect(normalizeHistory(history)).toEqual(first);
    const ids = first.messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls : []));
    expect(ids.map((c) => isValidCallId(c.id))).toEqual([true, true, true]);
    expect(new Set(ids.map((c) => c.id)).size).toBe(3);
    expect(first.trailingRepairs.map((m) => m.role === "tool" && m.toolCallId)).toEqual([
      ids[1]?.id,
      ids[2]?.id,
    ]);
    // The receipts are appended to the file as they are: loading again answers with them.
    const reloaded = normalizeHistory([...history, ...first.trailingRepairs]);
    expect(reloaded.messages).toEqual(first.messages);
    expect(reloaded.repaired).toBe(0);
    expect(normalizeHistory(first.messages).messages).toEqual(first.messages);
  });
});

describe("callFromArguments", () => {
  const read = (args: string, given?: unknown) => callFromArguments("c1", "read", args, given);

  it("reads a call's arguments as its input object; none at all is what the call was given, else {}", () => {
    expect(read('{"path":"a"}')).toEqual({
      type: "tool_call",
      call: { id: "c1", name: "read", input: { path: "a" } },
    });
    expect(read("  ")).toEqual({ type: "tool_call", call: { id: "c1", name: "read", input: {} } });
    expect(read("", { given: true })).toEqual({
      type: "tool_call",
      call: { id: "c1", name: "read", input: { given: true } },
    });
  });

  it("gives arguments that are not JSON, or JSON that is not an object, {} and why", () => {
    expect(read('{"path":')).toEqual({
      type: "tool_call",
      call: { id: "c1", name: "read", input: {} },
      invalidInput: "input is not valid JSON",
    });
    const whys = ["[1]", "null", '"text"', "7", "true"].map((args) => read(args).invalidInput);
    expect(whys).toEqual([
      "input must be an object, not an array",
      "input must be an object, not null",
      "input must be an object, not a string",
      "input must be an object, not a number",
      "input must be an object, not a boolean",
    ]);
    expect(read("", [1]).invalidInput).toBe("input must be an object, not an array");
  });

  it("admits the round's calls as the provider takes them, each still with why its input could not be used", () => {
    const admitted = admitCallEvents(
      [callFromArguments("bad id", "read", "null"), callFromArguments("c2", "ls", "{}")],
      { newId: () => "call_fresh" },
    );
    expect(admitted).toEqual([
      {
        type: "tool_call",
        call: { id: "call_fresh", name: "read", input: {} },
        invalidInput: "input must be an object, not null",
      },
      { type: "tool_call", call: { id: "c2", name: "ls", input: {} } },
    ]);
  });
});
