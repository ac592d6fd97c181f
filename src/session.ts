import { randomBytes } from "node:crypto";
import { closeSync, createReadStream, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { normalizeHistory } from "./history.js";
import { secretRedactor } from "./secrets.js";
import type { Message } from "./types.js";

/**
 * The session file: JSON Lines, append-only, one record per line and one `write` per record.
 * The first line identifies the session; every other line is a message of the history.
 * Values of secret environment variables are replaced by `[redacted]` before anything is written.
 */
export const SESSION_FORMAT_VERSION = 1;

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
const RecordSchema = Type.Union([HeaderSchema, MessageRecordSchema, ApprovalRecordSchema]);

export type SessionHeader = Static<typeof HeaderSchema>;
export type ApprovalRecord = Static<typeof ApprovalRecordSchema>;
type SessionRecord = Static<typeof RecordSchema>;

/** What loading found, besides the history itself. */
export interface SessionReport {
  /** Calls that had no result and received an `outcome unknown` receipt. */
  repaired: number;
  /** Lines that could not be read (a torn write) and were left out. */
  skipped: number;
}

export interface LoadedSession extends SessionReport {
  session: Session;
  /** A valid history: every call of every assistant message has exactly one result. */
  messages: Message[];
}

export interface SessionOptions {
  /** Environment whose secret values are redacted; defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
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
 * An open session file. Each record is one synchronous `write` of one line: records keep their
 * order without a queue, and a record is in the kernel before the next step (a tool run) begins.
 */
export class Session {
  private constructor(
    readonly path: string,
    readonly header: SessionHeader,
    private fd: number | undefined,
    private readonly redact: (text: string) => string,
    private needsNewline: boolean,
  ) {}

  static async create(options: CreateSessionOptions): Promise<Session> {
    const now = options.now ?? new Date();
    const id = options.id ?? newSessionId(now);
    if (!/^[\w.-]+$/.test(id)) throw new Error(`invalid session id: ${JSON.stringify(id)}`);
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    const path = join(options.dir, `${id}.jsonl`);
    const fd = openSync(path, "wx", 0o600);
    const header: SessionHeader = {
      type: "session",
      version: SESSION_FORMAT_VERSION,
      id,
      createdAt: now.toISOString(),
      workspace: options.workspace,
      model: options.model,
      ...(options.sandbox !== undefined && { sandbox: options.sandbox }),
    };
    const session = new Session(path, header, fd, secretRedactor(options.env), false);
    try {
      session.write(header);
    } catch (error) {
      // A session file without its header is no session: leave nothing behind (a full disk).
      closeSync(fd);
      rmSync(path, { force: true });
      throw error;
    }
    return session;
  }

  /** Loads a session for appending: the repair receipts it needed are written first. */
  static async open(path: string, options: SessionOptions = {}): Promise<LoadedSession> {
    const loaded = await readSession(path);
    const fd = openSync(path, "a", 0o600);
    const session = new Session(path, loaded.header, fd, secretRedactor(options.env), loaded.torn);
    for (const receipt of loaded.trailingRepairs) await session.append(receipt);
    const { messages, repaired, skipped } = loaded;
    return { session, messages, repaired, skipped };
  }

  get id(): string {
    return this.header.id;
  }

  async append(message: Message): Promise<void> {
    this.write({ type: "message", message });
  }

  async appendApproval(decision: Omit<ApprovalRecord, "type">): Promise<void> {
    this.write({ type: "approval", ...decision });
  }

  async close(): Promise<void> {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private write(record: SessionRecord): void {
    if (this.fd === undefined) throw new Error(`session ${this.header.id} is closed`);
    const prefix = this.needsNewline ? "\n" : "";
    const line = Buffer.from(`${prefix}${this.redact(JSON.stringify(record))}\n`);
    const written = writeSync(this.fd, line);
    if (written !== line.length) {
      throw new Error(`session write was cut short: ${written} of ${line.length} bytes`);
    }
    this.needsNewline = false;
  }
}

interface ReadResult extends SessionReport {
  header: SessionHeader;
  messages: Message[];
  /** Receipts for calls still open at the end of the file; `Session.open` writes them. */
  trailingRepairs: Message[];
  /** The file does not end with a newline: the last write was torn. */
  torn: boolean;
}

/** Reads a session without writing to it. Streams the file; tolerates torn and glued lines. */
export async function readSession(path: string): Promise<ReadResult> {
  const records: SessionRecord[] = [];
  let skipped = 0;
  let torn = false;
  const take = (line: Buffer) => {
    if (line.length === 0) return;
    const parsed = parseLine(line.toString("utf8"));
    records.push(...parsed.records);
    skipped += parsed.skipped;
  };
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    for (let newline = data.indexOf(10); newline !== -1; newline = data.indexOf(10)) {
      take(data.subarray(0, newline));
      data = data.subarray(newline + 1);
    }
    rest = data;
  }
  if (rest.length > 0) {
    torn = true;
    take(rest);
  }

  const [header, ...others] = records;
  if (header?.type !== "session") throw new Error(`not a mini-agent session file: ${path}`);
  if (header.version > SESSION_FORMAT_VERSION) {
    throw new Error(
      `session format version ${header.version} is newer than this mini-agent supports (${SESSION_FORMAT_VERSION}): ${path}`,
    );
  }
  const history = others.flatMap((record) => (record.type === "message" ? [record.message] : []));
  return { header, skipped, torn, ...normalizeHistory(history) };
}

/** A line is one record, a torn piece, or (after a crash mid-write) a torn piece glued to records. */
function parseLine(line: string): { records: SessionRecord[]; skipped: number } {
  const whole = parseRecord(line);
  if (whole) return { records: [whole], skipped: 0 };
  const marker = '{"type":"';
  for (let at = line.indexOf(marker, 1); at !== -1; at = line.indexOf(marker, at + 1)) {
    const record = parseRecord(line.slice(at));
    if (!record) continue;
    const before = parseLine(line.slice(0, at));
    return { records: [...before.records, record], skipped: before.skipped };
  }
  return { records: [], skipped: 1 };
}

function parseRecord(text: string): SessionRecord | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return Value.Check(RecordSchema, value) ? value : undefined;
  } catch {
    return undefined;
  }
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
}

/** The sessions in `dir`, newest first. Files that are not sessions are left out. */
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
      const [{ header, messages }, info] = await Promise.all([readSession(path), stat(path)]);
      const prompts = messages.filter((message) => message.role === "user");
      summaries.push({
        id: header.id,
        path,
        createdAt: header.createdAt,
        updatedAt: info.mtime.toISOString(),
        workspace: header.workspace,
        model: header.model,
        firstPrompt: prompts[0]?.content ?? "",
        turns: prompts.length,
      });
    } catch {
      // Not a readable session (a torn header, a foreign file): listing shows the rest.
    }
  }
  return summaries.sort(
    (a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id),
  );
}

/** Sortable by time, unique enough for one user: `20261130-125419-3f9a1c`. */
export function newSessionId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}
