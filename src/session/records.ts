import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { CompactionSchema } from "../compaction/record.js";
import { ErrorKindSchema } from "../error-kind.js";
import {
  AssistantMessageSchema,
  IMAGE_MEDIA_TYPES,
  ImagePartSchema,
  TextPartSchema,
  ToolMessageSchema,
  UsageSchema,
  UserMessageSchema,
} from "../message-schema.js";

/**
 * The records of a session file, one schema each: the header (the first line), the messages of
 * the history, the approval decisions beside them, compactions, and what the export shows
 * besides the history (the usage of each request, each lost round run again). Reading checks
 * every line against them; a message is checked against the one definition of the history's
 * shape (`message-schema.ts`), from which `types.ts` takes its `Message`. Loading a history
 * passes over the records it does not need.
 */
export const SESSION_FORMAT_VERSION = 1;

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
/**
 * An image kept out of line: its bytes in the session's blob store, `<id>.blobs/<blob>`, named by
 * their SHA-256; its size in bytes and pixels give its placeholder line when the bytes are gone.
 * An image the store could not take (over its cap) has no `blob`: `unkept` says why, and it is
 * read back as its placeholder.
 */
export const StoredImagePartSchema = Type.Object({
  type: Type.Literal("image"),
  mediaType: Type.Union(IMAGE_MEDIA_TYPES.map((type) => Type.Literal(type))),
  blob: Type.Optional(Type.String({ pattern: "^[0-9a-f]{64}$" })),
  size: Type.Integer({ minimum: 0 }),
  width: Type.Optional(Type.Integer({ minimum: 1 })),
  height: Type.Optional(Type.Integer({ minimum: 1 })),
  unkept: Type.Optional(Type.String()),
});
/** Parts as a record holds them: text, images out of line, or inline (files of earlier versions). */
const StoredPartsSchema = Type.Array(
  Type.Union([TextPartSchema, StoredImagePartSchema, ImagePartSchema]),
);
/**
 * A message as its record holds it: the history's message (`message-schema.ts`), except that
 * the images of user and tool messages are kept out of line (`StoredImagePartSchema`).
 */
export const StoredMessageSchema = Type.Union([
  Type.Object({ ...UserMessageSchema.properties, parts: Type.Optional(StoredPartsSchema) }),
  AssistantMessageSchema,
  Type.Object({ ...ToolMessageSchema.properties, parts: Type.Optional(StoredPartsSchema) }),
]);
const MessageRecordSchema = Type.Object({
  type: Type.Literal("message"),
  message: StoredMessageSchema,
});
/** Who allowed or denied a call, written beside it: `by` names the rule or says "user". */
const ApprovalRecordSchema = Type.Object({
  type: Type.Literal("approval"),
  toolCallId: Type.String(),
  tool: Type.String(),
  approved: Type.Boolean(),
  by: Type.String(),
  /** The user's reason for a "no", as the model was told it. */
  reason: Type.Optional(Type.String()),
});
/** A compaction of the conversation; the messages it covers stay in the file, never rewritten. */
const CompactionRecordSchema = Type.Object({
  type: Type.Literal("compaction"),
  ...CompactionSchema.properties,
});
/**
 * What one model request cost, as the provider reported it at the end of its stream: written
 * before the assistant message of that round, or alone when nothing was committed (a summary
 * request of a compaction).
 */
const UsageRecordSchema = Type.Object({ type: Type.Literal("usage"), ...UsageSchema.properties });
/** A round lost to a passing provider failure, about to run again (the CLI's `RetryNotice`). */
const RetryRecordSchema = Type.Object({
  type: Type.Literal("retry"),
  /** The attempt about to run, from 2, of `attempts` in all. */
  attempt: Type.Integer({ minimum: 1 }),
  attempts: Type.Integer({ minimum: 1 }),
  delayMs: Type.Number({ minimum: 0 }),
  /** What failed, as the provider said it (redacted like every string). */
  reason: Type.String(),
  /** What failed, in one word (`rate_limited`, `overloaded`, …); absent in older sessions. */
  errorKind: Type.Optional(ErrorKindSchema),
  /** What the provider asked to wait, when it said (`retry-after`). */
  retryAfterMs: Type.Optional(Type.Number({ minimum: 0 })),
});
/** A turn is over: how it ended and how long it took (loading passes over it). */
const TurnEndRecordSchema = Type.Object({
  type: Type.Literal("turn_end"),
  status: Type.Union(
    ["completed", "aborted", "max_turns", "budget_exceeded", "error", "compaction_failed"].map(
      (status) => Type.Literal(status),
    ),
  ),
  durationMs: Type.Number({ minimum: 0 }),
});
/** A skill loaded for a turn: found, valid and (a project skill) trusted by the hash of its `SKILL.md`. */
const LoadedSkillSchema = Type.Object({
  name: Type.String(),
  scope: Type.Union([Type.Literal("user"), Type.Literal("project")]),
  /** The real path of its `SKILL.md`, as the catalog gives it. */
  location: Type.String(),
  /** sha256 of its `SKILL.md` when it was found (what the trust record holds for a project skill). */
  hash: Type.String(),
  /** In the catalog of the system prompt; false when the catalog's budget left it out. */
  listed: Type.Boolean(),
});
/**
 * The skills of a turn, written after its prompt (loading passes over it): `loaded` when the
 * set differs from the last one the run wrote, `sent` when the prompt carries skills' text.
 */
const SkillsRecordSchema = Type.Object({
  type: Type.Literal("skills"),
  /** Every skill loaded from this turn on, in name order. */
  loaded: Type.Optional(Type.Array(LoadedSkillSchema)),
  /** The skills whose text the prompt carries (`/skill NAME`, `--skill NAME`), in its order. */
  sent: Type.Optional(Type.Array(Type.String())),
});
/**
 * A model refused the images of a tool result (a 400 naming images): from then on the session
 * sends that provider and model the images' text placeholders, after a resume too. With `image`,
 * the provider could not process that one image (its key, the sha256 hex of its base64): only it
 * is sent as a placeholder from then on, to every provider.
 */
const ImagesRefusedRecordSchema = Type.Object({
  type: Type.Literal("images_refused"),
  provider: Type.String(),
  model: Type.String(),
  /** What the provider said (redacted like every string). */
  reason: Type.String(),
  image: Type.Optional(Type.String({ pattern: "^[0-9a-f]{64}$" })),
});
/**
 * The model refused function tools on Chat Completions, naming the Responses API: from then on the
 * run sends its requests to the Responses API of the same endpoint (`ResponsesSwitchClient`).
 */
const ResponsesSwitchRecordSchema = Type.Object({
  type: Type.Literal("responses_switch"),
  model: Type.String(),
  /** What the provider said (redacted like every string). */
  reason: Type.String(),
});
/** A file's sha256 (hex), or null: there was no file. */
const FileHashSchema = Type.Union([Type.String(), Type.Null()]);
/** A file's permission bits (`0o755` is 493), or null: there was no file. */
const FileModeSchema = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]);
/**
 * A `write` or `edit` call about to change a file, written before it runs: the file's hash and
 * mode then. The first call of a turn on a file kept its bytes in the session's blob store
 * (`<id>.blobs/<before>`), unless `unkept` says why not (that change cannot be undone). A
 * `file_before` that no `file_change` of its call follows was cut off by a crash.
 */
const FileBeforeRecordSchema = Type.Object({
  type: Type.Literal("file_before"),
  toolCallId: Type.String(),
  tool: Type.String(),
  /** The file's real path, relative to the workspace. */
  path: Type.String(),
  before: FileHashSchema,
  mode: FileModeSchema,
  unkept: Type.Optional(Type.String()),
});
/**
 * What the call left: the hash and mode after it (equal to before when it changed nothing), and
 * the folders on the file's path it created (relative to the workspace, outermost first), which
 * a rewind removes once they are empty.
 */
const FileChangeRecordSchema = Type.Object({
  type: Type.Literal("file_change"),
  toolCallId: Type.String(),
  path: Type.String(),
  before: FileHashSchema,
  after: FileHashSchema,
  mode: FileModeSchema,
  folders: Type.Optional(Type.Array(Type.String())),
});
/**
 * A file a rewind put back as it was just before prompt `to` (`after`: null when it removed a file
 * the agent created), and what it held then (`before`). A later rewind takes it as the file's
 * latest state, like a `file_change`.
 */
const FileRestoreRecordSchema = Type.Object({
  type: Type.Literal("file_restore"),
  to: Type.Integer({ minimum: 1 }),
  path: Type.String(),
  before: FileHashSchema,
  after: FileHashSchema,
  mode: FileModeSchema,
  /** What was put back when it is not a regular file (a folder, a link); absent for a file. */
  node: Type.Optional(Type.Union([Type.Literal("folder"), Type.Literal("link")])),
  /** The target of the link put back. */
  target: Type.Optional(Type.String()),
});
/**
 * What is at a path, as a bash call's snapshot saw it: a regular file (its bytes' SHA-256, kept
 * in the session's snapshot store), a folder, a symbolic link and its target, or anything else
 * (a device, a FIFO, a socket: compared by its stat information, never restored).
 */
const NodeStateSchema = Type.Union([
  Type.Object({
    hash: Type.String(),
    mode: Type.Integer({ minimum: 0 }),
    /** The file's owner and group (a rewind gives them back); absent in older sessions. */
    uid: Type.Optional(Type.Integer({ minimum: 0 })),
    gid: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  Type.Object({ folder: Type.Literal(true), mode: Type.Integer({ minimum: 0 }) }),
  Type.Object({ link: Type.String() }),
  Type.Object({ other: Type.Literal(true), mode: Type.Integer({ minimum: 0 }) }),
]);
/**
 * One path a bash call changed: what was there before and after it (null: nothing), and, when
 * the bytes before were not kept (over the size limit, the store's cap, a file that kept
 * changing while it was copied), why: a rewind cannot put that file back.
 */
const BashFileSchema = Type.Object({
  path: Type.String(),
  before: Type.Union([NodeStateSchema, Type.Null()]),
  after: Type.Union([NodeStateSchema, Type.Null()]),
  unkept: Type.Optional(Type.String()),
});
/**
 * What a `bash` call changed: the paths (relative to the workspace) that differ between the
 * workspace's snapshots before and after it, at most 1,000 named and the rest counted in `more`,
 * and in `files` each change with the states a rewind puts back. `skipped` says why it is not
 * known (the snapshot over its bound). Sessions made before the snapshot have `paths` only (from
 * git's list of files): a rewind lists those as not restored.
 */
const BashChangeRecordSchema = Type.Object({
  type: Type.Literal("bash_change"),
  toolCallId: Type.String(),
  paths: Type.Array(Type.String()),
  more: Type.Optional(Type.Integer({ minimum: 1 })),
  skipped: Type.Optional(Type.String()),
  /** Every change, for a rewind to undo (absent in sessions made before the snapshot). */
  files: Type.Optional(Type.Array(BashFileSchema)),
  /**
   * Folders whose contents the snapshot did not keep (left out by its rule, unreadable, holding
   * names that are not UTF-8) and that the call could change (it ran outside the sandbox, or made
   * them): what it changed there is not known, and a rewind names them.
   */
  leftOut: Type.Optional(Type.Array(Type.Object({ path: Type.String(), why: Type.String() }))),
  /** The walk was skipped and the workspace was read-only for the call (in the sandbox). */
  readOnly: Type.Optional(Type.Literal(true)),
  /**
   * Not the call itself but the `PostToolUse` hooks after it made these changes (their names,
   * `hook:PostToolUse COMMAND`, joined by `; `): the agent's changes all the same, which a rewind
   * puts back. Of any tool's call, not only bash's.
   */
  hook: Type.Optional(Type.String()),
});
/**
 * One run of a hook (docs/hooks.md): its event and command, the call it ran for, how it ended
 * (its `exit` code, the `signal` that ended it, or `timedOut`; none of them when it did not start,
 * was not run or was stopped), how long it took, and what it decided: `none`, `allow`, `ask`,
 * `block`, or `failed` (which blocks a call before it runs).
 */
const HookRecordSchema = Type.Object({
  type: Type.Literal("hook"),
  event: Type.String(),
  command: Type.String(),
  toolCallId: Type.Optional(Type.String()),
  exit: Type.Optional(Type.Integer()),
  signal: Type.Optional(Type.String()),
  timedOut: Type.Optional(Type.Literal(true)),
  durationMs: Type.Number({ minimum: 0 }),
  decision: Type.Union([
    Type.Literal("none"),
    Type.Literal("allow"),
    Type.Literal("ask"),
    Type.Literal("block"),
    Type.Literal("failed"),
  ]),
});
/**
 * The conversation goes back to just before the user's prompt `to` of the current branch: the
 * records after it stay in the file, off the branch, and loading ends the history there.
 */
const RewindRecordSchema = Type.Object({
  type: Type.Literal("rewind"),
  to: Type.Integer({ minimum: 1 }),
});
/**
 * A rewind of files begins (`mini-agent rewind`, `/rewind N`; written before it touches a file): `rewind_end`
 * closes it once every file was tried. One left open was cut off (a kill, Ctrl-C): the next
 * `--continue` says so and names the command that finishes it.
 */
const RewindStartRecordSchema = Type.Object({
  type: Type.Literal("rewind_start"),
  to: Type.Integer({ minimum: 1 }),
  files: Type.Boolean(),
  conversation: Type.Boolean(),
});
const RewindEndRecordSchema = Type.Object({
  type: Type.Literal("rewind_end"),
  to: Type.Integer({ minimum: 1 }),
});
export const RecordSchema = Type.Union([
  HeaderSchema,
  MessageRecordSchema,
  ApprovalRecordSchema,
  CompactionRecordSchema,
  UsageRecordSchema,
  RetryRecordSchema,
  TurnEndRecordSchema,
  SkillsRecordSchema,
  ImagesRefusedRecordSchema,
  ResponsesSwitchRecordSchema,
  FileBeforeRecordSchema,
  FileChangeRecordSchema,
  FileRestoreRecordSchema,
  BashChangeRecordSchema,
  HookRecordSchema,
  RewindRecordSchema,
  RewindStartRecordSchema,
  RewindEndRecordSchema,
]);

export type SessionHeader = Static<typeof HeaderSchema>;
export type StoredImagePart = Static<typeof StoredImagePartSchema>;
export type StoredMessage = Static<typeof StoredMessageSchema>;
export type ApprovalRecord = Static<typeof ApprovalRecordSchema>;
export type UsageRecord = Static<typeof UsageRecordSchema>;
/** Who refused images: a provider and a model. */
export type ImagesRefusal = Omit<Static<typeof ImagesRefusedRecordSchema>, "type">;
export type RetryRecord = Static<typeof RetryRecordSchema>;
/** A switch to the Responses API: the `responses_switch` record without its type. */
export type ResponsesSwitch = Omit<Static<typeof ResponsesSwitchRecordSchema>, "type">;
export type TurnEndRecord = Static<typeof TurnEndRecordSchema>;
export type SkillsRecord = Static<typeof SkillsRecordSchema>;
export type LoadedSkill = Static<typeof LoadedSkillSchema>;
export type FileBeforeRecord = Static<typeof FileBeforeRecordSchema>;
export type FileChangeRecord = Static<typeof FileChangeRecordSchema>;
/** A file about to be changed by a call: the `file_before` record without its type. */
export type FileBefore = Omit<FileBeforeRecord, "type">;
/** What a call left in a file it was to change: the `file_change` record without its type. */
export type FileChange = Omit<FileChangeRecord, "type">;
export type FileRestoreRecord = Static<typeof FileRestoreRecordSchema>;
export type BashChangeRecord = Static<typeof BashChangeRecordSchema>;
export type NodeState = Static<typeof NodeStateSchema>;
export type BashFile = Static<typeof BashFileSchema>;
export type HookRecord = Static<typeof HookRecordSchema>;
/** The files a bash call changed: the `bash_change` record without its type. */
export type BashChange = Omit<BashChangeRecord, "type">;
export type RewindRecord = Static<typeof RewindRecordSchema>;
export type RewindStartRecord = Static<typeof RewindStartRecordSchema>;
export type RewindEndRecord = Static<typeof RewindEndRecordSchema>;
export type SessionRecord = Static<typeof RecordSchema>;

/** How every record line begins; a header line begins with `{"type":"session"`. */
const RECORD_START = '{"type":"';
const HEADER_START = `${RECORD_START}session"`;

/** A line is one record, a torn piece, or (after a crash mid-write) a torn piece glued to records. */
export function parseLine(line: string): { records: SessionRecord[]; skipped: number } {
  const whole = parseRecord(line);
  if (whole) return { records: [whole], skipped: 0 };
  for (let at = line.indexOf(RECORD_START, 1); at !== -1; at = line.indexOf(RECORD_START, at + 1)) {
    const record = parseRecord(line.slice(at));
    if (!record) continue;
    const before = parseLine(line.slice(0, at));
    return { records: [...before.records, record], skipped: before.skipped };
  }
  return { records: [], skipped: 1 };
}

/**
 * Whether a first line that is not a whole header is one torn by a crash: it begins as a header
 * does (or is the beginning of one), up to where a glued record starts.
 */
export function isTornHeader(line: string): boolean {
  const glued = line.indexOf(RECORD_START, 1);
  const piece = glued === -1 ? line : line.slice(0, glued);
  return piece !== "" && (piece.startsWith(HEADER_START) || HEADER_START.startsWith(piece));
}

function parseRecord(text: string): SessionRecord | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return Value.Check(RecordSchema, value) ? value : undefined;
  } catch {
    return undefined;
  }
}
