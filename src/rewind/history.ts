import { fileLines } from "../session/lines.js";
import { parseLine } from "../session/records.js";
import type { FileState } from "./changes.js";

/** What the agent did to one file from prompt N on, as the session's records tell it. */
export interface FileHistory {
  /** Relative to the workspace. */
  path: string;
  /** The file just before prompt N: the first change's `before`, and whether its bytes were kept. */
  original: FileState & { unkept?: string };
  /** What the agent's last change left; undefined when that call was cut off (a crash). */
  left: FileState | undefined;
  /** The call that was cut off, when `left` is unknown. */
  cutOff?: string;
}

export interface SessionHistory {
  /** The user's prompts in the file, 1 for the first. */
  prompts: number;
  /** The text of prompt N, when there is one. */
  prompt?: string;
  /** Files changed from prompt N on, by path. */
  files: FileHistory[];
  /** bash calls made from prompt N on: what they changed is not tracked. */
  bashCalls: number;
}

/**
 * Reads the session file once, line by line, and gathers what `write` and `edit` changed from
 * prompt `to` on (`to` past the last prompt gathers nothing; the caller checks the range with
 * `prompts`). A `file_before` opens a change and the `file_change` of the same call closes it;
 * one left open is a call a crash cut off. Lines that hold no record are passed over.
 */
export async function sessionHistory(path: string, to: number): Promise<SessionHistory> {
  let prompts = 0;
  let prompt: string | undefined;
  let bashCalls = 0;
  const files = new Map<string, FileHistory>();
  for await (const line of fileLines(path)) {
    if (!line.bytes) continue;
    for (const record of parseLine(line.bytes.toString("utf8")).records) {
      if (record.type === "message" && record.message.role === "user") {
        prompts++;
        if (prompts === to) prompt = record.message.content;
      }
      if (prompts < to) continue;
      if (record.type === "message" && record.message.role === "assistant")
        bashCalls += record.message.toolCalls.filter((call) => call.name === "bash").length;
      else if (record.type === "file_before") {
        const { path: file, before, mode, unkept, toolCallId } = record;
        const known = files.get(file);
        const original = known?.original ?? {
          hash: before,
          mode,
          ...(unkept !== undefined && { unkept }),
        };
        files.set(file, { path: file, original, left: undefined, cutOff: toolCallId });
      } else if (record.type === "file_restore") {
        // What an earlier rewind put back is the file's latest state, as a change would be.
        const known = files.get(record.path);
        if (!known) continue;
        files.set(record.path, {
          path: record.path,
          original: known.original,
          left: { hash: record.after, mode: record.mode },
        });
      } else if (record.type === "file_change") {
        const known = files.get(record.path);
        if (known?.cutOff !== record.toolCallId) continue;
        files.set(record.path, {
          path: record.path,
          original: known.original,
          left: { hash: record.after, mode: record.mode },
        });
      }
    }
  }
  const sorted = [...files.values()].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
  return { prompts, ...(prompt !== undefined && { prompt }), files: sorted, bashCalls };
}
