import { type Static, Type } from "@sinclair/typebox";
import { CompactionSchema } from "./compaction/record.js";

/**
 * The records of a session file, each one schema that loading checks every line against: the
 * header, a message, an approval decision, a compaction.
 */

const ToolCallSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  input: Type.Record(Type.String(), Type.Unknown()),
});
const MessageSchema = Type.Union([
  Type.Object({ role: Type.Literal("user"), content: Type.String() }),
  Type.Object({
    role: Type.Literal("assistant"),
    content: Type.String(),
    toolCalls: Type.Array(ToolCallSchema),
  }),
  Type.Object({
    role: Type.Literal("tool"),
    toolCallId: Type.String(),
    content: Type.String(),
    isError: Type.Boolean(),
  }),
]);
const HeaderSchema = Type.Object({
  type: Type.Literal("session"),
  version: Type.Integer({ minimum: 1 }),
  id: Type.String(),
  createdAt: Type.String(),
  workspace: Type.String(),
  model: Type.String(),
  /** Where bash ran when the session began: bwrap, off, unavailable, required-unavailable. */
  sandbox: Type.Optional(Type.String()),
});
const MessageRecordSchema = Type.Object({ type: Type.Literal("message"), message: MessageSchema });
/** Who allowed or denied a call, written beside it: `by` names the rule or says "user". */
const ApprovalRecordSchema = Type.Object({
  type: Type.Literal("approval"),
  toolCallId: Type.String(),
  tool: Type.String(),
  approved: Type.Boolean(),
  by: Type.String(),
});
/** A compaction of the conversation; the messages it covers stay in the file, never rewritten. */
const CompactionRecordSchema = Type.Object({
  type: Type.Literal("compaction"),
  ...CompactionSchema.properties,
});
export const RecordSchema = Type.Union([
  HeaderSchema,
  MessageRecordSchema,
  ApprovalRecordSchema,
  CompactionRecordSchema,
]);

export type SessionHeader = Static<typeof HeaderSchema>;
export type ApprovalRecord = Static<typeof ApprovalRecordSchema>;
export type SessionRecord = Static<typeof RecordSchema>;
