/**
 * The contracts of mini-agent. One loop (`runAgent`) calls exactly three seams:
 * `ModelClient` (provider adapter), `Tool` (capability and side effects) and
 * `BeforeToolCall` (approval policy). Everything provider-specific stays behind `ModelClient`.
 */

/** A JSON Schema object describing a tool's input, as the model sees it. */
export type JsonSchema = Record<string, unknown>;

/** What the model is told about a tool. `inputSchema` is also what `execute` validates against. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** One call the model declared. `input` is always an object: adapters reject anything else. */
export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** What a tool reports. Failures are values (`isError: true`), never swallowed. */
export interface ToolResult {
  content: string;
  isError?: boolean;
}

/**
 * The provider-neutral history. Adapters translate it; nothing provider-specific leaks in.
 * - `user`: what the person typed.
 * - `assistant`: the text of one model round plus every call it declared, in order.
 * - `tool`: exactly one result for one declared call, keyed by `toolCallId`.
 * A valid history answers every call of an assistant message with one `tool` message before
 * the next `user` or `assistant` message; providers reject anything else, forever.
 */
export type Message =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls: ToolCall[] }
  | { role: "tool"; toolCallId: string; content: string; isError: boolean };

/**
 * What an adapter yields for one model round: text pieces and complete tool calls, in order,
 * then `done`. The loop does not require `done`; each adapter enforces its own protocol's
 * completion and throws when the stream ends early or stops for a reason it cannot honour.
 */
export type ModelEvent =
  | { type: "text"; text: string }
  | { type: "tool_call"; call: ToolCall }
  | { type: "done"; usage?: Usage };

/** Tokens one round cost, as the provider reported them (for `--output-format json`). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens read from the provider's cache, when it reports them. */
  cacheReadTokens?: number;
  /** Prompt tokens written to the provider's cache, when it reports them. */
  cacheWriteTokens?: number;
}

export interface ModelRequest {
  system: string;
  /** The history so far. The loop appends to it after the round: copy it to keep it. */
  messages: readonly Message[];
  tools: ToolSpec[];
  /** Aborting ends the round; the adapter passes it to its transport. */
  signal?: AbortSignal;
}

/** The provider seam, called once per round. It may throw; the loop propagates the error. */
export interface ModelClient {
  stream(request: ModelRequest): AsyncIterable<ModelEvent>;
}

/**
 * The capability seam. `spec.inputSchema` is the instruction sheet for the model; `execute`
 * still validates `input` itself (the model may not obey) and returns invalid input, path
 * escapes and failures as `isError` results. It honours `signal`. Throwing is for the
 * unexpected: the loop records a fixed receipt and rethrows.
 */
export interface Tool {
  readonly spec: ToolSpec;
  execute(input: unknown, signal?: AbortSignal): Promise<ToolResult>;
}

/** The answer of an approval policy for one call. `reason` is shown to the model on denial. */
export interface Approval {
  approved: boolean;
  reason?: string;
}

/**
 * The policy seam: a stateless predicate over one call, asked before the call runs. A policy
 * that throws fails closed: the call is recorded as failed approval and the error propagates.
 */
export type BeforeToolCall = (call: ToolCall) => Approval | Promise<Approval>;
