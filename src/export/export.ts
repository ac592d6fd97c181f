import { secretRedactor } from "../secrets.js";
import type { Totals } from "./blocks.js";
import { htmlRenderer } from "./html.js";
import { markdownRenderer } from "./markdown.js";
import type { SessionExport } from "./read.js";
import { type Renderer, renderBlock } from "./renderer.js";
import { shownWith } from "./shown.js";

export { ExportError, readForExport, type SessionExport } from "./read.js";

export type ExportFormat = "html" | "md";

export interface ExportOptions {
  format: ExportFormat;
  /** The environment whose secret values are redacted (the current rule); `process.env` by default. */
  env?: NodeJS.ProcessEnv;
}

/** Text is handed on in pieces of about this size: few writes, little held. */
const CHUNK = 64 * 1024;

/**
 * Writes a session opened with `readForExport` in one format, as it streams: each block is
 * rendered and handed to `write` (awaited, so a slow reader holds the export back instead of
 * memory filling up); what is held at any time is the open round and one chunk of output.
 * Resolves to the totals the export ends with.
 */
export async function writeExport(
  session: SessionExport,
  options: ExportOptions,
  write: (text: string) => Promise<void>,
): Promise<Totals> {
  const show = shownWith(secretRedactor(options.env ?? process.env));
  const renderer: Renderer =
    options.format === "html" ? htmlRenderer(show) : markdownRenderer(show);
  let pending = renderer.begin(session.header);
  for await (const block of session.blocks()) {
    pending += renderBlock(renderer, block);
    if (pending.length >= CHUNK) {
      await write(pending);
      pending = "";
    }
  }
  await write(pending + renderer.end(session.totals));
  return session.totals;
}
