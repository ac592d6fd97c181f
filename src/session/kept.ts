import type { Compaction } from "../compaction/record.js";
import type { StoredMessage } from "./records.js";

/**
 * The messages since the last compaction, as a file is read. `firstKept` counts user and
 * assistant messages from the start of the conversation; a compaction that points before the
 * last one or past the messages read so far does not fit this file and is not applied.
 */
export class KeptHistory {
  messages: StoredMessage[] = [];
  compaction: Compaction | undefined;
  /** The number of the first user or assistant message in `messages`, and of the next one. */
  private first = 0;
  private next = 0;

  add(message: StoredMessage): void {
    this.messages.push(message);
    if (message.role !== "tool") this.next++;
  }

  compact(record: Compaction & { type: "compaction" }): boolean {
    if (record.firstKept < this.first || record.firstKept > this.next) return false;
    let number = this.first;
    let at = 0;
    for (; at < this.messages.length; at++) {
      const message = this.messages[at] as StoredMessage;
      if (message.role === "tool") continue;
      if (number === record.firstKept) break;
      number++;
    }
    const { type: _type, ...compaction } = record;
    this.messages = this.messages.slice(at);
    this.first = record.firstKept;
    this.compaction = compaction;
    return true;
  }
}
