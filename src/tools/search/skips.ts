import { limits } from "../limits.js";

/**
 * Why a search left an entry out. One odd entry (a dangling link, a FIFO, a folder that vanished,
 * an ignore file it will not read) is skipped and counted, never the reason a result is lost.
 */
const reasons = {
  "dangling link": ["dangling link", "dangling links"],
  "link outside": ["link outside the workspace", "links outside the workspace"],
  "link into state": ["link into the state folder", "links into the state folder"],
  "moved outside": [
    "entry found outside the workspace when opened (a folder on its path was swapped)",
    "entries found outside the workspace when opened (folders on their paths were swapped)",
  ],
  "special file": ["special file", "special files"],
  "unreadable file": ["unreadable file", "unreadable files"],
  "unreadable folder": ["unreadable folder", "unreadable folders"],
  "irregular ignore file": [
    ".gitignore not read (a link or special file)",
    ".gitignore files not read (links or special files)",
  ],
  "oversized ignore file": [
    `.gitignore over ${limits.ignoreFileBytes / 1024} KiB not read`,
    `.gitignore files over ${limits.ignoreFileBytes / 1024} KiB not read`,
  ],
} as const;

export type SkipReason = keyof typeof reasons;

/** Counts of skipped entries by reason, shared by one tool call and the walk it runs. */
export class Skips {
  private readonly counts = new Map<SkipReason, number>();

  add(reason: SkipReason): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
  }

  /** `[skipped 3 entries: 1 dangling link, 2 special files]`, or undefined when none were. */
  note(): string | undefined {
    let total = 0;
    const parts: string[] = [];
    for (const [reason, [one, many]] of Object.entries(reasons) as [
      SkipReason,
      readonly [string, string],
    ][]) {
      const count = this.counts.get(reason) ?? 0;
      if (count === 0) continue;
      total += count;
      parts.push(`${count} ${count === 1 ? one : many}`);
    }
    if (total === 0) return undefined;
    return `[skipped ${total} ${total === 1 ? "entry" : "entries"}: ${parts.join(", ")}]`;
  }
}
