import { afterAll, describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { toAnthropicMessages } from "../src/providers/anthropic-protocol.js";
import { toOpenAIMessages } from "../src/providers/openai-protocol.js";
import { Session } from "../src/session.js";
import type { BeforeToolCall, Message, ModelEvent, Tool } from "../src/types.js";
import { validate as validateAnthropic } from "./support/anthropic-server.js";
import { call, done, FakeClient, type ScriptRound, text } from "./support/fake-client.js";
import { validate as validateOpenAI } from "./support/openai-server.js";
import { useTempDirs } from "./support/temp.js";
import { scriptedTool } from "./support/tools.js";

/**
 * Every fault at every point of a three-round task with side effects: after each, the session
 * loads, every call has exactly one result, the next request passes both providers' strict
 * validation, and no side effect ran twice, not even after resuming.
 */

const tempDir = useTempDirs();
const rounds: ModelEvent[][] = [
  [
    text("Looking first."),
    call("c1", "read", { path: "a" }),
    call("c2", "write", { id: "w1" }),
    done,
  ],
  [
    call("c3", "write", { id: "w2" }),
    call("c4", "read", { path: "b" }),
    call("c5", "read", { path: "c" }),
    done,
  ],
  [text("All done."), done],
];
const events = rounds.flat().length;
const calls = rounds.flat().flatMap((event) => (event.type === "tool_call" ? [event.call.id] : []));

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
    };

const faults: Fault[] = [
  ...(["stream-throw", "stream-abort-throw", "stream-abort-end"] as const).flatMap((kind) =>
    Array.from({ length: events }, (_, at) => ({ kind, at })),
  ),
  ...(
    ["tool-throw", "tool-abort-return", "tool-abort-throw", "policy-throw", "policy-abort"] as const
  ).flatMap((kind) => calls.map((_, at) => ({ kind, at }))),
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

      const dir = await tempDir();
      const session = await Session.create({ dir, workspace: "/ws", model: "m", env: {} });
      const user: Message = { role: "user", content: "do the task" };
      await session.append(user);
      const tools = [tool("read", false), tool("write", true)];
      await runAgent({
        client: new FakeClient(script),
        tools,
        system: "sys",
        messages: [user],
        beforeToolCall: policy,
        signal: controller.signal,
        onEvent: (event) => (event.type === "message" ? session.append(event.message) : undefined),
      }).catch(() => undefined);
      await session.close();
      expect(fired).toBe(true);

      const loaded = await Session.open(session.path, { env: {} });
      expect(loaded.repaired).toBe(0);
      const history = loaded.messages;
      const declared = history.flatMap((m) =>
        m.role === "assistant" ? m.toolCalls.map((c) => c.id) : [],
      );
      const answered = history.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : []));
      expect(answered).toEqual(declared);

      const next: Message[] = [...history, { role: "user", content: "carry on" }];
      expect(
        validateAnthropic({ model: "m", max_tokens: 1, messages: toAnthropicMessages(next) }),
      ).toBeUndefined();
      expect(
        validateOpenAI({ model: "m", messages: toOpenAIMessages("sys", next) }),
      ).toBeUndefined();
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
