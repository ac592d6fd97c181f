import { CompactingClient } from "../compaction/client.js";
import { type Compaction, CompactionError } from "../compaction/record.js";
import type { ModelClient, ModelRequest } from "../types.js";
import { describeError } from "./errors.js";
import type { Output } from "./output.js";
import type { Stopper } from "./signals.js";

/** The context window assumed for Claude models when `--context-window` is not given. */
export const claudeContextWindow = 200_000;

/**
 * `--context-window N`, else 200 000 for a model whose name says Claude, else none: then the
 * conversation is compacted for size only once the provider has refused a request as too long
 * and named its maximum.
 */
export function contextWindowFor(model: string, flag: number | undefined): number | undefined {
  return flag ?? (/claude/i.test(model) ? claudeContextWindow : undefined);
}

/** `/compact` or `/compact what to keep`: the instructions, or undefined when `line` is not it. */
export function compactCommand(line: string): { instructions: string } | undefined {
  const match = /^\/compact(?:\s+([\s\S]*))?$/.exec(line.trim());
  return match ? { instructions: match[1]?.trim() ?? "" } : undefined;
}

export interface CompactionWiringOptions {
  inner: ModelClient;
  contextWindow: number | undefined;
  resume: Compaction | undefined;
  /** Writes the compaction record; awaited before the compaction takes effect. */
  record: (compaction: Compaction) => Promise<void>;
  stderr: NodeJS.WritableStream;
  baseURL: string | undefined;
}

/**
 * The CLI's compaction: the compacting client around the provider's, each compaction recorded in
 * the session, then shown as one line on stderr and, in `stream-json`, as a `compaction` event of
 * the turn's output.
 */
export class CliCompaction {
  readonly client: CompactingClient;
  private output: Output | undefined;

  constructor(private readonly options: CompactionWiringOptions) {
    this.client = new CompactingClient(options.inner, {
      ...(options.contextWindow !== undefined && { contextWindow: options.contextWindow }),
      ...(options.resume && { resume: options.resume }),
      onCompaction: async (compaction) => {
        await options.record(compaction);
        options.stderr.write(`mini-agent: ${compactedLine(compaction)}\n`);
        this.output?.compaction(compaction);
      },
    });
  }

  /** Where the `compaction` event of the running turn goes. */
  showIn(output: Output): void {
    this.output = output;
  }

  /**
   * `/compact [instructions]` at the prompt: compacts now, as a turn that Ctrl-C interrupts. A
   * failure is one line and changes nothing; the session goes on.
   */
  async command(
    instructions: string,
    request: Omit<ModelRequest, "signal">,
    stopper: Pick<Stopper, "beginTurn" | "endTurn">,
  ): Promise<void> {
    const signal = stopper.beginTurn();
    try {
      await this.client.compact({ ...request, signal }, instructions || undefined);
    } catch (error) {
      const { stderr, baseURL } = this.options;
      stderr.write(
        signal.aborted ? "interrupted\n" : `mini-agent: ${describeError(error, baseURL)}\n`,
      );
    } finally {
      stopper.endTurn();
    }
  }
}

/** `compacted the conversation: 182k → 24k tokens (3 compactions)`. */
export function compactedLine(compaction: Compaction): string {
  const count = `${compaction.count} compaction${compaction.count === 1 ? "" : "s"}`;
  return `compacted the conversation: ${tokens(compaction.tokensBefore)} → ${tokens(compaction.tokensAfter)} tokens (${count})`;
}

const tokens = (n: number) => (n < 1000 ? String(n) : `${Math.round(n / 1000)}k`);

export { CompactionError };
