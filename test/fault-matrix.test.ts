import { writeSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { normalizeHistory } from "../src/history/normalize.js";
import { toAnthropicMessages } from "../src/providers/anthropic-protocol.js";
import { toOpenAIMessages } from "../src/providers/openai-protocol.js";
import { toResponsesInput } from "../src/providers/responses-protocol.js";
import { responsesReasoningData } from "../src/providers/responses-reasoning.js";
import { receipts } from "../src/receipts.js";
import { Session } from "../src/session/session.js";
import {
  redactedData,
  thinkingSignature,
  validate as validateAnthropic,
} from "../src/testing/anthropic-server.js";
import { call, done, FakeClient, type ScriptRound, text } from "../src/testing/fake-client.js";
import { validate as validateOpenAI } from "../src/testing/openai-server.js";
import {
  encryptedReasoning,
  validate as validateResponsesBody,
} from "../src/testing/responses-server.js";
import type { BeforeToolCall, Message, ModelEvent, Tool } from "../src/types.js";
import { useTempDirs } from "./support/temp.js";
import { scriptedTool } from "./support/tools.js";

/**
 * Every fault at every point of a three-round task with side effects, each round thinking first
 * (signed and redacted thinking, as the Messages API sends it, and encrypted reasoning, as the
 * Responses API does): after each, the session loads, every call has exactly one result, the next
 * request passes the three protocols' strict
 * validation, and no side effect ran twice, not even after resuming. The event sink (the session
 * append) failing at each record, with nothing or half a line written, is among the faults: what
 * was written loads, and the history the loop holds normalises to a valid one.
 */

const tempDir = useTempDirs();
/** A signed thinking block, streamed then kept, as the Anthropic adapter yields one. */
const thought = (thinking: string): ModelEvent[] => [
  { type: "thinking", text: thinking },
  {
    type: "reasoning",
    part: {
      type: "thinking",
      text: thinking,
      signature: thinkingSignature(thinking),
      at: { text: 0, calls: 0 },
    },
  },
];
const redacted: ModelEvent = {
  type: "reasoning",
  part: { type: "redacted_thinking", data: redactedData("hidden"), at: { text: 0, calls: 0 } },
};
/** An encrypted reasoning item of the Responses API, kept as its adapter keeps one. */
const encrypted = (id: string, at: { text: number; calls: number }): ModelEvent => ({
  type: "reasoning",
  part: {
    type: "redacted_thinking",
    data: responsesReasoningData("m", { id, encrypted_content: encryptedReasoning("m", id) }),
    at,
  },
});
/** The Responses API's checks of a request carrying `messages`. */
const validateResponses = (messages: Message[]) =>
  validateResponsesBody({ model: "m", store: false, input: toResponsesInput(messages, "m") });
/** A round's encrypted parts that its text or a call came after. */
const followedEncryptedParts = (message: Message) =>
  message.role !== "assistant"
    ? []
    : (message.reasoning ?? []).filter(
        (part) =>
          part.type === "redacted_thinking" &&
          part.data.includes("encrypted_content") &&
          (part.at.text < message.content.length || part.at.calls < message.toolCalls.length),
      );
const rounds: ModelEvent[][] = [
  [
    ...thought("Read a, then write."),
    encrypted("rs_1", { text: 0, calls: 0 }),
    text("Looking first."),
    call("c1", "read", { path: "a" }),
    call("c2", "write", { id: "w1" }),
    done,
  ],
  [
    redacted,
    ...thought("Write again, read two."),
    call("c3", "write", { id: "w2" }),
    encrypted("rs_2", { text: 0, calls: 1 }),
    call("c4", "read", { path: "b" }),
    call("c5", "read", { path: "c" }),
    done,
  ],
  [...thought("Finished."), text("All done."), done],
];
/** The thinking rules of the Messages API apply to every request checked below. */
const thinkingOn = {
  model: "m",
  max_tokens: 2048,
  thinking: { type: "enabled", budget_tokens: 1024 },
};
const events = rounds.flat().length;
const calls = rounds.flat().flatMap((event) => (event.type === "tool_call" ? [event.call.id] : []));
/** Records the loop commits in a run without faults: one per round and one per call. */
const records = rounds.length + calls.length;

type Fault =
  | { kind: "stream-throw" | "stream-abort-throw" | "stream-abort-end"; at: number }
  | {
      kind:
        | "tool-throw"
        | "tool-abort-return"
        | "tool-abort-throw"
        | "policy-throw"
        | "policy-abort";
      at: number;
    }
  | { kind: "sink-throw" | "sink-torn"; at: number };

const faults: Fault[] = [
  ...(["stream-throw", "stream-abort-throw", "stream-abort-end"] as const).flatMap((kind) =>
    Array.from({ length: events }, (_, at) => ({ kind, at })),
  ),
  ...(
    ["tool-throw", "tool-abort-return", "tool-abort-throw", "policy-throw", "policy-abort"] as const
  ).flatMap((kind) => calls.map((_, at) => ({ kind, at }))),
  ...(["sink-throw", "sink-torn"] as const).flatMap((kind) =>
    Array.from({ length: records }, (_, at) => ({ kind, at })),
  ),
];

let covered = 0;
afterAll(() => {
  console.log(`fault matrix: ${covered} fault points covered`);
});

describe("fault matrix", () => {
  it.each(faults.map((fault) => [`${fault.kind} at ${fault.at}`, fault] as const))(
    "%s",
    async (_name, fault) => {
      const controller = new AbortController();
      const effects: string[] = [];
      let eventIndex = 0;
      let callIndex = -1;
      let fired = false;
      const hits = (kind: Fault["kind"], index: number) => {
        const hit = fault.kind === kind && index === fault.at;
        fired ||= hit;
        return hit;
      };
      const script: ScriptRound[] = rounds.map(
        (round) =>
          async function* () {
            for (const event of round) {
              const at = eventIndex++;
              if (hits("stream-throw", at)) throw new Error("connection reset");
              if (hits("stream-abort-throw", at) || hits("stream-abort-end", at)) {
                controller.abort();
                if (fault.kind === "stream-abort-throw") throw new Error("Request was aborted.");
                return;
              }
              yield event;
            }
          },
      );
      const tool = (name: string, effect: boolean): Tool =>
        scriptedTool(name, async (input) => {
          if (hits("tool-throw", callIndex)) throw new Error("disk on fire");
          if (hits("tool-abort-return", callIndex) || hits("tool-abort-throw", callIndex)) {
            controller.abort();
            if (fault.kind === "tool-abort-throw") throw new Error("aborted");
            return { content: "stopped", isError: true };
          }
          if (effect) effects.push(String((input as { id: string }).id));
          return { content: `${name} ok` };
        });
      const policy: BeforeToolCall = () => {
        callIndex++;
        if (hits("policy-abort", callIndex)) controller.abort();
        if (hits("policy-throw", callIndex)) throw new Error("policy crashed");
        return { approved: true };
      };

      // Writes 0 and 1 are the header and the user's message; the run's records follow.
      let writes = 0;
      const disk = (fd: number, data: Uint8Array) => {
        const record = writes++ - 2;
        if (hits("sink-throw", record)) {
          throw Object.assign(new Error("ENOSPC: no space left on device, write"), {
            code: "ENOSPC",
          });
        }
        if (hits("sink-torn", record)) return writeSync(fd, data.subarray(0, data.length >> 1));
        return writeSync(fd, data);
      };
      const sinkFault = fault.kind === "sink-throw" || fault.kind === "sink-torn";

      const dir = await tempDir();
      const session = await Session.create({
        dir,
        workspace: "/ws",
        model: "m",
        env: {},
        write: disk,
      });
      const user: Message = { role: "user", content: "do the task" };
      await session.append(user);
      const tools = [tool("read", false), tool("write", true)];
      const committed: Message[] = [user];
      const written: Message[] = [user];
      await runAgent({
        client: new FakeClient(script),
        tools,
        system: "sys",
        messages: [user],
        beforeToolCall: policy,
        signal: controller.signal,
        onEvent: async (event) => {
          if (event.type !== "message") return;
          committed.push(event.message);
          await session.append(event.message);
          written.push(event.message);
        },
      }).catch(() => undefined);
      await session.close();
      expect(fired).toBe(true);

      const loaded = await Session.open(session.path, { env: {} });
      if (sinkFault) {
        const unknown = (m: Message) => m.role === "tool" && m.content === receipts.outcomeUnknown;
        expect(loaded.messages.filter((m) => !unknown(m))).toEqual(written);
        expect(loaded.skipped).toBe(fault.kind === "sink-torn" ? 1 : 0);
        const held: Message[] = [
          ...normalizeHistory(committed).messages,
          { role: "user", content: "go on" },
        ];
        expect(
          validateAnthropic({ ...thinkingOn, messages: toAnthropicMessages(held) }),
        ).toBeUndefined();
        expect(
          validateOpenAI({ model: "m", messages: toOpenAIMessages("sys", held) }),
        ).toBeUndefined();
        expect(validateResponses(held)).toBeUndefined();
      } else {
        expect(loaded.repaired).toBe(0);
        expect(loaded.messages).toEqual(written);
      }
      const history = loaded.messages;
      const declared = history.flatMap((m) =>
        m.role === "assistant" ? m.toolCalls.map((c) => c.id) : [],
      );
      const answered = history.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : []));
      expect(answered).toEqual(declared);

      const next: Message[] = [...history, { role: "user", content: "carry on" }];
      expect(
        validateAnthropic({ ...thinkingOn, messages: toAnthropicMessages(next) }),
      ).toBeUndefined();
      expect(
        validateOpenAI({ model: "m", messages: toOpenAIMessages("sys", next) }),
      ).toBeUndefined();
      expect(validateResponses(next)).toBeUndefined();
      // Every encrypted item kept goes back, but one that nothing followed in a cut round.
      const sentItems = toResponsesInput(next, "m").filter((item) => item.type === "reasoning");
      expect(sentItems.length).toBe(next.flatMap(followedEncryptedParts).length);
      expect(new Set(effects).size).toBe(effects.length);

      const ranBefore = [...effects];
      const resumed = await runAgent({
        client: new FakeClient([[text("resumed"), done]]),
        tools,
        system: "sys",
        messages: next,
        onEvent: (event) =>
          event.type === "message" ? loaded.session.append(event.message) : undefined,
      });
      await loaded.session.close();
      expect(resumed.status).toBe("completed");
      expect(effects).toEqual(ranBefore);
      covered++;
    },
  );
});
