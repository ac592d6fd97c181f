import {
  bashSkippedNotice,
  imagesHeldBackNotice,
  mcpStatusNotice,
  retryNotice,
  unkeptNotice,
} from "../app/notices.js";
import type { OutputFormat } from "./args.js";
import { jsonLine, type Output, type Streams } from "./output.js";
import { streamJsonOutput } from "./stream-json.js";
import { textOutput } from "./terminal/text-output.js";

export function createOutput(format: OutputFormat, streams: Streams): Output {
  switch (format) {
    case "text":
      return textOutput(streams);
    case "json":
      return {
        event: (event) => {
          if (event.type === "retry") retryNotice(streams.stderr, event.notice);
          if (event.type === "mcp_status") mcpStatusNotice(streams.stderr, event.status);
          if (event.type === "file_before") unkeptNotice(streams.stderr, event.before);
          if (event.type === "bash_change") bashSkippedNotice(streams.stderr, event.change);
          if (event.type === "images_held_back") imagesHeldBackNotice(streams.stderr, event.count);
        },
        finish: (summary) => jsonLine(streams.stdout, summary),
      };
    case "stream-json":
      return streamJsonOutput(streams);
  }
}
