import type { AgentEvent } from "../agent.js";
import type { Compaction } from "../compaction/record.js";
import type {
  ApprovalRecord,
  BashChange,
  FileBefore,
  FileChange,
  FileRestoreRecord,
  HookRecord,
  ImagesRefusal,
  ResponsesSwitch,
  RetryRecord,
  SkillsRecord,
  TurnEndRecord,
} from "../session/records.js";
import type { PlanItem } from "../tools/plan.js";
import type { Usage } from "../types.js";

/** Who allowed or denied one call: the session's approval record, without its type. */
export type Decision = Omit<ApprovalRecord, "type">;

/** A lost round about to run again: the session's retry record, without its type. */
export type RetryNotice = Omit<RetryRecord, "type">;

/** A file about to be changed by a call, and what the call left in it (`session/records.ts`). */
export type { BashChange, FileBefore, FileChange };

/** A file a rewind put back: the session's `file_restore` record, without its type. */
export type FileRestore = Omit<FileRestoreRecord, "type">;

/** How a turn ended, with how long it took: the session's turn-end record, without its type. */
export type TurnEnd = Omit<TurnEndRecord, "type">;

/** One run of a hook: the session's hook record, without its type. */
export type HookRun = Omit<HookRecord, "type">;

/** The skills a turn loaded and those its prompt carries: the session's skills record, without its type. */
export type SkillsNotice = Omit<SkillsRecord, "type">;

/**
 * One MCP server's state as the run reports it, each time it changes: `starting` (and late, with
 * a reason), `ready` with its tool count, `failed` to start (the reason and its last stderr
 * lines), `exited` after it was up (it restarts at its next call while restarts are left),
 * `restarting`, or `untrusted`: a project server skipped because no one trusted its entry.
 */
export interface McpStatus {
  server: string;
  state: "starting" | "ready" | "failed" | "exited" | "restarting" | "untrusted";
  /** `ready`: how many tools the server offers. */
  tools?: number;
  /** Why it failed, exited, is late or was skipped, in one line (redacted). */
  reason?: string;
  /** `failed` and `exited`: the last lines it wrote to stderr (redacted). */
  stderr?: string[];
}

/** What a front end needs to know of the session before its events. */
export interface SessionInfo {
  id: string;
  model: string;
  workspace: string;
  sandbox: string;
}

/**
 * Everything one turn reports, in order, as one stream: the loop's own events (`AgentEvent`),
 * then what the runner adds around the loop. Each front end (the terminal, `json`,
 * `stream-json`, an editor) renders this one stream, and the session file is written from it
 * (`journal.ts`): adding a kind is one variant here, one case in the journal, one in each renderer.
 */
export type TurnEvent =
  | AgentEvent
  /** The session the turn belongs to, once, right after the first turn's prompt is recorded. */
  | { type: "session"; session: SessionInfo }
  /** What one model request cost (a round, a retried round, a compaction's summary). */
  | { type: "usage"; usage: Usage }
  /** A policy decision, before the call runs or is refused. */
  | { type: "approval"; decision: Decision }
  /** A round lost to a passing provider failure, about to run again. */
  | { type: "retry"; notice: RetryNotice }
  /** The conversation was compacted; the model sees the compacted view from now on. */
  | { type: "compaction"; compaction: Compaction }
  /** An MCP server's state changed (told at the start of a turn, when its tools join or leave). */
  | { type: "mcp_status"; status: McpStatus }
  /** The skills loaded for the turn (when they changed) and those sent with its prompt. */
  | { type: "skills"; skills: SkillsNotice }
  /** A hook ran (or was refused a run): what it was, how it ended, what it decided. */
  | { type: "hook"; run: HookRun }
  /** The model refused images: it is sent their text placeholders from now on (recorded). */
  | { type: "images_refused"; refusal: ImagesRefusal }
  /** The model refused tools on Chat Completions: the run goes on on the Responses API (recorded). */
  | { type: "responses_switch"; change: ResponsesSwitch }
  /** The first request that holds older images back to keep within the provider's limits. */
  | { type: "images_held_back"; count: number }
  /** A `write` or `edit` is about to change a file; its old bytes are kept (or `unkept` says why not). */
  | { type: "file_before"; before: FileBefore }
  /** What that call left in the file. */
  | { type: "file_change"; change: FileChange }
  /** The files a `bash` call changed (in a git repository), or why they are not known. */
  | { type: "bash_change"; change: BashChange }
  /**
   * A `plan` call set the model's plan (the whole list), right after its result. Not a record of
   * its own: the plan is the input of that call (`planOf`).
   */
  | { type: "plan"; items: PlanItem[] }
  /** A rewind put a file back as it was just before prompt `to` (`/rewind` on a terminal). */
  | { type: "file_restore"; restore: FileRestore }
  /** A rewind to just before prompt `to` begins (`/rewind N`), before it touches a file. */
  | { type: "rewind_start"; to: number }
  /** The conversation goes back to just before prompt `to` of the current branch. */
  | { type: "rewind"; to: number }
  /** That rewind tried every file: a start without an end was cut off (told on `--continue`). */
  | { type: "rewind_end"; to: number }
  /** The turn is over: its status and how long it took. The last event of a turn. */
  | { type: "turn_end"; end: TurnEnd };

/**
 * How a turn ended: the loop's three outcomes, the token budget reached before a request, an
 * error (the history is still valid), or a compaction that could not shrink the conversation.
 */
export type TurnStatus =
  | "completed"
  | "aborted"
  | "max_turns"
  | "budget_exceeded"
  | "error"
  | "compaction_failed";

/**
 * Why a turn stopped, one value for each reason a front end tells apart (the editor protocol's
 * stop reasons, where it has one): `end_turn`, the model answered; `max_tokens`, it reached its
 * output limit; `refusal`, it refused or a content filter stopped it; `max_turns`;
 * `budget_exceeded`; `cancelled`, the turn was aborted; `error`, anything else (`error` says what).
 */
export type StopReason =
  | "end_turn"
  | "max_tokens"
  | "refusal"
  | "max_turns"
  | "budget_exceeded"
  | "cancelled"
  | "error";

/** What `runTurn` resolves to. `error` is the thrown value, for the caller to describe. */
export interface TurnResult {
  status: TurnStatus;
  /** Why it stopped, read from the status and, for an error, from what was thrown. */
  stop: StopReason;
  /** The model's final answer when `completed`; what it said last otherwise. */
  text: string;
  error?: unknown;
}
