import { assertNever } from "../assert-never.js";
import type { SessionHeader, SessionRecord } from "../session/records.js";
import type { SessionStore } from "../session/store.js";
import type { TurnEvent } from "./events.js";

/** What renders a turn's events: a terminal, a JSON stream, an editor. */
export type TurnListener = (event: TurnEvent) => void;

/**
 * The one path of a turn's events. Each event that is a session record (a message, an approval,
 * a request's usage, a retry, a compaction) is written to the session first, so the file holds it
 * before the loop goes on (an assistant round is on disk before its tools run); then the listener
 * of the running turn sees it. Without a store nothing is written and events are only passed on.
 */
export class Journal {
  private listener: TurnListener | undefined;
  /** The last record could not be written: the file is left as it is until a write succeeds. */
  writeFailed = false;

  constructor(private readonly store?: SessionStore) {}

  /** The session's id, once its first record made it. */
  get sessionId(): string | undefined {
    return this.store?.id;
  }

  /** The session file's path, once its first record made it. */
  get sessionPath(): string | undefined {
    return this.store?.path;
  }

  /** Hands every event to `listener` until the returned function is called. */
  listen(listener: TurnListener | undefined): () => void {
    this.listener = listener;
    return () => {
      if (this.listener === listener) this.listener = undefined;
    };
  }

  async record(event: TurnEvent): Promise<void> {
    const record = recordOf(event);
    if (record && this.store) {
      this.writeFailed = true;
      await this.store.record(record);
      this.writeFailed = false;
    }
    this.listener?.(event);
  }

  async close(): Promise<void> {
    await this.store?.close();
  }
}

/** The session record an event is, if it is one: the writer's one case per kind. */
function recordOf(event: TurnEvent): Exclude<SessionRecord, SessionHeader> | undefined {
  switch (event.type) {
    case "message":
      return { type: "message", message: event.message };
    case "approval":
      return { type: "approval", ...event.decision };
    case "usage":
      return { type: "usage", ...event.usage };
    case "retry":
      return { type: "retry", ...event.notice };
    case "compaction":
      return { type: "compaction", ...event.compaction };
    case "turn_end":
      return { type: "turn_end", ...event.end };
    case "skills":
      return { type: "skills", ...event.skills };
    case "hook":
      return { type: "hook", ...event.run };
    case "images_refused":
      return { type: "images_refused", ...event.refusal };
    case "responses_switch":
      return { type: "responses_switch", ...event.change };
    case "file_before":
      return { type: "file_before", ...event.before };
    case "file_change":
      return { type: "file_change", ...event.change };
    case "file_restore":
      return { type: "file_restore", ...event.restore };
    case "bash_change":
      return { type: "bash_change", ...event.change };
    case "rewind":
      return { type: "rewind", to: event.to };
    case "rewind_start":
      return { type: "rewind_start", to: event.to, files: true, conversation: true };
    case "rewind_end":
      return { type: "rewind_end", to: event.to };
    case "text":
    case "thinking":
    case "tool_start":
    case "session":
    case "mcp_status":
    case "images_held_back":
    case "plan":
      return undefined;
    default:
      return assertNever(event);
  }
}
