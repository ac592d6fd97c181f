import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { Message, Tool, ToolCall } from "../types.js";
import { defineTool } from "./define.js";
import { limits } from "./limits.js";

/** One step of the model's plan. */
export const PlanItemSchema = Type.Object({
  text: Type.String({ minLength: 1, maxLength: limits.planItemChars }),
  status: Type.Union([
    Type.Literal("pending"),
    Type.Literal("in_progress"),
    Type.Literal("completed"),
  ]),
});

export type PlanItem = Static<typeof PlanItemSchema>;

const PlanInput = Type.Object({
  items: Type.Array(PlanItemSchema, {
    maxItems: limits.planItems,
    description: "The whole plan; it replaces the last one",
  }),
});

/**
 * `plan`: the model's own checklist for a task of several steps. It changes nothing but the
 * plan, which is the input of the last `plan` call that returned without error (`planOf`): no
 * state of its own, so a resumed or rewound session has the plan of its history. Bounded:
 * `limits.planItems` items of at most `limits.planItemChars` characters.
 */
export function planTool(): Tool {
  return defineTool({
    name: "plan",
    description:
      "Your checklist for a task of several steps, shown to the user. Send the whole list whenever a step starts or ends; keep one step in_progress.",
    input: PlanInput,
    async run({ items }) {
      const done = items.filter((item) => item.status === "completed").length;
      return {
        content:
          items.length === 0 ? "plan cleared" : `plan updated: ${done} of ${items.length} done`,
      };
    },
  });
}

/** The plan a `plan` call's input holds (each item's text and status only), if it holds one. */
export function planItems(input: unknown): PlanItem[] | undefined {
  if (!Value.Check(PlanInput, input)) return undefined;
  return input.items.map(({ text, status }) => ({ text, status }));
}

/** The plan `result` sets: its call's input, when that call is `plan` and it returned no error. */
export function planSetBy(
  call: ToolCall | undefined,
  result: { isError: boolean },
): PlanItem[] | undefined {
  if (call?.name !== "plan" || result.isError) return undefined;
  return planItems(call.input);
}

/** The plan as of the end of `messages`: set by its last `plan` call that returned without error. */
export function planOf(messages: readonly Message[]): PlanItem[] | undefined {
  const calls = new Map<string, ToolCall>();
  let plan: PlanItem[] | undefined;
  for (const message of messages) {
    if (message.role === "assistant")
      for (const call of message.toolCalls) if (call.name === "plan") calls.set(call.id, call);
    if (message.role === "tool") plan = planSetBy(calls.get(message.toolCallId), message) ?? plan;
  }
  return plan;
}

const marks = { completed: "[x]", in_progress: "[>]", pending: "[ ]" } as const;

/**
 * `[x] Read the code`, `[>] Write the tool`, `[ ] Test it`: one line per item, as the terminal,
 * the export and the compaction's facts show a plan (each makes the text safe its own way).
 */
export function checklist(items: readonly PlanItem[]): string[] {
  return items.map((item) => `${marks[item.status]} ${item.text}`);
}
