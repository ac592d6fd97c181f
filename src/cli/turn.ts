import { describeError } from "../app/errors.js";
import { compactedLine } from "../app/notices.js";
import type { Stopper } from "../app/signals.js";
import { youngGeneration } from "../app/young-generation.js";
import type { ImageAttachment } from "../images.js";
import { errorKindOf, providerFailureOf } from "../providers/provider-error.js";
import { budgetStop } from "../runner/budget.js";
import type { TurnEvent, TurnStatus } from "../runner/events.js";
import type { SessionRunner } from "../runner/runner.js";
import { secretRedactor } from "../secrets.js";
import { scrubURLs } from "../url.js";
import { exitCodes } from "./args.js";
import type { Output, TurnSummary } from "./output.js";

/**
 * A call denied because the person closed the input (Ctrl-D at the question) ends its turn,
 * once its result is recorded: the question marks the call, the turn's listener sees its result.
 */
export class EndAfterCall {
  private callId: string | undefined;

  constructor(private readonly stopper: Pick<Stopper, "abortTurn">) {}

  mark(callId: string): void {
    this.callId = callId;
  }

  reset(): void {
    this.callId = undefined;
  }

  watch(event: TurnEvent): void {
    const { callId } = this;
    if (
      event.type === "message" &&
      event.message.role === "tool" &&
      event.message.toolCallId === callId
    )
      this.stopper.abortTurn();
  }
}

export interface CliTurnParts {
  runner: SessionRunner;
  stopper: Stopper;
  stderr: NodeJS.WritableStream;
  /** The output of a turn in the chosen format, made when the turn begins. */
  output: (signal: AbortSignal) => Output;
  endAfter: EndAfterCall;
  baseURL: string | undefined;
  debug: boolean;
  env: NodeJS.ProcessEnv;
}

/**
 * Runs one turn through the runner, rendering its events in the output, and ends the output with
 * the turn's summary; a failure is one line on stderr (its stack with `--debug`, redacted).
 */
export async function cliTurn(
  parts: CliTurnParts,
  prompt: string,
  images: readonly ImageAttachment[] = [],
): Promise<TurnStatus> {
  const { runner, stopper, stderr } = parts;
  const signal = stopper.beginTurn();
  const output = parts.output(signal);
  parts.endAfter.reset();
  try {
    const onEvent = (event: TurnEvent) => {
      parts.endAfter.watch(event);
      youngGeneration.watch(event);
      if (event.type === "compaction")
        stderr.write(`mini-agent: ${compactedLine(event.compaction)}\n`);
      output.event(event);
    };
    const result = await runner.runTurn(prompt, { signal, onEvent, images });
    const summary = (status: TurnSummary["status"], text: string) => ({
      status,
      text,
      sessionId: runner.sessionId,
      usage: runner.usage,
    });
    if (
      result.status !== "error" &&
      result.status !== "compaction_failed" &&
      result.status !== "budget_exceeded"
    ) {
      output.finish(summary(result.status, result.text));
      return result.status;
    }
    const budget = budgetStop(result.error);
    const message = budget?.message ?? describeError(result.error, parts.baseURL);
    output.finish({
      ...summary(budget ? "budget_exceeded" : "error", ""),
      error: message,
      ...(!budget && failureFields(result.error)),
    });
    stderr.write(`mini-agent: ${message}\n`);
    const { error } = result;
    if (!budget && parts.debug && error instanceof Error && error.stack)
      stderr.write(`${secretRedactor(parts.env)(scrubURLs(error.stack, parts.baseURL))}\n`);
    return result.status;
  } finally {
    stopper.endTurn();
  }
}

/** What a failed turn's `result` says of its failure: its kind, and the wait the provider asked for. */
function failureFields(error: unknown): Pick<TurnSummary, "errorKind" | "retryAfterMs"> {
  const errorKind = errorKindOf(error);
  const retryAfterMs = providerFailureOf(error)?.retryAfterMs;
  const waiting = errorKind === "rate_limited" || errorKind === "overloaded";
  return { errorKind, ...(waiting && retryAfterMs !== undefined && { retryAfterMs }) };
}

/** The outcomes of a turn that end the run, as each user line then not run is told. */
export const runEnds: Partial<Record<TurnStatus, string>> = {
  compaction_failed: "the compaction failed",
  budget_exceeded: "the token budget was reached",
};

export function statusCode(status: TurnStatus): number {
  switch (status) {
    case "completed":
      return exitCodes.done;
    case "aborted":
      return exitCodes.interrupted;
    case "max_turns":
      return exitCodes.maxTurns;
    case "error":
      return exitCodes.error;
    case "compaction_failed":
      return exitCodes.compactionFailed;
    case "budget_exceeded":
      return exitCodes.budgetExceeded;
  }
}
