import { headOf, wellFormed } from "../text.js";
import { failure } from "../tools/define.js";
import type { JsonSchema, Tool, ToolResult } from "../types.js";
import { modelToolNames } from "./names.js";

/**
 * The adapter: each tool a server lists becomes a `Tool` the loop calls like any other. It knows
 * nothing of transports or processes: calling goes through the `call` function the client gives.
 * Approval stays with `BeforeToolCall`: annotations are kept for display only, never as consent.
 */

/** A tool as a server lists it (the fields the adapter reads). */
export interface ListedTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: JsonSchema;
  annotations?: McpToolAnnotations | undefined;
}

/** The server's hints about a tool. Untrusted: shown to the user, never used to approve. */
export interface McpToolAnnotations {
  title?: string | undefined;
  readOnlyHint?: boolean | undefined;
  destructiveHint?: boolean | undefined;
  idempotentHint?: boolean | undefined;
  openWorldHint?: boolean | undefined;
}

/** A `Tool` made from an MCP server's tool, with where it came from (for display). */
export interface McpTool extends Tool {
  readonly mcp: {
    server: string;
    /** The tool's name on its server, which calls use. */
    tool: string;
    title?: string;
    annotations?: McpToolAnnotations;
  };
}

/** Calls `tool` (its name on the server); `label` is the name the model knows it by. */
export type CallServerTool = (
  call: { tool: string; label: string; args: Record<string, unknown> },
  signal?: AbortSignal,
) => Promise<ToolResult>;

/** Characters of a tool's description the model sees. */
export const MAX_DESCRIPTION = 2000;

/** The most of one tool's input schema, as JSON, that a request carries. */
export const MAX_SCHEMA_CHARS = 64 * 1024;
/** The most of a server's tools (names, descriptions, schemas) that a request carries. */
export const MAX_SERVER_TOOLS_CHARS = 512 * 1024;

/**
 * The tools of a server's list that can be offered to the model, in its order, and a phrase for
 * each left out: a second tool of a name (two equal names make every request refused), a tool
 * without a name, one whose input schema is over `MAX_SCHEMA_CHARS`, and those past the
 * server's share, `MAX_SERVER_TOOLS_CHARS` (one server's list could fill the context window).
 */
export function usableTools(listed: readonly ListedTool[]): {
  tools: ListedTool[];
  leftOut: string[];
} {
  const tools: ListedTool[] = [];
  const leftOut: string[] = [];
  const seen = new Set<string>();
  let size = 0;
  let past = 0;
  for (const tool of listed) {
    const shown = JSON.stringify(tool.name);
    if (tool.name === "") leftOut.push("a tool without a name");
    else if (seen.has(tool.name)) leftOut.push(`${shown} (listed twice)`);
    else {
      seen.add(tool.name);
      const schema = JSON.stringify(tool.inputSchema ?? {}).length;
      const own = tool.name.length + Math.min(descriptionOf(tool).length, MAX_DESCRIPTION) + schema;
      if (schema > MAX_SCHEMA_CHARS) leftOut.push(`${shown} (its input schema is over 64 KiB)`);
      else if (past > 0 || size + own > MAX_SERVER_TOOLS_CHARS) past++;
      else {
        size += own;
        tools.push(tool);
      }
    }
  }
  if (past > 0) leftOut.push(`${past} more tools (the server's tools are over 512 KiB)`);
  return { tools, leftOut };
}

const descriptionOf = (tool: ListedTool) => tool.description ?? tool.title ?? "";

/** A server's tools as `Tool`s, sorted by model-visible name, each calling through `call`. */
export function adaptTools(
  server: string,
  listed: readonly ListedTool[],
  call: CallServerTool,
): McpTool[] {
  const sorted = [...listed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const names = modelToolNames(
    server,
    sorted.map((tool) => tool.name),
  );
  const tools = sorted.map((tool, index) => adaptTool(server, tool, names[index] ?? "", call));
  return tools.sort((a, b) => (a.spec.name < b.spec.name ? -1 : 1));
}

function adaptTool(server: string, tool: ListedTool, name: string, call: CallServerTool): McpTool {
  const description = headOf(wellFormed(descriptionOf(tool)), MAX_DESCRIPTION);
  return {
    spec: { name, description, inputSchema: tool.inputSchema },
    mcp: {
      server,
      tool: tool.name,
      ...(tool.title !== undefined && { title: tool.title }),
      ...(tool.annotations !== undefined && { annotations: tool.annotations }),
    },
    async execute(input, signal) {
      const args = input ?? {};
      const problem = argumentProblem(tool.inputSchema, args);
      if (problem !== undefined) return failure(`invalid ${name} input: ${problem}`);
      if (signal?.aborted) return failure(`${name} aborted before it started`);
      return call({ tool: tool.name, label: name, args: args as Record<string, unknown> }, signal);
    },
  };
}

const JSON_TYPES: Record<string, (value: unknown) => boolean> = {
  string: (value) => typeof value === "string",
  number: (value) => typeof value === "number",
  integer: (value) => Number.isInteger(value),
  boolean: (value) => typeof value === "boolean",
  array: (value) => Array.isArray(value),
  object: (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  null: (value) => value === null,
};

/**
 * The check made before a call: the input is an object, every `required` field is there, and
 * each top-level field declared with a plain `type` has that type. The server validates the rest
 * against its own schema: a full JSON Schema validator would run the server's patterns (a slow
 * regular expression could stall the agent) and add a dependency, for errors the server reports
 * anyway.
 */
export function argumentProblem(schema: JsonSchema, input: unknown): string | undefined {
  if (!JSON_TYPES.object?.(input)) return "input must be an object";
  const args = input as Record<string, unknown>;
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const field of required) {
    if (typeof field === "string" && !Object.hasOwn(args, field)) return `${field} is required`;
  }
  const properties = JSON_TYPES.object?.(schema.properties)
    ? (schema.properties as Record<string, unknown>)
    : {};
  for (const [field, value] of Object.entries(args)) {
    const declared = Object.hasOwn(properties, field) ? properties[field] : undefined;
    const type = JSON_TYPES.object?.(declared) ? (declared as { type?: unknown }).type : undefined;
    const types = typeof type === "string" ? [type] : Array.isArray(type) ? type : [];
    const known = types.filter(
      (name): name is string => typeof name === "string" && name in JSON_TYPES,
    );
    if (known.length === 0 || known.length !== types.length) continue;
    if (!known.some((name) => JSON_TYPES[name]?.(value))) {
      return `${field} must be ${known.map((name) => `${/^[aeiou]/.test(name) ? "an" : "a"} ${name}`).join(" or ")}`;
    }
  }
  return undefined;
}
