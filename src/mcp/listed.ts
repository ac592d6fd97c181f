import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

/**
 * A server's `tools/list`, checked tool by tool before the SDK reads it. The SDK validates the
 * whole list at once: one tool without a name or input schema would fail the server and lose
 * every good tool with it, and its recursive check of a schema nested a thousand levels deep can
 * overflow the stack. So each entry is held to what the SDK requires of a tool (the shape below,
 * after its `ToolSchema`), and to a bounded nesting depth, and the ones that fall short are left
 * out, each with a phrase saying why, as the adapter's own left-out tools are (`usableTools`).
 */

/** The most levels of objects and arrays one field of a tool may nest. */
export const MAX_NESTING = 100;

const Optional = Type.Optional;
const ObjectSchema = Type.Object({
  type: Type.Literal("object"),
  properties: Optional(Type.Record(Type.String(), Type.Unknown())),
  required: Optional(Type.Array(Type.String())),
});
const ToolShape = Type.Object({
  name: Type.String({ minLength: 1 }),
  title: Optional(Type.String()),
  description: Optional(Type.String()),
  icons: Optional(
    Type.Array(
      Type.Object({
        src: Type.String(),
        mimeType: Optional(Type.String()),
        sizes: Optional(Type.Array(Type.String())),
        theme: Optional(Type.Union([Type.Literal("light"), Type.Literal("dark")])),
      }),
    ),
  ),
  inputSchema: ObjectSchema,
  outputSchema: Optional(ObjectSchema),
  annotations: Optional(
    Type.Object({
      title: Optional(Type.String()),
      readOnlyHint: Optional(Type.Boolean()),
      destructiveHint: Optional(Type.Boolean()),
      idempotentHint: Optional(Type.Boolean()),
      openWorldHint: Optional(Type.Boolean()),
    }),
  ),
  execution: Optional(
    Type.Object({
      taskSupport: Optional(
        Type.Union([Type.Literal("required"), Type.Literal("optional"), Type.Literal("forbidden")]),
      ),
    }),
  ),
  _meta: Optional(Type.Record(Type.String(), Type.Unknown())),
});

/** The entries of `listed` the SDK will take, in order, and a phrase for each left out. */
export function checkListedTools(listed: readonly unknown[]): {
  tools: unknown[];
  leftOut: string[];
} {
  const tools: unknown[] = [];
  const leftOut: string[] = [];
  for (const entry of listed) {
    const problem = toolProblem(entry);
    if (problem === undefined) tools.push(entry);
    else leftOut.push(problem);
  }
  return { tools, leftOut };
}

function toolProblem(entry: unknown): string | undefined {
  if (!isObject(entry)) return "an entry that is not a tool";
  if (typeof entry.name !== "string" || entry.name === "") return "a tool without a name";
  const shown = JSON.stringify(entry.name);
  // Depth first: the shape check below recurses too.
  for (const [field, value] of Object.entries(entry)) {
    if (deeperThan(value, MAX_NESTING)) {
      return `${shown} (its ${field} is nested over ${MAX_NESTING} levels deep)`;
    }
  }
  if (entry.inputSchema === undefined) return `${shown} (it has no input schema)`;
  if (!isObject(entry.inputSchema)) return `${shown} (its input schema is not an object)`;
  if (entry.inputSchema.type !== "object") {
    return `${shown} (its input schema's type is not "object")`;
  }
  const first = Value.Errors(ToolShape, entry).First();
  if (first === undefined) return undefined;
  return `${shown} (its ${first.path.slice(1).replaceAll("/", ".")} is not valid)`;
}

/** Whether `value` nests objects and arrays more than `limit` levels, found without recursion. */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (typeof next.value !== "object" || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > limit) return true;
    for (const child of Object.values(next.value)) stack.push({ value: child, depth });
  }
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
