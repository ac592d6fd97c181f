import { readdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Compaction } from "../compaction/record.js";
import { normalizeHistory } from "../history/normalize.js";
import { systemErrorMeaning } from "../system-errors.js";
import { headOf, wellFormed } from "../text.js";
import type { Message } from "../types.js";
import { BlobStore } from "./blobs.js";
import { Branch } from "./branch.js";
import { inlineImages } from "./images.js";
import { KeptHistory } from "./kept.js";
import {
  fileLines,
  NotRegularFileError,
  openSessionFile,
  UnreadableSessionError,
} from "./lines.js";
import {
  type ImagesRefusal,
  isTornHeader,
  parseLine,
  SESSION_FORMAT_VERSION,
  type SessionHeader,
  type SessionRecord,
} from "./records.js";

/** What loading found, besides the history itself. */
export interface SessionReport {
  /** Calls that had no result and received an `outcome unknown` receipt. */
  repaired: number;
  /** Lines that could not be read (a torn write) and were left out. */
  skipped: number;
}

export interface ReadResult extends SessionReport {
  header: SessionHeader;
  /** From the last compaction's first kept message on, when there is a compaction. */
  messages: Message[];
  compaction?: Compaction;
  /** Each provider and model that refused images in this session (compactions do not undo it). */
  imagesRefused: ImagesRefusal[];
  /** Receipts for calls still open at the end of the file; `Session.open` writes them. */
  trailingRepairs: Message[];
  /** The file does not end with a newline: the last write was torn. */
  torn: boolean;
  /**
   * `write` and `edit` calls a crash cut off after their `file_before` record, among the calls
   * this load repairs (`trailingRepairs`): whether each changed its file is unknown. Only when any.
   */
  cutOff?: CutOffChange[];
  /**
   * Images of `messages` whose bytes are missing from the session's blob store or altered: each
   * is its placeholder line instead. Only when any.
   */
  missingImages?: number;
  /** The last rewind of files, when it was cut off (no `rewind_end` after its `rewind_start`). */
  openRewind?: OpenRewind;
  /**
   * What last cut the conversation the model goes on with, when anything did: a compaction (the
   * messages it covers are gone from the model's view), or a rewind (the branch left behind).
   */
  cutBy?: ConversationCut;
}

/** What takes earlier messages out of the conversation the model goes on with. */
export type ConversationCut = "compaction" | "rewind";

/** A rewind cut off: its prompt, and whether it was to take the conversation back too. */
export interface OpenRewind {
  to: number;
  conversation: boolean;
}

/** A change whose call was cut off between its `file_before` record and its `file_change`. */
export interface CutOffChange {
  toolCallId: string;
  tool: string;
  path: string;
}

/**
 * A session file without a whole header: empty, or its first line torn by a crash. Nothing in
 * it can be resumed (the header says which format the rest is in); it is listed, not hidden.
 */
export class DamagedSessionError extends Error {
  override name = "DamagedSessionError";

  constructor(
    path: string,
    /** What is wrong, e.g. `its first line is a torn session header`. */
    readonly reason: string,
  ) {
    super(
      `session file ${path} is damaged: ${reason}; it cannot be resumed (remove it to continue an earlier session)`,
    );
  }
}

/**
 * Reads a session without writing to it. Streams the file; tolerates torn and glued lines. Holds
 * only the messages since the last compaction read so far: at each compaction record, the
 * messages it covers are dropped, so memory follows what the model sees, not the file's size.
 * Anything but a regular file is refused at once (`NotRegularFileError`), never waited on.
 */
export async function readSession(path: string): Promise<ReadResult> {
  let header: SessionRecord | undefined;
  let history = new KeptHistory();
  const branch = new Branch();
  let ordinal = 0;
  let firstLine: string | undefined;
  let skipped = 0;
  let torn = false;
  const imagesRefused: ImagesRefusal[] = [];
  const open = new Map<string, CutOffChange>();
  let openRewind: OpenRewind | undefined;
  let cutBy: ConversationCut | undefined;
  const take = (line: Buffer) => {
    const text = line.toString("utf8");
    firstLine ??= text;
    if (line.length === 0) return;
    const parsed = parseLine(text);
    skipped += parsed.skipped;
    for (const record of parsed.records) {
      const at = ordinal++;
      if (header === undefined) header = record;
      else if (!branch.add(at, record)) skipped++;
      else if (record.type === "message") history.add(record.message);
      else if (record.type === "compaction") {
        if (history.compact(record)) cutBy = "compaction";
        else skipped++;
      } else if (record.type === "rewind") cutBy = "rewind";
      else if (record.type === "images_refused") imagesRefused.push(record);
      else if (record.type === "file_before") {
        const { toolCallId, tool, path } = record;
        open.set(toolCallId, { toolCallId, tool, path });
      } else if (record.type === "file_change") open.delete(record.toolCallId);
      else if (record.type === "rewind_start")
        openRewind = { to: record.to, conversation: record.conversation };
      else if (record.type === "rewind_end") openRewind = undefined;
    }
  };
  for await (const line of fileLines(path)) {
    torn = !line.ended;
    if (line.bytes) take(line.bytes);
    else {
      // Longer than any record: holds none (a crash, a file filled by hand).
      firstLine ??= "";
      skipped++;
    }
  }
  // A rewind took the conversation back: the history is the branch's, read again.
  if (branch.cut) history = await branchHistory(path, branch.ordinals());

  if (header?.type !== "session") {
    if (firstLine === undefined) throw new DamagedSessionError(path, "it is empty");
    if (isTornHeader(firstLine)) {
      throw new DamagedSessionError(path, "its first line is a torn session header");
    }
    throw new Error(`not a mini-agent session file: ${path}`);
  }
  if (header.version > SESSION_FORMAT_VERSION) {
    throw new Error(
      `session format version ${header.version} is newer than this mini-agent supports (${SESSION_FORMAT_VERSION}): ${path}`,
    );
  }
  const { compaction } = history;
  // Only the images the model still sees are read: none a compaction covers.
  const images = inlineImages(history.messages, () => BlobStore.forSession(path));
  const normal = normalizeHistory(images.messages, { startWithUser: compaction === undefined });
  const repairs = new Set(
    normal.trailingRepairs.map((m) => (m.role === "tool" ? m.toolCallId : "")),
  );
  const cutOff = [...open.values()].filter((change) => repairs.has(change.toolCallId));
  return {
    header,
    skipped,
    torn,
    imagesRefused,
    ...normal,
    ...(compaction && { compaction }),
    ...(cutOff.length > 0 && { cutOff }),
    ...(images.missing > 0 && { missingImages: images.missing }),
    ...(openRewind && { openRewind }),
    ...(cutBy && { cutBy }),
  };
}

/**
 * The messages since the last compaction of the branch whose records are at `ordinals`
 * (ascending), read from the file again: the first pass could not know which records a later
 * rewind would take off the branch.
 */
async function branchHistory(path: string, ordinals: readonly number[]): Promise<KeptHistory> {
  const history = new KeptHistory();
  let ordinal = 0;
  let next = 0;
  for await (const line of fileLines(path)) {
    if (!line.bytes || line.bytes.length === 0) continue;
    for (const record of parseLine(line.bytes.toString("utf8")).records) {
      if (ordinal++ !== ordinals[next]) continue;
      next++;
      if (record.type === "message") history.add(record.message);
      else if (record.type === "compaction") history.compact(record);
    }
  }
  return history;
}

export interface SessionSummary {
  id: string;
  path: string;
  createdAt: string;
  updatedAt: string;
  workspace: string;
  model: string;
  /** The start of the session's first prompt, at most `listedPromptChars` characters. */
  firstPrompt: string;
  /** The file's size. */
  bytes: number;
  /** Why the file cannot be resumed, when it is damaged (`DamagedSessionError.reason`). */
  damaged?: string;
  /** Why the file cannot be read, when it cannot (`UnreadableSessionError.reason`). */
  unreadable?: string;
  /** The snapshot store of its bash calls was dropped (a `<id>.snapshot-dropped` beside it). */
  snapshotDropped?: true;
}

/** How much of a file listing reads: the header and the beginning of the first prompt. */
const headBytes = 64 * 1024;
/** How much of the first prompt a listing keeps; the head always holds that much. */
export const listedPromptChars = 1000;
/** How the record of a user message begins, as `Session` writes it. */
const USER_RECORD_START = '{"type":"message","message":{"role":"user","content":"';

/**
 * The sessions in `dir`, newest first. A damaged one is listed with `damaged` saying why, one
 * that cannot be read (another user's, a failing disk) with `unreadable` saying why, so
 * `--continue` refuses it instead of taking an older one; files that are not sessions and
 * anything but regular files are left out. Each file costs one `stat` and one read of its first
 * 64 KiB, so listing does not grow with history.
 */
export async function listSessions(dir: string): Promise<SessionSummary[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const summaries: SessionSummary[] = [];
  const dropped = new Set(names.filter((name) => name.endsWith(".snapshot-dropped")));
  for (const name of names.filter((name) => name.endsWith(".jsonl"))) {
    const path = join(dir, name);
    const found = await summary(path).catch((error: unknown) => unreadable(path, error));
    const stem = name.slice(0, -".jsonl".length);
    if (found && dropped.has(`${stem}.snapshot-dropped`)) found.snapshotDropped = true;
    if (found) summaries.push(found);
  }
  return summaries.sort(
    (a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id),
  );
}

/** The summary of one file from its metadata and head; `undefined` when it is not a session. */
async function summary(path: string): Promise<SessionSummary | undefined> {
  // Never waits: a FIFO put in the folder is seen as such and left out.
  const file = await openSessionFile(path).catch((error: unknown) => {
    if (error instanceof NotRegularFileError) return undefined;
    throw error;
  });
  if (file === undefined) return undefined;
  try {
    const info = await file.stat();
    const buffer = Buffer.alloc(Math.min(headBytes, info.size));
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
    const head = buffer.subarray(0, bytesRead);
    const base = { path, updatedAt: info.mtime.toISOString(), bytes: info.size };
    const lines = head.toString("utf8").split("\n");
    // A last piece is a whole (torn) line only when the head reached the end of the file.
    const cut = bytesRead < info.size ? lines.pop() : undefined;
    const records = lines.flatMap((line) => (line === "" ? [] : parseLine(line).records));
    const [header] = records;
    if (header?.type !== "session") {
      if (info.size > 0 && !isTornHeader(lines[0] ?? cut ?? "")) return undefined;
      const reason = info.size === 0 ? "it is empty" : "its first line is a torn session header";
      const empty = { createdAt: "", workspace: "", model: "", firstPrompt: "" };
      return { id: basename(path, ".jsonl"), ...base, ...empty, damaged: reason };
    }
    if (header.version > SESSION_FORMAT_VERSION) return undefined;
    const prompt = records.find((r) => r.type === "message" && r.message.role === "user");
    const firstPrompt =
      prompt?.type === "message" ? prompt.message.content : promptOfCutLine(cut ?? "");
    const { id, createdAt, workspace, model } = header;
    return {
      id,
      ...base,
      createdAt,
      workspace,
      model,
      firstPrompt: headOf(firstPrompt, listedPromptChars),
    };
  } finally {
    await file.close();
  }
}

/**
 * The summary of a file whose head could not be read, from its metadata: `unreadable` says why.
 * A file gone meanwhile is left out; an error that is not a failed system call is rethrown.
 */
async function unreadable(path: string, error: unknown): Promise<SessionSummary | undefined> {
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  if (code === "ENOENT") return undefined;
  const reason =
    error instanceof UnreadableSessionError
      ? error.reason
      : code !== undefined
        ? systemErrorMeaning(code)
        : undefined;
  if (reason === undefined) throw error;
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  const empty = { createdAt: "", workspace: "", model: "", firstPrompt: "" };
  const base = { path, updatedAt: info.mtime.toISOString(), bytes: info.size };
  return { id: basename(path, ".jsonl"), ...base, ...empty, unreadable: reason };
}

/**
 * The beginning of the prompt in a user record cut off by the end of the head: its JSON string
 * decoded up to the last whole character. Empty when the cut line is not a user record.
 */
function promptOfCutLine(line: string): string {
  if (!line.startsWith(USER_RECORD_START)) return "";
  // Drop an escape or a character the cut split, then close the string.
  const raw = line
    .slice(USER_RECORD_START.length)
    .replace(/\uFFFD+$/, "")
    .replace(/((?:^|[^\\])(?:\\\\)*)\\(?:u[0-9a-fA-F]{0,3})?$/, "$1");
  try {
    return wellFormed(JSON.parse(`"${raw}"`) as string);
  } catch {
    return "";
  }
}

/**
 * Every message of a session file's current branch in the order written, from its first prompt
 * on: what an editor's `session/load` replays. Compactions do not hide the messages they cover
 * here; a rewind does (the prompts it went back over are off the branch). Lines that hold no
 * record are passed over; images are read back from the blob store. The caller has opened the file (it is a session).
 */
export async function* sessionMessages(path: string): AsyncGenerator<Message> {
  const branch = new Branch();
  let ordinal = 0;
  for await (const record of fileRecords(path)) {
    const at = ordinal++;
    if (at > 0) branch.add(at, record);
  }
  const on = new Set(branch.ordinals());
  const blobs = BlobStore.forSession(path);
  ordinal = 0;
  for await (const record of fileRecords(path)) {
    const at = ordinal++;
    if (record.type !== "message" || (branch.cut && !on.has(at))) continue;
    // Its images read back, or their placeholders where the bytes are gone.
    const [message] = inlineImages([record.message], () => blobs).messages;
    if (message) yield message;
  }
}

/** The records of a session file, line by line; lines that hold none are passed over. */
async function* fileRecords(path: string): AsyncGenerator<SessionRecord> {
  for await (const line of fileLines(path)) {
    if (!line.bytes || line.bytes.length === 0) continue;
    yield* parseLine(line.bytes.toString("utf8")).records;
  }
}
