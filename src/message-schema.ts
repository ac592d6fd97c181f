import { Type } from "@sinclair/typebox";

/**
 * The history's message shape, written once as TypeBox schemas: `types.ts` derives the
 * TypeScript types from them (with the prose), and the session file checks every message
 * record against the same schemas, so the two cannot drift.
 */

export const ToolCallSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  input: Type.Record(Type.String(), Type.Unknown()),
});

/** Where a reasoning part came in its round: after this much of the text and of the calls. */
export const ReasoningPlaceSchema = Type.Object({
  text: Type.Integer({ minimum: 0 }),
  calls: Type.Integer({ minimum: 0 }),
});

export const ReasoningSchema = Type.Union([
  Type.Object({
    type: Type.Literal("thinking"),
    text: Type.String(),
    signature: Type.Optional(Type.String()),
    at: ReasoningPlaceSchema,
  }),
  Type.Object({
    type: Type.Literal("redacted_thinking"),
    data: Type.String(),
    at: ReasoningPlaceSchema,
  }),
]);

export const UserMessageSchema = Type.Object({
  role: Type.Literal("user"),
  content: Type.String(),
});

export const AssistantMessageSchema = Type.Object({
  role: Type.Literal("assistant"),
  content: Type.String(),
  toolCalls: Type.Array(ToolCallSchema),
  reasoning: Type.Optional(Type.Array(ReasoningSchema)),
});

export const ToolMessageSchema = Type.Object({
  role: Type.Literal("tool"),
  toolCallId: Type.String(),
  content: Type.String(),
  isError: Type.Boolean(),
});

/**
 * Tokens one request cost, as the provider reported them: the `done` event's usage and the
 * session's usage record. Numbers, not integers: a provider's odd count never costs the record.
 */
export const UsageSchema = Type.Object({
  inputTokens: Type.Number({ minimum: 0 }),
  /** Output tokens, the model's reasoning included, as every provider counts them. */
  outputTokens: Type.Number({ minimum: 0 }),
  /** Prompt tokens read from the provider's cache, when it reports them. */
  cacheReadTokens: Type.Optional(Type.Number({ minimum: 0 })),
  /** Prompt tokens written to the provider's cache, when it reports them. */
  cacheWriteTokens: Type.Optional(Type.Number({ minimum: 0 })),
  /** Of `outputTokens`, those the model spent reasoning, when the provider reports them. */
  reasoningTokens: Type.Optional(Type.Number({ minimum: 0 })),
});

export const MessageSchema = Type.Union([
  UserMessageSchema,
  AssistantMessageSchema,
  ToolMessageSchema,
]);
