import { Value } from "@sinclair/typebox/value";
import {
  ReasoningSchema,
  ResultPartsSchema,
  SeenSchema,
  ToolCallSchema,
} from "./message-schema.js";
import { receipts } from "./receipts.js";
import type { Approval, ModelEvent, Reasoning, ToolCall, ToolResult } from "./types.js";

/**
 * What the loop asks of parts written by hand (a client, a tool, a policy in plain JavaScript):
 * each answer is checked before it can reach the history, which must stay one a provider takes.
 */

/** A call of the round, with why its input could not be used when it could not. */
export type RoundCall = Extract<ModelEvent, { type: "tool_call" }>;

/**
 * A policy written in plain JavaScript can return anything; no answer is not a yes, and a
 * reason that is not text would become a history entry no provider takes.
 */
export function checkApproval(approval: unknown): Approval {
  const { approved, reason } = (approval ?? {}) as Partial<Approval>;
  if (typeof approved !== "boolean" || !(reason === undefined || typeof reason === "string")) {
    throw new Error("beforeToolCall returned no { approved: boolean }");
  }
  return approval as Approval;
}

/** A tool written in plain JavaScript can return anything; a history entry must be a string. */
export function checkResult(call: ToolCall, result: unknown): ToolResult {
  const { content, isError, parts, seen } = (result ?? {}) as Partial<ToolResult>;
  if (typeof content !== "string") throw new Error(`tool ${call.name} returned no string content`);
  if (!(isError === undefined || typeof isError === "boolean"))
    throw new Error(`tool ${call.name} returned an isError that is not a boolean`);
  if (parts !== undefined && !Value.Check(ResultPartsSchema, parts))
    throw new Error(`tool ${call.name} returned parts that are not text and image parts`);
  if (seen !== undefined && !Value.Check(SeenSchema, seen))
    throw new Error(`tool ${call.name} returned a seen that is not a path and a sha256`);
  return result as ToolResult;
}

/**
 * A client written by hand can yield anything. A call without a non-empty string id and name,
 * or with an id the round already has, cannot be answered once by id: it ends the round before
 * anything of it is committed, as a stream that throws does. A call whose input could not be used
 * (the adapter's `invalidInput`, or an input that is not an object; none at all means `{}`) keeps
 * `{}`, which every provider takes back, and is answered with a receipt saying why.
 */
export function checkedCall(event: RoundCall, earlier: readonly RoundCall[]): RoundCall {
  const invalid = (why: string) => new Error(`model client returned an invalid tool call: ${why}`);
  const { call, invalidInput } = event;
  const { id, name, input } = (call ?? {}) as Partial<Record<keyof ToolCall, unknown>>;
  if (typeof id !== "string" || id === "" || typeof name !== "string" || name === "")
    throw invalid("it needs a non-empty string id and name");
  if (earlier.some((other) => other.call.id === id)) throw invalid(`the id ${id} twice`);
  if (!(invalidInput === undefined || typeof invalidInput === "string"))
    throw invalid("its invalidInput is not text");
  if (invalidInput === undefined && Value.Check(ToolCallSchema, call))
    return { type: "tool_call", call };
  const why = invalidInput ?? (input === undefined ? undefined : receipts.notAnObject(input));
  const kept = { type: "tool_call", call: { id, name, input: {} } } as const;
  return why === undefined ? kept : { ...kept, invalidInput: why };
}

export function checkedReasoning(part: Reasoning): Reasoning {
  if (!Value.Check(ReasoningSchema, part))
    throw new Error("model client returned an invalid reasoning part");
  return part;
}
