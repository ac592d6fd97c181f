/**
 * The contracts of mini-agent. One loop (`runAgent`) calls exactly three seams:
 * `ModelClient` (provider adapter), `Tool` (capability and side effects) and
 * `BeforeToolCall` (approval policy). Everything provider-specific stays behind `ModelClient`.
 */

import type { Static } from "@sinclair/typebox";
import type {
  ImagePartSchema,
  MessageSchema,
  ReasoningSchema,
  ResultPartSchema,
  SeenSchema,
  ToolCallSchema,
  UsageSchema,
} from "./message-schema.js";

/** A JSON Schema object describing a tool's input, as the model sees it. */
export type JsonSchema = Record<string, unknown>;

/** What the model is told about a tool. `inputSchema` is also what `execute` validates against. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/**
 * One call the model declared. `input` is always an object: a call whose input was not one (or
 * not JSON) comes with `{}` and its `ModelEvent`'s `invalidInput`.
 */
export type ToolCall = Static<typeof ToolCallSchema>;

/**
 * What a tool reports. Failures are values (`isError: true`), never swallowed.
 * - `content` is always the whole result as text, what a text-only reader (a model without
 *   vision, the terminal, the export, compaction's facts) gets: where an image stands it holds a
 *   one-line placeholder, `[image: image/png, 2x2, 1.2 KB]` (`imagePlaceholder`). An image
 *   not sent to a model stands there as `[image not shown: …: why]` (`heldBackPlaceholder`).
 * - `parts`, when present, is the same result as text and image parts in order: what adapters
 *   send to a model that sees images. A result without images has none.
 * - `seen`, when present, is what the call saw of a file (`read`, `write`, `edit`): kept with the
 *   result in the session, never sent to a provider, so a resumed session knows what the agent
 *   has seen (`SeenFiles.recall`).
 */
export interface ToolResult {
  content: string;
  isError?: boolean;
  parts?: ResultPart[];
  seen?: Seen;
}

/** What a file tool saw of a file: its path in the workspace and the SHA-256 of its content. */
export type Seen = Static<typeof SeenSchema>;

/** A part of a tool result: text, or an image whole (media type and base64 bytes). */
export type ResultPart = Static<typeof ResultPartSchema>;
export type ImagePart = Static<typeof ImagePartSchema>;

/**
 * The provider-neutral history. Adapters translate it; nothing provider-specific leaks in.
 * - `user`: what the person typed.
 * - `assistant`: the text of one model round plus every call it declared, in order, and the
 *   model's `reasoning` when it thought aloud (see `Reasoning`).
 * - `tool`: exactly one result for one declared call, keyed by `toolCallId`.
 * A valid history answers every call of an assistant message with one `tool` message before
 * the next `user` or `assistant` message; providers reject anything else, forever.
 * The shape is written once, as the schemas in `message-schema.ts`, which the session file is
 * checked against too.
 */
export type Message = Static<typeof MessageSchema>;

/**
 * One part of the model's reasoning in a round, kept as the provider sent it:
 * - `thinking`: readable reasoning. `signature` is the provider's proof that it wrote it
 *   (Anthropic); it is kept byte for byte, because the provider refuses a tool loop whose
 *   thinking comes back changed or missing. Reasoning without one (OpenAI-compatible servers'
 *   `reasoning_content` or `reasoning`) has no signature.
 * - `redacted_thinking`: reasoning the provider encrypted; `data` is opaque and goes back as is.
 * `at` is where the part came in its round: after `at.text` UTF-16 units of the round's text and
 * `at.calls` of its calls, so the round can be sent back in the order it came.
 */
export type Reasoning = Static<typeof ReasoningSchema>;

/**
 * How much the model should think before it answers, mapped by each adapter to what its API
 * takes. Unset leaves the provider's own default.
 */
export type ThinkingLevel = "off" | "low" | "medium" | "high" | "xhigh" | "max";

/**
 * What an adapter yields for one model round: text and reasoning pieces, finished reasoning
 * parts and complete tool calls, in order, then `done`. The loop does not require `done`; each adapter enforces its own protocol's
 * completion and throws when the stream ends early or stops for a reason it cannot honour.
 */
export type ModelEvent =
  | { type: "text"; text: string }
  /** A piece of the model's reasoning as it streams, to show; the whole part follows. */
  | { type: "thinking"; text: string }
  /** A finished reasoning part, whole (signature included), to keep in the round's message. */
  | { type: "reasoning"; part: Reasoning }
  /**
   * A complete call. `invalidInput` says why the model's input for it could not be used (it is
   * not JSON, or not a JSON object: `input must be an object, not a string`); the call then
   * carries `input: {}`, which is what the round sends back to the provider, and the loop answers
   * it with `invalid NAME input: WHY` instead of running it, as a tool answers an input its schema
   * refuses. The round's other calls run.
   */
  | { type: "tool_call"; call: ToolCall; invalidInput?: string }
  | { type: "done"; usage?: Usage };

/**
 * Tokens one round cost, as the provider reported them: input, output (the model's reasoning
 * included, as every provider counts them) and, when the provider reports them, prompt tokens
 * read from and written to its cache. One definition (`message-schema.ts`) with the session's
 * usage record.
 */
export type Usage = Static<typeof UsageSchema>;

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
