import { setImmediate as handled } from "node:timers/promises";
import type { AgentContext, PermissionOption } from "@agentclientprotocol/sdk";
import type { Answer, Question } from "../app/policy.js";
import { mapStrings } from "../map-strings.js";
import { wellFormed } from "../text.js";
import type { ToolCall } from "../types.js";
import { visible } from "../visible.js";
import { toolKind } from "./updates.js";

export const cancelledReason = "the editor cancelled the turn before this call was answered";
const unoffered = "the editor answered with an option it was not offered";

/** Where a question goes: the editor's connection and session, how long to wait. */
export interface PermissionParts {
  client: AgentContext;
  sessionId: string;
  timeoutMs: number;
}

/**
 * The rules' "ask" as `session/request_permission`: allow once, always allow (when the rules
 * can save the exact rule the terminal's "always" saves), reject once. A cancelled turn or no
 * answer in time is a denial saying so; the question never outlives its turn. An allow sent
 * before the editor's `session/cancel` but read with it is the cancel's: the call does not run,
 * so it is recorded as cancelled, not as the user's approval.
 */
export async function askEditor(
  parts: PermissionParts,
  call: ToolCall,
  question: Question,
  signal: AbortSignal,
): Promise<Answer> {
  // Leaving the sandbox is asked every time: no "always" is offered, nor taken.
  const always = question.save.length > 0 && question.outside === undefined;
  const options: PermissionOption[] = [
    question.outside
      ? { optionId: "allow_once", name: "Allow once, outside the sandbox", kind: "allow_once" }
      : { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
    ...(always
      ? [{ optionId: "allow_always", name: "Always allow", kind: "allow_always" } as const]
      : []),
    { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  ];
  // An outside question's reason says first that the command leaves the sandbox.
  const title = `${call.name}: ${question.reason}`;
  const seconds = Math.round(parts.timeoutMs / 1000);
  const timedOut: Answer = {
    deny: `no answer from the editor within ${seconds} s; the call did not run`,
    by: "approval-timeout",
  };
  const cancelled: Answer = { deny: cancelledReason, by: "cancelled" };
  const withdrawn: Answer = {
    deny: "the editor withdrew the question; the call did not run",
    by: "cancelled",
  };
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    const ended = new Promise<Answer>((resolve) => {
      timer = setTimeout(() => {
        resolve(timedOut);
        stop.abort();
      }, parts.timeoutMs);
      stop.signal.addEventListener("abort", () => resolve(signal.aborted ? cancelled : timedOut));
    });
    const asked = parts.client
      .request(
        "session/request_permission",
        {
          sessionId: parts.sessionId,
          toolCall: {
            toolCallId: call.id,
            title: visible(title),
            kind: toolKind(call.name),
            status: "pending",
            rawInput: mapStrings(call.input, wellFormed),
          },
          options,
        },
        { cancellationSignal: stop.signal, stopWaitingOnCancel: true },
      )
      .then(({ outcome }): Answer => {
        if (outcome.outcome === "cancelled") return signal.aborted ? cancelled : withdrawn;
        if (outcome.optionId === "allow_once") return "yes";
        if (outcome.optionId === "allow_always" && always) return "always";
        if (outcome.optionId === "reject_once") return "no";
        return { deny: `${unoffered}; the call did not run`, by: "editor-error" };
      });
    if (signal.aborted) return cancelled;
    // A request that failed (the editor answered with an error) is a denial: fail closed.
    const answer = await Promise.race([
      asked.catch((): Answer => ({ deny: "the editor could not answer", by: "editor-error" })),
      ended,
    ]);
    if (answer !== "yes" && answer !== "always") return answer;
    // The messages read with the answer (a `session/cancel` right behind it) are handled first.
    await handled();
    return signal.aborted ? cancelled : answer;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}
