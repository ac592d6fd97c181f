import { isAbsolute, join } from "node:path";
import type {
  ContentBlock,
  SessionUpdate,
  StopReason,
  ToolCallContent,
  ToolCallLocation,
  ToolKind,
} from "@agentclientprotocol/sdk";
import { mcpStatusLine } from "../app/notices.js";
import { assertNever } from "../assert-never.js";
import { holdBack, IMAGE_GONE, readableData } from "../images.js";
import { mapStrings } from "../map-strings.js";
import type { McpStatus, TurnEvent, StopReason as TurnStop } from "../runner/events.js";
import { wellFormed } from "../text.js";
import type { PlanItem } from "../tools/plan.js";
import type { ImagePart, Message, ToolCall } from "../types.js";
import { visible } from "../visible.js";
import type { ChangeDiffs } from "./diffs.js";

/** What kind of work each built-in tool does, as an editor shows it; any other tool is `other`. */
const kinds: Record<string, ToolKind> = {
  read: "read",
  ls: "read",
  find: "search",
  grep: "search",
  write: "edit",
  edit: "edit",
  bash: "execute",
  plan: "think",
};

export function toolKind(name: string): ToolKind {
  return kinds[name] ?? "other";
}

/**
 * The editor's view of one turn's events: each `TurnEvent` becomes the `session/update`s it
 * means (none for the ones an editor has no place for: usage, approvals, retries). Calls are
 * announced when the round that declared them is committed, in progress when they start, and
 * completed or failed with their result; a `write` or `edit` result comes with the diff of the
 * change its call recorded (`diffs`; a replayed session has none: its files have moved on).
 */
export class UpdateMapper {
  private readonly calls = new Map<string, ToolCall>();
  /** The diff (or the line saying why there is none) of each call that changed a file. */
  private readonly changed = new Map<string, ToolCallContent>();

  constructor(
    private readonly workspace: string,
    private readonly diffs?: ChangeDiffs,
  ) {}

  /** The updates a turn event means, every string in them well-formed (strict parsers refuse a lone surrogate). */
  updates(event: TurnEvent): SessionUpdate[] {
    return this.eventUpdates(event).map(wellFormedUpdate);
  }

  private eventUpdates(event: TurnEvent): SessionUpdate[] {
    switch (event.type) {
      case "text":
        return [
          { sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.text } },
        ];
      case "thinking":
        return [
          { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.text } },
        ];
      case "tool_start":
        return [
          { sessionUpdate: "tool_call_update", toolCallId: event.call.id, status: "in_progress" },
        ];
      case "message":
        return this.message(event.message);
      case "mcp_status":
        return mcpNotice(event.status);
      case "plan":
        return [planUpdate(event.items)];
      case "file_change": {
        const content = this.diffs?.content(event.change);
        if (content) this.changed.set(event.change.toolCallId, content);
        return [];
      }
      case "session":
      case "images_refused":
      case "responses_switch":
      case "images_held_back":
      case "usage":
      case "approval":
      case "retry":
      case "compaction":
      case "turn_end":
      case "skills":
      case "hook":
      case "file_before":
      case "file_restore":
      case "bash_change":
      case "rewind":
      case "rewind_start":
      case "rewind_end":
        return [];
      default:
        return assertNever(event);
    }
  }

  /**
   * A message of a saved session, for `session/load`: what the live turn streamed (the prompt,
   * the thinking, the text) and what it announced (the calls and their results), in that order.
   */
  replay(message: Message): SessionUpdate[] {
    if (message.role === "user") {
      // With images, its parts: the text without the placeholder lines, and each image.
      const parts = message.parts ?? [{ type: "text", text: message.content }];
      return parts.map((part) =>
        wellFormedUpdate({
          sessionUpdate: "user_message_chunk",
          content: part.type === "text" ? { type: "text", text: part.text } : imageContent(part),
        }),
      );
    }
    if (message.role === "tool") return this.message(message).map(wellFormedUpdate);
    const thoughts = (message.reasoning ?? []).flatMap((part) =>
      part.type === "thinking" ? this.updates({ type: "thinking", text: part.text }) : [],
    );
    const text =
      message.content === "" ? [] : this.updates({ type: "text", text: message.content });
    return [...thoughts, ...text, ...this.message(message).map(wellFormedUpdate)];
  }

  private message(message: Message): SessionUpdate[] {
    if (message.role === "user") return [];
    if (message.role === "assistant") {
      return message.toolCalls.map((call) => {
        this.calls.set(call.id, call);
        return {
          sessionUpdate: "tool_call",
          toolCallId: call.id,
          title: title(call),
          kind: toolKind(call.name),
          status: "pending",
          locations: this.locations(call),
          rawInput: call.input,
        };
      });
    }
    this.calls.delete(message.toolCallId);
    const text: ToolCallContent = {
      type: "content",
      content: { type: "text", text: message.content },
    };
    const diff = this.changed.get(message.toolCallId);
    this.changed.delete(message.toolCallId);
    return [
      {
        sessionUpdate: "tool_call_update",
        toolCallId: message.toolCallId,
        status: message.isError ? "failed" : "completed",
        content: diff ? [diff, text] : [text],
        rawOutput: { content: message.content, isError: message.isError },
      },
    ];
  }

  private path(call: ToolCall): string | undefined {
    const path = call.input.path;
    if (typeof path !== "string" || path === "") return undefined;
    return isAbsolute(path) ? path : join(this.workspace, path);
  }

  private locations(call: ToolCall): ToolCallLocation[] {
    const path = this.path(call) ?? (toolKind(call.name) === "search" ? this.workspace : undefined);
    return path === undefined ? [] : [{ path }];
  }
}

/** The model's plan as the protocol's `plan` update: the whole list, each entry of medium priority. */
function planUpdate(items: readonly PlanItem[]): SessionUpdate {
  const entries = items.map(({ text, status }) => ({
    content: text,
    priority: "medium" as const,
    status,
  }));
  return { sessionUpdate: "plan", entries };
}

/**
 * A server skipped, failed or ended is said in the conversation, as the terminal says it on
 * stderr: the editor has no other place for it. Starting, ready and restarting are not news.
 */
function mcpNotice(status: McpStatus): SessionUpdate[] {
  if (status.state !== "untrusted" && status.state !== "failed" && status.state !== "exited")
    return [];
  const text = `mini-agent: ${mcpStatusLine(status)}\n\n`;
  return [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }];
}

/** An update with every string in it well-formed: a lone surrogate becomes U+FFFD. */
function wellFormedUpdate(update: SessionUpdate): SessionUpdate {
  return mapStrings(update, wellFormed);
}

/**
 * A call's title: the tool and what it works on, control and bidi characters made visible (an
 * editor shows it as a line of text, where an escape sequence or a newline could hide a part).
 */
function title(call: ToolCall): string {
  return visible(rawTitle(call));
}

function rawTitle(call: ToolCall): string {
  const { input } = call;
  const what =
    typeof input.command === "string"
      ? input.command
      : typeof input.path === "string"
        ? input.path
        : typeof input.pattern === "string"
          ? input.pattern
          : "";
  return what === "" ? call.name : `${call.name} ${what}`;
}

/**
 * The protocol's stop reason for why a turn stopped, one to one where the protocol has one; the
 * token budget is its `max_tokens`. A turn that failed is not a stop reason: the caller answers
 * it with an error (`undefined` here).
 */
export function stopReason(stop: TurnStop): StopReason | undefined {
  switch (stop) {
    case "end_turn":
    case "max_tokens":
    case "refusal":
    case "cancelled":
      return stop;
    case "max_turns":
      return "max_turn_requests";
    case "budget_exceeded":
      return "max_tokens";
    case "error":
      return undefined;
    default:
      return assertNever(stop);
  }
}

/** An image of a saved prompt as an editor shows it; its bytes gone, a line that says so. */
function imageContent(part: ImagePart): ContentBlock {
  const data = readableData(part);
  return data === undefined
    ? { type: "text", text: holdBack("", part, IMAGE_GONE).line }
    : { type: "image", mimeType: part.mediaType, data };
}
