import { type Static, type TProperties, Type } from "@sinclair/typebox";
import { ErrorKindSchema } from "../error-kind.js";
import { IMAGE_MEDIA_TYPES, UsageSchema as SessionUsage } from "../message-schema.js";
import { PlanItemSchema } from "../tools/plan.js";

/**
 * The `stream-json` protocol, version 1: the lines mini-agent writes on stdout with
 * `--output-format stream-json`, and the lines it reads on stdin with `--input-format
 * stream-json`. These TypeBox definitions are the only description of it: the CLI checks input
 * lines with them, and the build writes them out as the JSON Schema the package ships
 * (`mini-agent/stream-json.schema.json`).
 *
 * Every output line carries `version` (this number) and `type`. Within version 1, lines may
 * gain event types and optional fields; a change that removes or changes a field is a new
 * version.
 */
export const STREAM_JSON_VERSION = 1;

const line = <K extends string, T extends TProperties>(
  type: K,
  properties: T,
  description: string,
) =>
  Type.Object(
    { version: Type.Literal(STREAM_JSON_VERSION), type: Type.Literal(type), ...properties },
    { additionalProperties: false, description },
  );

/** A request's usage as the session records it, each count made whole (`wholeUsage`). */
const UsageSchema = Type.Object(SessionUsage.properties, { additionalProperties: false });

const CallProperties = {
  /** The call id: `approval_request`, `approval`, `tool_start` and `tool_result` refer to it. */
  id: Type.String(),
  name: Type.String(),
  input: Type.Record(Type.String(), Type.Unknown()),
};

export const OutputLineSchema = Type.Union(
  [
    line(
      "session",
      {
        id: Type.String(),
        model: Type.String(),
        workspace: Type.String(),
        sandbox: Type.String(),
      },
      "The session, once, before the first turn's events: its id (for --resume), the model, the workspace's real path and where bash runs (bwrap, off, unavailable, required-unavailable, or unused (bash denied)).",
    ),
    line("text", { text: Type.String() }, "A piece of the answer as it streams."),
    line("thinking", { text: Type.String() }, "A piece of the model's reasoning as it streams."),
    line("tool_call", CallProperties, "A call the model declared, once its round has ended."),
    line(
      "approval_request",
      {
        ...CallProperties,
        /** Why the rules could not decide. */
        reason: Type.String(),
        /** Seconds until the call is denied for want of an answer. */
        timeoutSeconds: Type.Number({ minimum: 0 }),
      },
      'A question: answer it with an input line {"type":"approval","id":…,"decision":"allow"|"deny"}.',
    ),
    line(
      "approval_request_unsandboxed",
      {
        ...CallProperties,
        /** What the call asks, with the model's reason for leaving the sandbox. */
        reason: Type.String(),
        /** The model's own words: why the command cannot run inside the sandbox. */
        modelReason: Type.String(),
        /** Seconds until the call is denied for want of an answer. */
        timeoutSeconds: Type.Number({ minimum: 0 }),
      },
      'A question about a command that asks to run OUTSIDE the sandbox, with the user\'s full rights and the network: answer it with an input line {"type":"approval_unsandboxed","id":…,"decision":"allow"|"deny"} (an "approval" line does not answer it). A client that does not know this event lets it time out, denied.',
    ),
    line(
      "approval",
      {
        id: Type.String(),
        name: Type.String(),
        approved: Type.Boolean(),
        /** The rule or the one who decided: `rule:deny git push`, `read-only set: ls`, `user`, `approval-timeout`, `default-policy`. */
        by: Type.String(),
      },
      "The decision on a call, before it runs or is refused; the same is written to the session.",
    ),
    line("tool_start", { id: Type.String() }, "An approved call is about to run."),
    line(
      "tool_result",
      { id: Type.String(), content: Type.String(), isError: Type.Boolean() },
      "The one result of a call, as the model will see it.",
    ),
    line(
      "usage",
      { usage: UsageSchema },
      "Tokens one model request cost, as the provider reported them; add them up for a total.",
    ),
    line(
      "retry",
      {
        attempt: Type.Integer({ minimum: 2 }),
        attempts: Type.Integer({ minimum: 2 }),
        delayMs: Type.Integer({ minimum: 0 }),
        reason: Type.String(),
        /** What failed, in one word: `rate_limited` (429) and `overloaded` (529) apart. */
        errorKind: Type.Optional(ErrorKindSchema),
        /** What the provider asked to wait (`retry-after`), when it said; `delayMs` honours it. */
        retryAfterMs: Type.Optional(Type.Integer({ minimum: 0 })),
      },
      "A lost round runs again: drop the text and thinking events since the last event of any other type.",
    ),
    line(
      "compaction",
      {
        trigger: Type.Union([
          Type.Literal("size"),
          Type.Literal("overflow"),
          Type.Literal("manual"),
        ]),
        count: Type.Integer({ minimum: 1 }),
        tokensBefore: Type.Integer({ minimum: 0 }),
        tokensAfter: Type.Integer({ minimum: 0 }),
      },
      "The conversation was compacted.",
    ),
    line(
      "file_change",
      {
        id: Type.String(),
        /** The file's real path, relative to the workspace. */
        path: Type.String(),
        /** The SHA-256 of its bytes before and after the call; null: there was no file. */
        before: Type.Union([Type.String(), Type.Null()]),
        after: Type.Union([Type.String(), Type.Null()]),
        /** Its permission bits after the call (420 is 0644); null: there is no file. */
        mode: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      },
      "A write or edit call left its file so (after equals before when it changed nothing); mini-agent rewind can put it back.",
    ),
    line(
      "bash_change",
      {
        id: Type.String(),
        /** The files the call changed, relative to the workspace, sorted: at most 1,000. */
        paths: Type.Array(Type.String()),
        /** How many more files it changed than `paths` names. */
        more: Type.Optional(Type.Integer({ minimum: 1 })),
        /** Why what it changed is not known (the snapshot over its bound). */
        skipped: Type.Optional(Type.String()),
        /**
         * Folders whose contents the snapshot did not keep (a git-ignored folder of over 5,000
         * entries, one it could not read) and the call could change: what it changed there is
         * not known, and a rewind does not restore it.
         */
        leftOut: Type.Optional(
          Type.Array(
            Type.Object(
              { path: Type.String(), why: Type.String() },
              { additionalProperties: false },
            ),
          ),
        ),
      },
      "What a bash call changed: the paths that differ between the workspace's snapshots before and after it; a rewind puts them back.",
    ),
    line(
      "plan",
      {
        items: Type.Array(Type.Object(PlanItemSchema.properties, { additionalProperties: false })),
      },
      "The model's plan, whole, each time a plan call sets it (after that call's tool_result): it replaces the last one.",
    ),
    line(
      "mcp_status",
      {
        server: Type.String(),
        state: Type.Union([
          Type.Literal("starting"),
          Type.Literal("ready"),
          Type.Literal("failed"),
          Type.Literal("exited"),
          Type.Literal("restarting"),
          Type.Literal("untrusted"),
        ]),
        /** `ready`: how many tools the server offers. */
        tools: Type.Optional(Type.Integer({ minimum: 0 })),
        /**
         * Why it failed, exited, is late (`starting`) or was skipped (`untrusted`); `ready`: the
         * tools of its list that are not offered (`left out: "dup" (listed twice)`).
         */
        reason: Type.Optional(Type.String()),
        /** `failed`, `exited`: its last lines of stderr. */
        stderr: Type.Optional(Type.Array(Type.String())),
      },
      "An MCP server's state changed: told at the start of a turn, when its tools join or leave the next request.",
    ),
    line(
      "error",
      { message: Type.String() },
      "An input line that could not be used; it is skipped and the session goes on.",
    ),
    line(
      "result",
      {
        status: Type.Union([
          Type.Literal("completed"),
          Type.Literal("aborted"),
          Type.Literal("max_turns"),
          Type.Literal("budget_exceeded"),
          Type.Literal("error"),
        ]),
        text: Type.String(),
        sessionId: Type.String(),
        /** Totals of the run so far, over every request. */
        usage: UsageSchema,
        /** The calls of this turn that were denied, in order. */
        denied: Type.Array(
          Type.Object(
            { id: Type.String(), name: Type.String(), by: Type.String() },
            { additionalProperties: false },
          ),
        ),
        error: Type.Optional(Type.String()),
        /** With `error` (status `error`): what failed, in one word. */
        errorKind: Type.Optional(ErrorKindSchema),
        /** With `errorKind` `rate_limited` or `overloaded`: what the provider asked to wait, when it said. */
        retryAfterMs: Type.Optional(Type.Integer({ minimum: 0 })),
      },
      "The end of a turn.",
    ),
  ],
  { description: "One line mini-agent writes with --output-format stream-json." },
);

/** An image of a user line: its bytes in base64 with their type, or a file to read. */
const InputImageSchema = Type.Union([
  Type.Object(
    {
      mediaType: Type.Union(IMAGE_MEDIA_TYPES.map((type) => Type.Literal(type))),
      data: Type.String(),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      /** Relative to the workspace, or absolute: read as `--image` reads its file. */
      path: Type.String({ minLength: 1 }),
    },
    { additionalProperties: false },
  ),
]);

export const InputLineSchema = Type.Union(
  [
    Type.Object(
      {
        version: Type.Optional(Type.Literal(STREAM_JSON_VERSION)),
        type: Type.Literal("user"),
        text: Type.String({ minLength: 1 }),
        /** Images sent after the text, in order: PNG, JPEG, GIF or WebP, known by their bytes. */
        images: Type.Optional(Type.Array(InputImageSchema)),
      },
      {
        additionalProperties: false,
        description: "A user message: the next turn (queued while a turn runs).",
      },
    ),
    Type.Object(
      {
        version: Type.Optional(Type.Literal(STREAM_JSON_VERSION)),
        type: Type.Literal("user"),
        text: Type.String(),
        images: Type.Array(InputImageSchema, { minItems: 1 }),
      },
      {
        additionalProperties: false,
        description: "A user message of images, whose text may be empty.",
      },
    ),
    Type.Object(
      {
        version: Type.Optional(Type.Literal(STREAM_JSON_VERSION)),
        type: Type.Literal("approval"),
        id: Type.String(),
        decision: Type.Union([Type.Literal("allow"), Type.Literal("deny")]),
      },
      {
        additionalProperties: false,
        description: "The answer to the approval_request with this id.",
      },
    ),
    Type.Object(
      {
        version: Type.Optional(Type.Literal(STREAM_JSON_VERSION)),
        type: Type.Literal("approval_unsandboxed"),
        id: Type.String(),
        decision: Type.Union([Type.Literal("allow"), Type.Literal("deny")]),
      },
      {
        additionalProperties: false,
        description:
          "The answer to the approval_request_unsandboxed with this id: allow runs the command outside the sandbox.",
      },
    ),
  ],
  { description: "One line mini-agent reads on stdin with --input-format stream-json." },
);

export type OutputLine = Static<typeof OutputLineSchema>;
export type InputLine = Static<typeof InputLineSchema>;
/** An output line as written by the CLI, before `version` is added. */
export type OutputEvent = OutputLine extends infer L
  ? L extends unknown
    ? Omit<L, "version">
    : never
  : never;

/** The JSON Schema file shipped in the package: output lines at the root, input lines in `$defs`. */
export function streamJsonSchema(): Record<string, unknown> {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: `mini-agent stream-json protocol, version ${STREAM_JSON_VERSION}`,
    ...JSON.parse(JSON.stringify(OutputLineSchema)),
    $defs: { input: JSON.parse(JSON.stringify(InputLineSchema)) },
  };
}
