/**
 * The session file: JSON Lines, append-only, one record per line and one `write` per record.
 * The first line identifies the session; every other line is a message of the history.
 * Values of secret environment variables are replaced by `[redacted]` and lone surrogates by
 * U+FFFD before anything is written.
 * This module writes it; `read.ts` reads it, `records.ts` holds the records.
 */

import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, join } from "node:path";
import type { Compaction } from "../compaction/record.js";
import { cleanReasoning } from "../history/normalize.js";
import { mapStrings } from "../map-strings.js";
import { secretRedactor } from "../secrets.js";
import { stateHint } from "../system-errors.js";
import { wellFormed } from "../text.js";
import type { Message } from "../types.js";
import { BlobStore } from "./blobs.js";
import { withLine } from "./encode.js";
import { storeImages } from "./images.js";
import { lockSession, type SessionLock } from "./lock.js";
import {
  type ConversationCut,
  type CutOffChange,
  type OpenRewind,
  readSession,
  type SessionReport,
} from "./read.js";
import {
  type ImagesRefusal,
  SESSION_FORMAT_VERSION,
  type SessionHeader,
  type SessionRecord,
} from "./records.js";

/**
 * The session file: JSON Lines, append-only, one record per line and one `write` per record.
 * The first line identifies the session; every other line is a message of the history, an
 * approval decision, a compaction (which covers every message before its first kept one), the
 * usage of one model request, or a retried round.
 * Values of secret environment variables are replaced by `[redacted]` before anything is written.
 */
export {
  DamagedSessionError,
  listSessions,
  type ReadResult,
  readSession,
  type SessionReport,
  type SessionSummary,
} from "./read.js";
export {
  type ApprovalRecord,
  type RetryRecord,
  SESSION_FORMAT_VERSION,
  type SessionHeader,
  type UsageRecord,
} from "./records.js";

export interface LoadedSession extends SessionReport {
  session: Session;
  /**
   * A valid history: every call of every assistant message has exactly one result. After a
   * compaction, it starts at the last compaction's first kept message.
   */
  messages: Message[];
  /** The last compaction, which covers every message before `messages`. */
  compaction?: Compaction;
  /** Each provider and model that refused images (`images_refused` records). */
  imagesRefused: ImagesRefusal[];
  /** Changes of files a crash cut off (`ReadResult.cutOff`), told once: by the load that repairs them. */
  cutOff?: CutOffChange[];
  /** Images whose bytes are missing from the blob store or altered (`ReadResult.missingImages`). */
  missingImages?: number;
  /** The last rewind of files, when it was cut off (`ReadResult.openRewind`). */
  openRewind?: OpenRewind;
  /** What last cut the conversation, when anything did (`ReadResult.cutBy`). */
  cutBy?: ConversationCut;
}

export interface SessionOptions {
  /** Environment whose secret values are redacted; defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** How each record reaches the file; `fs.writeSync` unless a test puts a failing disk here. */
  write?: (fd: number, data: Uint8Array) => number;
  /** Bytes the session's blob store keeps in all (its default, 256 MiB, unless set). */
  blobCap?: number;
  /**
   * Told, in one line, of an image the blob store could not take (its cap): the record keeps its
   * placeholder, which a resumed session sends instead.
   */
  onImageNotKept?: (note: string) => void;
}

export interface CreateSessionOptions extends SessionOptions {
  /** The folder holding this workspace's sessions; created `0700` if missing. */
  dir: string;
  workspace: string;
  model: string;
  sandbox?: string;
  id?: string;
  now?: Date;
}

/**
 * An open session file, held by one writer (`lockSession`). Each record is one synchronous
 * `write` of one line: records keep their order without a queue, and a record is in the kernel
 * before the next step (a tool run) begins. Before each write the file at the path must still
 * be the one that was opened: records are never written into a file that was removed or
 * replaced. A write that fails says why in one line; what was written before it stays readable.
 */
export class Session {
  private constructor(
    readonly path: string,
    readonly header: SessionHeader,
    private fd: number | undefined,
    private readonly lock: SessionLock,
    private readonly options: SessionOptions,
    private needsNewline: boolean,
    private readonly redact = secretRedactor(options.env),
  ) {}

  static async create(options: CreateSessionOptions): Promise<Session> {
    const now = options.now ?? new Date();
    const id = options.id ?? newSessionId(now);
    if (!/^[\w.-]+$/.test(id)) throw new Error(`invalid session id: ${JSON.stringify(id)}`);
    try {
      mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw fileError("cannot create the session folder", options.dir, error);
    }
    const path = join(options.dir, `${id}.jsonl`);
    const header: SessionHeader = {
      type: "session",
      version: SESSION_FORMAT_VERSION,
      id,
      createdAt: now.toISOString(),
      workspace: options.workspace,
      model: options.model,
      ...(options.sandbox !== undefined && { sandbox: options.sandbox }),
    };
    const lock = takeLock(path, id);
    let fd: number | undefined;
    try {
      fd = openSync(path, "wx", 0o600);
      const session = new Session(path, header, fd, lock, options, false);
      session.write(header);
      return session;
    } catch (error) {
      if (fd !== undefined) {
        closeSync(fd);
        unlinkSync(path);
      }
      lock.release();
      throw fd === undefined
        ? fileError("cannot create session file", path, error, {
            EEXIST: "a session with this id exists",
          })
        : error;
    }
  }

  /** Loads a session for appending: the repair receipts it needed are written first. */
  static async open(path: string, options: SessionOptions = {}): Promise<LoadedSession> {
    const lock = takeLock(path, basename(path, ".jsonl"));
    let session: Session | undefined;
    try {
      const loaded = await readSession(path);
      const fd = openForAppend(path);
      session = new Session(path, loaded.header, fd, lock, options, loaded.torn);
      for (const receipt of loaded.trailingRepairs) await session.append(receipt);
      const { messages, repaired, skipped, compaction, imagesRefused, cutOff, missingImages } =
        loaded;
      const { openRewind, cutBy } = loaded;
      return {
        session,
        messages,
        repaired,
        skipped,
        imagesRefused,
        ...(compaction && { compaction }),
        ...(cutOff && { cutOff }),
        ...(missingImages && { missingImages }),
        ...(openRewind && { openRewind }),
        ...(cutBy && { cutBy }),
      };
    } catch (error) {
      if (session) await session.close();
      else lock.release();
      throw error;
    }
  }

  get id(): string {
    return this.header.id;
  }

  async append(message: Message): Promise<void> {
    this.write({ type: "message", message });
  }

  /**
   * Appends one record: a message, an approval decision, a request's usage or a retried round
   * (loading passes over those two), or a compaction (loading then starts from it).
   */
  async record(record: Exclude<SessionRecord, SessionHeader>): Promise<void> {
    this.write(record);
  }

  /** Closes the file and frees the session for the next writer. */
  async close(): Promise<void> {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.lock.release();
  }

  /** The session's blob store, made at its first use. */
  private get blobs(): BlobStore {
    this.blobStore ??= BlobStore.forSession(this.path, this.options.blobCap);
    return this.blobStore;
  }
  private blobStore: BlobStore | undefined;

  /** A message's images go into the blob store before the record that names them is written. */
  private outOfLine(record: SessionRecord): SessionRecord {
    if (record.type !== "message") return record;
    // A store that cannot write an image keeps it out with why (`BlobStore.put`): no throw here.
    const stored = storeImages(record.message, () => this.blobs);
    for (const { placeholder, reason } of stored.unkept)
      this.options.onImageNotKept?.(
        `the image ${placeholder} was not kept in the session (${reason}): a resumed session sends its placeholder`,
      );
    return { ...record, message: stored.message };
  }

  private write(given: SessionRecord): void {
    if (this.fd === undefined) throw new Error(`session ${this.header.id} is closed`);
    this.checkStillAtPath(this.fd);
    const record = this.outOfLine(given);
    const fd = this.fd;
    const prefix = this.needsNewline ? "\n" : "";
    const { written, size } = withLine(cleanRecord(record, this.redact), prefix, (line) => {
      // Until a write is known whole, the next record starts on a line of its own.
      this.needsNewline = true;
      try {
        return { written: (this.options.write ?? writeSync)(fd, line), size: line.length };
      } catch (error) {
        throw fileError("cannot write session file", this.path, error);
      }
    });
    if (written !== size) {
      // A regular file's write comes back short when the disk fills up in the middle of it.
      const reason = `only ${written} of ${size} bytes were written`;
      throw Object.assign(
        new Error(`cannot write session file ${this.path}: ${reason} (${SHORT_WRITE_HINT})`),
        { code: "ENOSPC" },
      );
    }
    this.needsNewline = false;
  }

  private checkStillAtPath(fd: number): void {
    const opened = fstatSync(fd);
    let current: Stats | undefined;
    try {
      current = statSync(this.path);
    } catch {
      current = undefined;
    }
    if (opened.nlink === 0 || current?.ino !== opened.ino || current.dev !== opened.dev) {
      throw new Error(
        `session file ${this.path} was replaced or removed while mini-agent was writing it`,
      );
    }
  }
}

/** The lock beside a session file: `<id>.lock` for `<id>.jsonl`. */
function takeLock(path: string, id: string): SessionLock {
  const lockPath = `${path.endsWith(".jsonl") ? path.slice(0, -".jsonl".length) : path}.lock`;
  try {
    return lockSession(lockPath, id);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === undefined) throw error;
    throw fileError("cannot lock session file", path, error);
  }
}

const SHORT_WRITE_HINT = `the disk is probably full: ${stateHint("ENOSPC")}`;

/**
 * A file system error as one line: what failed, where, the code and, for the usual ones, a hint
 * (`stateHint`, unless `hints` has one of this call's own).
 */
function fileError(
  action: string,
  path: string,
  error: unknown,
  hints: Record<string, string> = {},
): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code ?? String((error as Error).message).split("\n")[0];
  const known = code === undefined ? undefined : (hints[code] ?? stateHint(code));
  const hint = known === undefined ? "" : ` (${known})`;
  return new Error(`${action} ${path}: ${reason}${hint}`, { cause: error });
}

/** A session file this process may read but not write is refused in one line, by name. */
function openForAppend(path: string): number {
  try {
    return openSync(path, "a", 0o600);
  } catch (error) {
    const denied = "permission denied: fix the file's owner or mode";
    throw fileError("cannot write to session file", path, error, {
      EACCES: denied,
      EPERM: denied,
    });
  }
}

/**
 * The record as it is written: every string value made well-formed (a lone surrogate becomes
 * U+FFFD; strict JSON readers refuse one) and then redacted, in one walk, except the literals
 * that say what it is (`type`, `role`, a compaction's `trigger`, a turn's `status`, a reasoning
 * part's `type`), the parts of an image (its media type, the hash that names its bytes) and
 * the opaque signatures of the model's thinking, so a secret equal to a JSON word or to `assistant` can
 * never drop or change a record. The keys of tool inputs, which the model chose, are cleaned
 * too; the record's own keys never are.
 */
function cleanRecord<R extends SessionRecord>(record: R, redact: (text: string) => string): R {
  const clean = (text: string) => redact(wellFormed(text));
  if (record.type !== "message" || record.message.role !== "assistant") {
    const cleaned: R = { ...mapStrings(record, clean), type: record.type };
    if (cleaned.type === "compaction" && record.type === "compaction")
      return { ...cleaned, trigger: record.trigger };
    if (cleaned.type === "turn_end" && record.type === "turn_end")
      return { ...cleaned, status: record.status };
    if (cleaned.type !== "message" || record.type !== "message") return cleaned;
    const message = { ...cleaned.message, role: record.message.role };
    const parts = record.message.role === "assistant" ? undefined : record.message.parts;
    if (!parts) return { ...cleaned, message };
    // An image's fields are literals, a hash and sizes, its bytes not text: none is redacted.
    const cleanParts = parts.map((part) =>
      part.type === "text" ? { type: part.type, text: clean(part.text) } : part,
    );
    return { ...cleaned, message: { ...message, parts: cleanParts } };
  }
  const { toolCalls, ...message } = record.message;
  const calls = toolCalls.map(({ input, ...call }) => ({
    ...mapStrings(call, clean),
    input: mapStrings(input, clean, { keys: true }),
  }));
  const { reasoning, ...rest } = message;
  // Of the reasoning, only the readable text: kinds are literals, signatures opaque tokens.
  const parts = reasoning?.map((part) => cleanReasoning(part, clean));
  return {
    ...record,
    message: {
      ...mapStrings(rest, clean),
      role: "assistant",
      toolCalls: calls,
      ...(parts && { reasoning: parts }),
    },
  };
}

/**
 * Sortable by time, unique enough for one user: `20261130-125419-3f9a1c`. The six hex digits
 * only tell apart the sessions of one second (the file is created exclusively: a clash is
 * refused, never shared), and are no secret: `Math.random`, not `node:crypto` (see `crypto.ts`).
 */
export function newSessionId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const suffix = Math.floor(Math.random() * 0x1000000);
  return `${stamp}-${suffix.toString(16).padStart(6, "0")}`;
}
