import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { KeptHistory } from "./compaction/kept.js";
import type { Compaction } from "./compaction/record.js";
import { normalizeHistory } from "./history.js";
import {
  isTornHeader,
  parseLine,
  SESSION_FORMAT_VERSION,
  type SessionHeader,
  type SessionRecord,
} from "./session-records.js";
import type { Message } from "./types.js";

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
  /** Receipts for calls still open at the end of the file; `Session.open` writes them. */
  trailingRepairs: Message[];
  /** The file does not end with a newline: the last write was torn. */
  torn: boolean;
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
 */
export async function readSession(path: string): Promise<ReadResult> {
  let header: SessionRecord | undefined;
  const history = new KeptHistory();
  let firstLine: string | undefined;
  let skipped = 0;
  let torn = false;
  const take = (line: Buffer) => {
    const text = line.toString("utf8");
    firstLine ??= text;
    if (line.length === 0) return;
    const parsed = parseLine(text);
    skipped += parsed.skipped;
    for (const record of parsed.records) {
      if (header === undefined) header = record;
      else if (record.type === "message") history.add(record.message);
      else if (record.type === "compaction" && !history.compact(record)) skipped++;
    }
  };
  // The pieces of a line longer than a chunk are joined once, at its newline: linear in its size.
  let pending: Buffer[] = [];
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      take(pending.length > 0 ? Buffer.concat([...pending, piece]) : piece);
      pending = [];
      start = newline + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length > 0) {
    torn = true;
    take(Buffer.concat(pending));
  }

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
  return {
    header,
    skipped,
    torn,
    ...normalizeHistory(history.messages, { startWithUser: compaction === undefined }),
    ...(compaction && { compaction }),
  };
}

export interface SessionSummary {
  id: string;
  path: string;
  createdAt: string;
  updatedAt: string;
  workspace: string;
  model: string;
  firstPrompt: string;
  /** User messages in the history. */
  turns: number;
  /** Why the file cannot be resumed, when it is damaged (`DamagedSessionError.reason`). */
  damaged?: string;
}

/**
 * The sessions in `dir`, newest first. A damaged one is listed with `damaged` saying why (so
 * `--continue` says so instead of skipping it); files that are not sessions are left out.
 */
export async function listSessions(dir: string): Promise<SessionSummary[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith(".jsonl"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const summaries: SessionSummary[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      summaries.push(await summary(path));
    } catch {
      // Not a session (a foreign file, a newer format) or gone meanwhile: listing shows the rest.
    }
  }
  return summaries.sort(
    (a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id),
  );
}

async function summary(path: string): Promise<SessionSummary> {
  const info = await stat(path);
  const updatedAt = info.mtime.toISOString();
  try {
    const { header, messages, compaction } = await readSession(path);
    const prompts = [
      ...(compaction?.userMessages ?? []),
      ...messages.flatMap((message) => (message.role === "user" ? [message.content] : [])),
    ];
    const { id, createdAt, workspace, model } = header;
    const firstPrompt = prompts[0] ?? "";
    return { id, path, createdAt, updatedAt, workspace, model, firstPrompt, turns: prompts.length };
  } catch (error) {
    if (!(error instanceof DamagedSessionError)) throw error;
    const id = basename(path, ".jsonl");
    const empty = { createdAt: "", workspace: "", model: "", firstPrompt: "", turns: 0 };
    return { id, path, updatedAt, ...empty, damaged: error.reason };
  }
}
