import { BlobStore } from "../session/blobs.js";
import { fileLines, NotRegularFileError, UnreadableSessionError } from "../session/lines.js";
import {
  isTornHeader,
  parseLine,
  SESSION_FORMAT_VERSION,
  type SessionHeader,
} from "../session/records.js";
import { type Block, BlockBuilder, type Totals } from "./blocks.js";

/** A session that cannot be exported, said in one line: what is wrong with which file. */
export class ExportError extends Error {
  override name = "ExportError";
}

/** A session file being read for export: its header is checked, its blocks come as it streams. */
export interface SessionExport {
  header: SessionHeader;
  /** Every block, in order, then the totals in `totals`. */
  blocks(): AsyncGenerator<Block>;
  /** Complete once `blocks()` has ended. */
  totals: Totals;
}

/**
 * Opens a session for export and checks its first line before anything is written: an empty
 * file, a torn header, a file that is not a session or a newer format is an `ExportError`. The
 * rest streams: lines that hold no record (a torn write) become `unreadable` blocks, never the
 * reason an export fails. A FIFO or device named like a session is refused, never waited on.
 */
export async function readForExport(path: string): Promise<SessionExport> {
  const lines = fileLines(path);
  const first = await lines.next().catch((error: NodeJS.ErrnoException) => {
    if (error instanceof NotRegularFileError || error instanceof UnreadableSessionError) {
      throw new ExportError(error.message);
    }
    throw new ExportError(`cannot read session file ${path}: ${error.code ?? error.message}`);
  });
  if (first.done === true || first.value.bytes?.length === 0) {
    await lines.return(undefined);
    throw new ExportError(`session file ${path} is damaged: it is empty`);
  }
  const text = first.value.bytes?.toString("utf8") ?? "";
  const [header, ...glued] = parseLine(text).records;
  if (header?.type !== "session" || !text.startsWith('{"type":"session"')) {
    await lines.return(undefined);
    throw new ExportError(
      isTornHeader(text)
        ? `session file ${path} is damaged: its first line is a torn session header`
        : `${path} is not a mini-agent session file: its first line is not a session header`,
    );
  }
  if (header.version > SESSION_FORMAT_VERSION) {
    await lines.return(undefined);
    throw new ExportError(
      `session format version ${header.version} is newer than this mini-agent supports (${SESSION_FORMAT_VERSION}): ${path}`,
    );
  }
  const builder = new BlockBuilder(header.workspace, BlobStore.forSession(path));
  return {
    header,
    totals: builder.totals,
    async *blocks() {
      for (const record of glued) yield* builder.add(record);
      for await (const line of lines) {
        if (line.bytes === undefined) {
          yield* builder.unreadable();
          continue;
        }
        if (line.bytes.length === 0) continue;
        const { records, skipped } = parseLine(line.bytes.toString("utf8"));
        for (let i = 0; i < skipped; i++) yield* builder.unreadable();
        for (const record of records) yield* builder.add(record);
      }
      yield* builder.end();
    },
  };
}
