import {
  bashSkippedNotice,
  imagesHeldBackNotice,
  mcpStatusNotice,
  retryNotice,
  unkeptNotice,
} from "../app/notices.js";
import { assertNever } from "../assert-never.js";
import { encodeLine } from "../session/encode.js";
import type { Output, Streams } from "./output.js";
import { type OutputEvent, STREAM_JSON_VERSION } from "./stream-json-protocol.js";

/**
 * One protocol line on `stdout`: the version first, then the event. U+0085, U+2028 and U+2029 are
 * escaped (`JSON.stringify` leaves them as they are, and some JSON-lines readers end a line at
 * them), so every reader sees one JSON object per line. Written as the line's bytes, made
 * without a JSON string of the whole (`encodeLine`): the `result` line of a long answer holds the
 * answer once more, not three times.
 */
export function streamJsonLine(stdout: NodeJS.WritableStream, event: OutputEvent): void {
  stdout.write(encodeLine({ version: STREAM_JSON_VERSION, ...event }, "", undefined, escapeBreaks));
}

const escapeBreaks = (json: string) =>
  json.replace(LINE_BREAKS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** The characters other than `\n` that some line readers break lines at; JSON escapes the rest. */
const LINE_BREAKS = /[\u0085\u2028\u2029]/g;

/**
 * `--output-format stream-json`: one protocol line per event on stdout, as
 * `stream-json-protocol.ts` defines them. A `retry` event tells a consumer to drop the `text` and
 * `thinking` events since the last event of any other type; a compaction is a `compaction` event (the one
 * line on stderr is the CLI's). The turn's `result` lists the calls denied during it.
 */
export function streamJsonOutput({ stdout, stderr }: Streams): Output {
  const line = (event: OutputEvent) => streamJsonLine(stdout, event);
  const denied: { id: string; name: string; by: string }[] = [];
  return {
    event(event) {
      switch (event.type) {
        case "text":
        case "thinking":
          return line({ type: event.type, text: event.text });
        case "tool_start":
          return line({ type: "tool_start", id: event.call.id });
        case "message": {
          const { message } = event;
          if (message.role === "assistant") {
            for (const call of message.toolCalls) line({ type: "tool_call", ...call });
          } else if (message.role === "tool") {
            const { toolCallId: id, content, isError } = message;
            line({ type: "tool_result", id, content, isError });
          }
          return;
        }
        case "session":
          return line({ type: "session", ...event.session });
        case "approval": {
          const { toolCallId: id, tool: name, approved, by } = event.decision;
          if (!approved) denied.push({ id, name, by });
          return line({ type: "approval", id, name, approved, by });
        }
        case "usage":
          return line({ type: "usage", usage: event.usage });
        case "retry":
          line({ type: "retry", ...event.notice });
          retryNotice(stderr, event.notice);
          return;
        case "compaction": {
          const { trigger, count, tokensBefore, tokensAfter } = event.compaction;
          return line({ type: "compaction", trigger, count, tokensBefore, tokensAfter });
        }
        case "mcp_status":
          line({ type: "mcp_status", ...event.status });
          mcpStatusNotice(stderr, event.status);
          return;
        case "turn_end":
        // The `result` line that ends the turn says how it ended (the refusal is its error).
        case "images_refused":
        // The client's notice, on stderr, said it.
        case "responses_switch":
          return;
        case "images_held_back":
          imagesHeldBackNotice(stderr, event.count);
          return;
        case "skills":
          // For the session's reader (the export); a program reads the catalog with `mini-agent
          // skills`, and sees the model read a SKILL.md in its `tool_call` line.
          return;
        case "hook":
          // For the session's reader; what a hook decided reaches the program in the call's
          // approval and result lines.
          return;
        case "file_before":
          // Told by the file_change line after the call; a change that cannot be undone is said.
          return unkeptNotice(stderr, event.before);
        case "file_change": {
          const { toolCallId: id, path, before, after, mode } = event.change;
          return line({ type: "file_change", id, path, before, after, mode });
        }
        case "bash_change": {
          // The states a rewind puts back are the session's, not the protocol's.
          // A call the workspace was read-only for changed nothing there.
          const { toolCallId: id, paths, more, skipped, readOnly, leftOut } = event.change;
          const unknown = skipped !== undefined && !readOnly ? { skipped } : {};
          line({
            type: "bash_change",
            id,
            paths,
            ...(more !== undefined && { more }),
            ...unknown,
            ...(leftOut !== undefined && { leftOut }),
          });
          return bashSkippedNotice(stderr, event.change);
        }
        case "plan":
          return line({ type: "plan", items: event.items });
        case "file_restore":
        case "rewind":
        case "rewind_start":
        case "rewind_end":
          return;
        default:
          return assertNever(event);
      }
    },
    finish: (summary) => line({ type: "result", ...summary, denied: [...denied] }),
  };
}
