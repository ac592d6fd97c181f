import type { Static, TObject, TSchema } from "@sinclair/typebox";
import { type ValueError, ValueErrorType } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import { receipts } from "../receipts.js";
import { systemErrorMeaning } from "../system-errors.js";
import type { Tool, ToolResult } from "../types.js";
import { limits } from "./limits.js";

export interface ToolDefinition<S extends TObject> {
  name: string;
  description: string;
  /** The one schema: sent to the model as JSON Schema and checked again inside `execute`. */
  input: S;
  run(input: Static<S>, signal?: AbortSignal): Promise<ToolResult>;
}

/**
 * Builds a `Tool` from one schema. Invalid input, `ToolError`s and file-system errors (`ENOENT`,
 * `EACCES`, …) come back as `isError` results the model can read; anything else is unexpected
 * and throws.
 */
export function defineTool<S extends TObject>(definition: ToolDefinition<S>): Tool {
  const { name, description, input: schema } = definition;
  const spec = { name, description, inputSchema: JSON.parse(JSON.stringify(schema)) };
  return {
    spec,
    async execute(input, signal) {
      // A model that sends no arguments at all means "no fields", not "not an object".
      const value = input ?? {};
      const problem = tooDeep(value) ?? describeProblem(schema, value);
      if (problem) return failure(receipts.invalidInput(name, problem));
      if (signal?.aborted) return failure(`${name} aborted before it started`);
      try {
        return await definition.run(value as Static<S>, signal);
      } catch (error) {
        if (signal?.aborted) return failure(`${name} aborted`);
        if (error instanceof ToolError) return failure(error.message);
        if (isSystemError(error)) return failure(`${name} failed: ${describeSystemError(error)}`);
        throw error;
      }
    },
  };
}

/** An expected failure whose message is written for the model, e.g. `path escapes workspace`. */
export class ToolError extends Error {
  override name = "ToolError";
}

/**
 * Lets the event loop run (a Ctrl-C, a timer) in the middle of long synchronous work, and
 * throws if `signal` has fired meanwhile. Loops over big inputs call it every few thousand steps.
 */
export function pause(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) =>
    setImmediate(() => (signal?.aborted ? reject(new Error("aborted")) : resolve())),
  );
}

export function failure(content: string): ToolResult {
  return { content, isError: true };
}

/**
 * Validation recurses into the input, so input nested deeper than any tool needs is refused
 * first, by a walk with its own stack: a 10,000-deep object is that call's error, not a stack
 * overflow that ends the run.
 */
function tooDeep(value: unknown): string | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null) continue;
    if (depth >= limits.inputDepth) return `nested more than ${limits.inputDepth} levels deep`;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return undefined;
}

/** One readable sentence for the first thing wrong with `value`, or undefined when it is valid. */
function describeProblem(schema: TSchema, value: unknown): string | undefined {
  const first = Value.Errors(schema, value).First();
  if (!first) return undefined;
  const field = first.path.replace(/^\//, "").replaceAll("/", ".");
  if (field === "") return "input must be an object";
  return `${field} ${describeError(first)}`;
}

function describeError(error: ValueError): string {
  const schema = error.schema as {
    type?: string;
    minimum?: number;
    maximum?: number;
    maxLength?: number;
    maxItems?: number;
    anyOf?: { const?: unknown }[];
  };
  switch (error.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return "is not a known field";
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return `must be at least ${schema.minimum}`;
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return `must be at most ${schema.maximum}`;
    case ValueErrorType.StringMinLength:
      return "must not be empty";
    case ValueErrorType.StringMaxLength:
      return `must be at most ${schema.maxLength} characters`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${schema.maxItems} items`;
    default: {
      const values = schema.anyOf?.map((choice) => choice.const);
      if (values?.every((value) => typeof value === "string"))
        return `must be one of ${values.map((value) => JSON.stringify(value)).join(", ")}`;
      return typeof schema.type === "string"
        ? `must be ${article(schema.type)} ${schema.type}`
        : error.message.replace(/^Expected/, "must be");
    }
  }
}

const article = (word: string) => (/^[aeiou]/.test(word) ? "an" : "a");

interface SystemError extends Error {
  code: string;
  syscall: string;
  path?: string;
}

function isSystemError(error: unknown): error is SystemError {
  return (
    error instanceof Error &&
    typeof (error as Partial<SystemError>).code === "string" &&
    typeof (error as Partial<SystemError>).syscall === "string"
  );
}

/** Node's messages carry absolute paths; the model works in workspace-relative ones. */
function describeSystemError(error: SystemError): string {
  const meaning = systemErrorMeaning(error.code);
  return meaning === error.code ? `${error.code} during ${error.syscall}` : meaning;
}
