import type { FileHandle } from "node:fs/promises";
import { resolve } from "node:path";
import { Sha256 } from "../crypto.js";
import { realOr } from "../paths.js";
import type { Message } from "../types.js";
import { pause } from "./define.js";
import { limits } from "./limits.js";

/**
 * What the agent saw of a file's content: the sha256 of its bytes, and one 32-bit hash per line
 * (its bytes with the newline; up to `limits.seenLines` lines, else none) that say which lines
 * changed since, without keeping the text.
 */
export interface SeenContent {
  hash: string;
  lines: Uint32Array | undefined;
}

/**
 * What the agent has seen of each file, by real path: the content hash recorded by `read` (a
 * ranged read too: the whole file as it was then) and by its own `write` and `edit` (what they
 * wrote). `edit` and `write` refuse an existing file whose current content is not the one
 * recorded here, so the agent never overwrites what it has not seen: a file it never read, or
 * one that the user, a formatter or another process changed since. Only the bytes count, not
 * the modification time.
 *
 * `createWorkspaceTools` makes a fresh one unless given one. Whoever changes what the model
 * remembers says so: `clear("compaction")` after a compaction (the model has seen nothing since),
 * and `recall(history, …)` for a history the model goes on from (a resumed session, a rewind):
 * what its tool results saw (`ToolResult.seen`) is seen again, so an unchanged file needs no new
 * read. A refusal of a file not seen says since when (`unseen`).
 */
export class SeenFiles {
  private readonly files = new Map<string, SeenContent>();
  private cut: SeenCut | undefined;
  private older = false;
  /** The last file recorded, as a new object each time: what a call just saw (`withSeenResults`). */
  latest: { path: string; content: SeenContent } | undefined;

  /** The content last seen of the file at real path `path`, if any. */
  get(path: string): SeenContent | undefined {
    return this.files.get(path);
  }

  /** Records that the agent has seen `content` at real path `path`. */
  record(path: string, content: SeenContent): void {
    this.files.set(path, content);
    this.latest = { path, content };
  }

  /**
   * Forgets every file: each must be read again before it is edited or replaced. `cut` says what
   * took the model's memory of them (a compaction), so a refusal says since when; without it,
   * nothing was ever seen in this session.
   */
  clear(cut?: SeenCut): void {
    this.files.clear();
    this.cut = cut;
    this.older = false;
  }

  /**
   * Forgets every file, then takes as seen what the successful tool results of `history` saw
   * (their `seen`, a path relative to the workspace `root`, its real path). `cut` says what last took earlier
   * messages out of `history`, if anything did. A `read`, `write` or `edit` result without `seen`
   * comes from a session an older version wrote: what it saw is not known, and refusals say so.
   */
  recall(history: readonly Message[], root: string, cut?: SeenCut): void {
    this.clear(cut);
    const names = new Map<string, string>();
    let realRoot: string | undefined;
    for (const message of history) {
      if (message.role === "assistant")
        for (const call of message.toolCalls) names.set(call.id, call.name);
      if (message.role !== "tool" || message.isError) continue;
      if (!message.seen) {
        this.older ||= SEEING_TOOLS.has(names.get(message.toolCallId) ?? "");
        continue;
      }
      realRoot ??= realOr(root);
      this.files.set(resolve(realRoot, message.seen.path), {
        hash: message.seen.sha256,
        lines: undefined,
      });
    }
  }

  /**
   * Since when a file not seen has not been read, as a refusal says it, and whether this is a
   * session an older version wrote, which kept no record of what was read.
   */
  unseen(): { since: string; olderSession: boolean } {
    const since =
      this.cut === undefined
        ? "in this session"
        : `since the conversation was ${this.cut === "compaction" ? "compacted" : "rewound"}`;
    return { since, olderSession: this.older };
  }
}

/** The tools whose successful results say what they saw of their file (`withSeenResults`). */
export const SEEING_TOOLS: ReadonlySet<string> = new Set(["read", "write", "edit"]);

/** What took the model's memory of earlier messages: a compaction, or a rewind. */
export type SeenCut = "compaction" | "rewind";

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Folds bytes, given a piece at a time, into a `SeenContent`. */
export class Digest {
  private readonly sha = new Sha256();
  private lines: number[] | undefined = [];
  private line = FNV_OFFSET;
  /** The last line has bytes but no newline yet. */
  private open = false;
  /** Bytes folded in so far. */
  bytes = 0;

  update(piece: Uint8Array): void {
    this.sha.update(piece);
    this.bytes += piece.length;
    const lines = this.lines;
    if (!lines) return;
    let hash = this.line;
    for (let at = 0; at < piece.length; at++) {
      const byte = piece[at] ?? 0;
      hash = Math.imul(hash ^ byte, FNV_PRIME) >>> 0;
      if (byte === 10) {
        lines.push(hash);
        hash = FNV_OFFSET;
        if (lines.length > limits.seenLines) {
          this.lines = undefined;
          return;
        }
      }
    }
    this.line = hash;
    if (piece.length > 0) this.open = piece[piece.length - 1] !== 10;
  }

  finish(): SeenContent {
    const lines = this.lines;
    if (lines && this.open) lines.push(this.line);
    const tooMany = !lines || lines.length > limits.seenLines;
    return { hash: this.sha.digest(), lines: tooMany ? undefined : Uint32Array.from(lines) };
  }
}

/** Bytes hashed between two checks of the abort signal. */
const PIECE = 1 << 20;

/** The `SeenContent` of bytes in memory; yields between megabytes, so an abort stops it. */
export async function digestBytes(bytes: Uint8Array, signal?: AbortSignal): Promise<SeenContent> {
  const digest = new Digest();
  for (let at = 0; at < bytes.length; at += PIECE) {
    digest.update(bytes.subarray(at, at + PIECE));
    if (at + PIECE < bytes.length) await pause(signal);
  }
  return digest.finish();
}

/**
 * Reads an open file from `digest.bytes` to its end into `digest` (a fresh one: the whole file)
 * and returns what it makes. Honours `signal` between reads.
 */
export async function digestFile(
  handle: FileHandle,
  signal?: AbortSignal,
  digest = new Digest(),
): Promise<SeenContent> {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    if (signal?.aborted) throw new Error("aborted");
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, digest.bytes);
    if (bytesRead === 0) return digest.finish();
    digest.update(buffer.subarray(0, bytesRead));
  }
}
