import type { Compaction } from "../compaction/record.js";
import type { BashChange, FileBefore, McpStatus, RetryNotice } from "../runner/events.js";
import { blobDirFor } from "../session/blobs.js";
import { visible } from "../visible.js";

/** `overloaded_error: Overloaded; retrying in 2 s (attempt 2 of 4)`. */
export function retryLine(notice: RetryNotice): string {
  return `${visible(notice.reason)}; retrying in ${duration(notice.delayMs)} (attempt ${notice.attempt} of ${notice.attempts})`;
}

function duration(ms: number): string {
  return ms >= 1000 ? `${Number((ms / 1000).toFixed(1))} s` : `${Math.round(ms)} ms`;
}

/** The one stderr line that announces a lost round run again, in every format. */
export const retryNotice = (stderr: NodeJS.WritableStream, notice: RetryNotice, suffix = "") =>
  stderr.write(`mini-agent: ${retryLine(notice)}${suffix}\n`);

/** `compacted the conversation: 182k → 24k tokens (3 compactions)`. */
export function compactedLine(compaction: Compaction): string {
  const count = `${compaction.count} compaction${compaction.count === 1 ? "" : "s"}`;
  return `compacted the conversation: ${tokens(compaction.tokensBefore)} → ${tokens(compaction.tokensAfter)} tokens (${count})`;
}

const tokens = (n: number) => (n < 1000 ? String(n) : `${Math.round(n / 1000)}k`);

/**
 * `MCP server "docs": ready, 3 tool(s)`, `MCP server "db": failed: command not found: pg-mcp
 * (stderr: last line)`: one server's change, in one line (what `mcp list` shows after the name).
 */
export function mcpStatusLine(status: McpStatus): string {
  const count = status.state === "ready" ? `, ${status.tools ?? 0} tool(s)` : "";
  const reason = status.reason === undefined ? "" : `: ${status.reason}`;
  const last = status.stderr?.at(-1);
  const stderr = last === undefined ? "" : ` (stderr: ${last})`;
  return visible(`MCP server "${status.server}": ${status.state}${count}${reason}${stderr}`);
}

/** The one stderr line that tells an MCP server's change, in every format. */
export const mcpStatusNotice = (stderr: NodeJS.WritableStream, status: McpStatus) =>
  stderr.write(`mini-agent: ${mcpStatusLine(status)}\n`);

/** The one stderr line, in every format, the first time a request holds older images back. */
export const imagesHeldBackNotice = (stderr: NodeJS.WritableStream, count: number) =>
  stderr.write(
    `mini-agent: ${count === 1 ? "1 older image is sent as a placeholder" : `${count} older images are sent as placeholders`}: a request holds only as many as the provider takes\n`,
  );

/**
 * The one stderr line, in every format, for a change whose old bytes were not kept (a file too
 * big for the session's blob store): a rewind will not restore that file. Nothing for the rest.
 */
export function unkeptNotice(stderr: NodeJS.WritableStream, before: FileBefore): void {
  if (before.unkept === undefined) return;
  const what = visible(`${before.tool} ${before.path}`);
  stderr.write(
    `mini-agent: ${what}: its bytes before this change were not kept (${visible(before.unkept)}); a rewind cannot restore them\n`,
  );
}

/** `mini-agent: bash: what it changed is not known (git took over 2 s: skipped)`. */
export function bashSkippedNotice(stderr: NodeJS.WritableStream, change: BashChange): void {
  if (change.skipped === undefined) return;
  const why = visible(change.skipped);
  stderr.write(
    change.readOnly
      ? `mini-agent: bash: the workspace was read-only for this command (${why})\n`
      : `mini-agent: bash: what it changed is not known (${why})\n`,
  );
}

/** The one line, in every front end, for an image the session's blob store could not take. */
export const imageNotKeptLine = (note: string) => `mini-agent: note: ${note}\n`;

/** The one line, in every front end, for a resumed session's images whose bytes are gone. */
export const missingImagesLine = (count: number, sessionPath: string) =>
  `mini-agent: warning: ${count} image(s) of this session are missing from its blob store or altered (${visible(blobDirFor(sessionPath))}); their placeholders are sent instead\n`;
