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

/** The image types every provider takes, as media types; the bytes decide, never a file name. */
export const IMAGE_MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

export const TextPartSchema = Type.Object({ type: Type.Literal("text"), text: Type.String() });

/**
 * An image, whole: its media type and its bytes in base64 (RFC 4648, padded). The pattern is a
 * character class, not groups of four, so a 5 MB string is checked without deep backtracking.
 */
export const ImagePartSchema = Type.Object({
  type: Type.Literal("image"),
  mediaType: Type.Union(IMAGE_MEDIA_TYPES.map((type) => Type.Literal(type))),
  data: Type.String({ minLength: 4, pattern: "^[A-Za-z0-9+/]+={0,2}$" }),
});

/** One part of a tool result that carries more than text: text and images, in order. */
export const ResultPartSchema = Type.Union([TextPartSchema, ImagePartSchema]);
export const ResultPartsSchema = Type.Array(ResultPartSchema);

export const UserMessageSchema = Type.Object({
  role: Type.Literal("user"),
  /** What the person typed; a placeholder line for each image attached (`--image`). */
  content: Type.String(),
  /** The text and the images attached, in order, when there are images: what adapters send. */
  parts: Type.Optional(ResultPartsSchema),
});

export const AssistantMessageSchema = Type.Object({
  role: Type.Literal("assistant"),
  content: Type.String(),
  toolCalls: Type.Array(ToolCallSchema),
  reasoning: Type.Optional(Type.Array(ReasoningSchema)),
});

/**
 * What a file tool saw of a file, kept with its result: the file's real path relative to the
 * workspace, and the SHA-256 (lowercase hex) of its whole content as the tool read or wrote it.
 * A resumed session rebuilds from it what `edit` and `write` may replace unread.
 */
export const SeenSchema = Type.Object({
  path: Type.String(),
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
});

export const ToolMessageSchema = Type.Object({
  role: Type.Literal("tool"),
  toolCallId: Type.String(),
  /** The whole result as text: what a text-only reader gets, a placeholder where an image is. */
  content: Type.String(),
  isError: Type.Boolean(),
  /** Text and image parts, in order, when the result holds an image: what adapters send. */
  parts: Type.Optional(ResultPartsSchema),
  /** What the tool saw of a file (`read`, `write`, `edit`): never sent to a provider. */
  seen: Type.Optional(SeenSchema),
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
