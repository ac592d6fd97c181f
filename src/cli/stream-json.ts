import { jsonLine, type Output, type Streams } from "./output.js";
import { retryNotice } from "./retry.js";

/**
 * `--output-format stream-json`: one JSON line per event on stdout. A `retry` event tells a
 * consumer to drop the `text` events since the last event of another type; a compaction is a
 * `compaction` event (the one line on stderr is the CLI's).
 */
export function streamJsonOutput({ stdout, stderr }: Streams): Output {
  const line = (value: unknown) => jsonLine(stdout, value);
  return {
    event(event) {
      if (event.type === "text" || event.type === "thinking") line(event);
      else if (event.type === "tool_start") line({ type: "tool_start", id: event.call.id });
      else if (event.message.role === "assistant") {
        for (const call of event.message.toolCalls) line({ type: "tool_call", ...call });
      } else if (event.message.role === "tool") {
        const { toolCallId: id, content, isError } = event.message;
        line({ type: "tool_result", id, content, isError });
      }
    },
    retry(notice) {
      line({ type: "retry", ...notice });
      retryNotice(stderr, notice);
    },
    compaction: ({ trigger, count, tokensBefore, tokensAfter }) =>
      line({ type: "compaction", trigger, count, tokensBefore, tokensAfter }),
    finish: (summary) => line({ type: "result", ...summary }),
  };
}
