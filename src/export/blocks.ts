import type { Compaction } from "../compaction/record.js";
import type { BlobStore } from "../session/blobs.js";
import {
  inlinePlaceholder,
  missingImageWords,
  storedPlaceholder,
  unkeptImageWords,
} from "../session/images.js";
import type {
  ApprovalRecord,
  LoadedSkill,
  RetryRecord,
  SessionRecord,
  SkillsRecord,
  StoredMessage,
  UsageRecord,
} from "../session/records.js";
import { readTarget } from "../skills/used.js";
import { type PlanItem, planSetBy } from "../tools/plan.js";
import type { ToolCall, Usage } from "../types.js";

/**
 * What an export shows, in the order it happened: one block per thing a reader looks at. Each
 * renderer (`html.ts`, `markdown.ts`) has one function per kind, checked by the type `Renderer`:
 * a new kind of thing to show (a new part of an assistant message) is one more kind here and one
 * more function in each renderer.
 */
export type Block =
  /**
   * A prompt of the user, `number` as `mini-agent rewind --to N` counts it: along the branch the
   * conversation was on when it was sent (a rewind to prompt N makes the next prompt N again).
   */
  | { kind: "prompt"; number: number; text: string; images?: ShownImage[] }
  /**
   * The readable reasoning of one model round, before its answer, and how many of its parts the
   * provider sent encrypted (shown as a count: their data means nothing to a reader).
   */
  | { kind: "thinking"; text: string; redacted: number }
  /** The text of one model round, with the usage of its request when it was recorded. */
  | { kind: "answer"; text: string; usage?: Usage }
  | CallBlock
  /** A result that answers no call declared before it. */
  | { kind: "stray-result"; toolCallId: string; content: string; isError: boolean }
  /** The usage of a request that committed nothing (a compaction's summary request). */
  | { kind: "usage"; usage: Usage }
  | { kind: "retry"; retry: Omit<RetryRecord, "type"> }
  | { kind: "compaction"; compaction: Compaction }
  | { kind: "turn-end"; status: string; durationMs: number }
  /** The skills loaded from this turn on (when they changed), and those sent with its prompt. */
  | { kind: "skills"; loaded?: LoadedSkill[]; sent: string[] }
  /** A file a rewind put back as it was just before prompt `to` (`removed`: the agent created it). */
  | { kind: "file-restore"; path: string; to: number; removed: boolean }
  /** The conversation went back to just before prompt `to`: what follows is a new branch. */
  | { kind: "rewind"; to: number }
  /** A line of the file that is not a record (a torn write), left out. */
  | { kind: "unreadable" };

/** One tool call with everything recorded about it: who decided, and what it returned. */
export interface CallBlock {
  kind: "call";
  /** Its place among the session's calls, from 1. */
  number: number;
  call: ToolCall;
  approval?: Pick<ApprovalRecord, "approved" | "by">;
  /** Absent when the file holds no result for it (the session ended first). */
  result?: { content: string; isError: boolean; images?: ShownImage[] };
  /** The skill whose `SKILL.md` this call read (a `read` that returned without error). */
  skill?: string;
  /** What a `bash` call changed (its `bash_change` record). */
  changed?: BashChanged;
  /** The plan a `plan` call set (one that returned without error). */
  plan?: PlanItem[];
}

/** The files a bash call changed, at most 1,000 named and the rest counted; or why not known. */
export interface BashChanged {
  paths: string[];
  more: number;
  skipped?: string;
  /** Its record holds the states a rewind puts back (a session made before that lists only). */
  restorable: boolean;
}

/**
 * An image of a prompt or a result: its bytes in base64 (from the blob store, or inline in a file
 * of an earlier version), or, when they cannot be shown, why not (`missing`); its placeholder.
 */
export interface ShownImage {
  mediaType: string;
  placeholder: string;
  data?: string;
  missing?: string;
}

/** How one skill was used in a session: its text sent with a prompt, its `SKILL.md` read. */
export interface SkillUse {
  name: string;
  sent: boolean;
  read: boolean;
}

/** The counts an export ends with. */
export interface Totals {
  prompts: number;
  answers: number;
  calls: number;
  denied: number;
  /** Calls that ran, or were refused, and returned an error (denied ones not counted). */
  failed: number;
  /** Calls without a recorded result. */
  unanswered: number;
  requests: number;
  usage: Required<Usage>;
  retries: number;
  compactions: number;
  unreadable: number;
  /** Only once a skills record was read: the skills loaded at any point, and those used. */
  skills?: { loaded: number; used: SkillUse[] };
}

/**
 * Turns the records after the header into blocks, holding only what is still open: the calls of
 * the current round until their results come, and the usage of a request until its answer. A
 * call is shown once its result is read, with the decision recorded for it; calls still open when
 * anything but a decision or a result comes next (a request, a retry, a compaction, a prompt) or
 * the file ends are shown without a result.
 */
export class BlockBuilder {
  readonly totals: Totals = {
    prompts: 0,
    answers: 0,
    calls: 0,
    denied: 0,
    failed: 0,
    unanswered: 0,
    requests: 0,
    usage: {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    },
    retries: 0,
    compactions: 0,
    unreadable: 0,
  };
  private open = new Map<string, Omit<CallBlock, "kind">>();
  private usage: Usage | undefined;
  /** The loaded skills by the location of their `SKILL.md`, as the last skills record said. */
  private skillAt = new Map<string, string>();
  private readonly loadedNames = new Set<string>();
  private readonly used = new Map<string, SkillUse>();
  /**
   * The prompts on the current branch, counted as `Branch` (src/session/branch.ts) counts them
   * for a rewind, without holding the branch: a rewind to prompt N that the branch has leaves
   * N - 1 before the next one.
   */
  private branchPrompts = 0;

  /**
   * `workspace`: the session's, in which a relative path of a `read` is resolved; `blobs`: the
   * session's blob store, which holds the bytes of its images.
   */
  constructor(
    private readonly workspace: string,
    private readonly blobs?: BlobStore,
  ) {}

  /** The blocks one record completes. */
  add(record: SessionRecord): Block[] {
    switch (record.type) {
      case "session":
      // The turn's error says it; the export shows the images' placeholders as every reader does.
      case "images_refused":
      // The client's notice said it when it happened; the answers are what the export shows.
      case "responses_switch":
        return [];
      case "message":
        return this.message(record.message);
      case "approval": {
        const call = this.open.get(record.toolCallId);
        if (call) call.approval = { approved: record.approved, by: record.by };
        return [];
      }
      case "usage":
        return this.request(record);
      case "retry": {
        this.totals.retries++;
        const { type: _, ...retry } = record;
        return [...this.unanswered(), ...this.leftUsage(), { kind: "retry", retry }];
      }
      case "compaction": {
        this.totals.compactions++;
        const { type: _, ...compaction } = record;
        return [...this.unanswered(), ...this.leftUsage(), { kind: "compaction", compaction }];
      }
      case "turn_end":
        return [
          ...this.unanswered(),
          ...this.leftUsage(),
          { kind: "turn-end", status: record.status, durationMs: record.durationMs },
        ];
      case "skills":
        return [...this.unanswered(), ...this.leftUsage(), this.skills(record)];
      case "file_before":
      case "file_change":
      case "rewind_start":
      case "rewind_end":
        // What each call did to a file is its result; the change records are for a rewind.
        return [];
      case "hook":
        // What a hook decided is in the call's approval and result.
        return [];
      case "bash_change": {
        // What a bash call changed is not in its result: shown with the call.
        const call = this.open.get(record.toolCallId);
        const { paths, more = 0, skipped } = record;
        const restorable = record.files !== undefined;
        if (call)
          call.changed = { paths, more, restorable, ...(skipped !== undefined && { skipped }) };
        return [];
      }
      case "file_restore": {
        const { path, to } = record;
        return [{ kind: "file-restore", path, to, removed: record.after === null }];
      }
      case "rewind":
        if (record.to >= 1 && record.to <= this.branchPrompts) this.branchPrompts = record.to - 1;
        return [...this.unanswered(), ...this.leftUsage(), { kind: "rewind", to: record.to }];
    }
  }

  /** A line that holds no record. */
  unreadable(): Block[] {
    this.totals.unreadable++;
    return [{ kind: "unreadable" }];
  }

  /** The blocks still open when the file ends. */
  end(): Block[] {
    return [...this.leftUsage(), ...this.unanswered()];
  }

  private message(message: StoredMessage): Block[] {
    switch (message.role) {
      case "user": {
        this.totals.prompts++;
        const number = ++this.branchPrompts;
        const images = this.images(message.parts);
        return [
          ...this.leftUsage(),
          ...this.unanswered(),
          { kind: "prompt", number, text: message.content, ...(images && { images }) },
        ];
      }
      case "assistant": {
        const before = this.unanswered();
        this.totals.answers++;
        const usage = this.usage;
        this.usage = undefined;
        for (const call of message.toolCalls)
          this.open.set(call.id, { number: ++this.totals.calls, call });
        return [
          ...before,
          ...thinkingOf(message),
          { kind: "answer", text: message.content, ...(usage && { usage }) },
        ];
      }
      case "tool": {
        const call = this.open.get(message.toolCallId);
        const { toolCallId, content, isError } = message;
        if (!call)
          return [...this.leftUsage(), { kind: "stray-result", toolCallId, content, isError }];
        this.open.delete(toolCallId);
        if (call.approval?.approved === false) this.totals.denied++;
        else if (isError) this.totals.failed++;
        const skill = isError ? undefined : this.skillRead(call.call);
        const plan = planSetBy(call.call, message);
        const images = this.images(message.parts);
        const result = { content, isError, ...(images && { images }) };
        const extra = { ...(skill && { skill }), ...(plan && { plan }) };
        return [...this.leftUsage(), { kind: "call", ...call, result, ...extra }];
      }
    }
  }

  /** The images among a message's parts, each read from the blob store (or inline). */
  private images(
    parts: (StoredMessage & { role: "user" | "tool" })["parts"],
  ): ShownImage[] | undefined {
    const images = parts?.flatMap((part): ShownImage[] => {
      if (part.type === "text") return [];
      if ("data" in part) {
        const placeholder = inlinePlaceholder(part);
        return [{ mediaType: part.mediaType, placeholder, data: part.data }];
      }
      const placeholder = storedPlaceholder(part);
      if (part.blob === undefined)
        return [
          {
            mediaType: part.mediaType,
            placeholder,
            missing: unkeptImageWords(part.unkept),
          },
        ];
      const bytes = this.blobs?.get(part.blob);
      if (bytes === undefined)
        return [{ mediaType: part.mediaType, placeholder, missing: missingImageWords }];
      return [{ mediaType: part.mediaType, placeholder, data: bytes.toString("base64") }];
    });
    return images && images.length > 0 ? images : undefined;
  }

  private request(record: UsageRecord): Block[] {
    const { type: _, ...usage } = record;
    const { usage: sum } = this.totals;
    this.totals.requests++;
    sum.inputTokens += usage.inputTokens;
    sum.outputTokens += usage.outputTokens;
    sum.cacheReadTokens += usage.cacheReadTokens ?? 0;
    sum.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    sum.reasoningTokens += usage.reasoningTokens ?? 0;
    const left = [...this.unanswered(), ...this.leftUsage()];
    this.usage = usage;
    return left;
  }

  private skills(record: SkillsRecord): Block {
    this.totals.skills ??= { loaded: 0, used: [] };
    const skills = this.totals.skills;
    if (record.loaded) {
      this.skillAt = new Map(record.loaded.map((skill) => [skill.location, skill.name]));
      for (const skill of record.loaded) this.loadedNames.add(skill.name);
      skills.loaded = this.loadedNames.size;
    }
    const sent = record.sent ?? [];
    for (const name of sent) this.use(name).sent = true;
    return { kind: "skills", ...(record.loaded && { loaded: record.loaded }), sent };
  }

  /** The skill a `read` call opened the `SKILL.md` of, if it did. */
  private skillRead(call: ToolCall): string | undefined {
    const path = call.input.path;
    if (call.name !== "read" || typeof path !== "string") return undefined;
    const skill = this.skillAt.get(readTarget(path, this.workspace));
    if (skill !== undefined) this.use(skill).read = true;
    return skill;
  }

  private use(name: string): SkillUse {
    let use = this.used.get(name);
    if (!use) {
      use = { name, sent: false, read: false };
      this.used.set(name, use);
      this.totals.skills?.used.push(use);
    }
    return use;
  }

  /** The usage of a request that no answer followed, shown on its own. */
  private leftUsage(): Block[] {
    const usage = this.usage;
    this.usage = undefined;
    return usage ? [{ kind: "usage", usage }] : [];
  }

  private unanswered(): Block[] {
    const calls = [...this.open.values()];
    this.open.clear();
    this.totals.unanswered += calls.length;
    for (const call of calls) if (call.approval?.approved === false) this.totals.denied++;
    return calls.map((call) => ({ kind: "call", ...call }));
  }
}

function thinkingOf(message: StoredMessage & { role: "assistant" }): Block[] {
  const parts = message.reasoning ?? [];
  if (parts.length === 0) return [];
  const texts = parts.flatMap((part) => (part.type === "thinking" ? [part.text] : []));
  return [{ kind: "thinking", text: texts.join("\n\n"), redacted: parts.length - texts.length }];
}
