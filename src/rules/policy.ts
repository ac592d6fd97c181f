import type { BeforeToolCall } from "../types.js";
import type { RulesContext } from "./decide.js";

/**
 * The rules as a `BeforeToolCall` with no one to ask: a `bash` call runs when the rules allow its
 * command and is denied, with the reason, when they deny it or would ask. Other tools run.
 */
export function rulesPolicy(context: RulesContext): BeforeToolCall {
  return async (call) => {
    if (call.name !== "bash") return { approved: true };
    const command = typeof call.input.command === "string" ? call.input.command : "";
    const { decideCommand } = await import("./decide.js");
    const verdict = await decideCommand(command, context);
    if (verdict.decision === "allow") return { approved: true };
    return { approved: false, reason: verdict.reason };
  };
}
