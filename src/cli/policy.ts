import { denyBashByDefault } from "../approval.js";
import type { Approval, BeforeToolCall, ToolCall } from "../types.js";

/**
 * How the CLI decides on `bash`: `allow` (--allow-bash) or `ask` the person at the terminal;
 * with no terminal, asking means `denyBashByDefault`. Every other tool follows
 * `denyBashByDefault`, which approves it.
 */
export type BashMode = "allow" | "ask";
/** `closed`: the person closed the input (Ctrl-D) instead of answering. */
export type Answer = "yes" | "no" | "always" | "closed";

export interface Decision {
  toolCallId: string;
  tool: string;
  approved: boolean;
  /** The rule or person that decided: default-policy, allow-bash-flag, user, user-always, no-terminal. */
  by: string;
}

export interface CliPolicyOptions {
  bash: BashMode;
  /** Asks the person at the terminal; absent when there is none. */
  ask?: (call: ToolCall) => Promise<Answer>;
  /** Called with every decision before the call runs (the CLI writes it to the session). */
  record: (decision: Decision) => Promise<void>;
}

export const userDeniedReason = "the user denied this call";
export const inputClosedReason =
  "the user closed the input (Ctrl-D) instead of answering; the call did not run";

export function cliPolicy(options: CliPolicyOptions): BeforeToolCall {
  let bash = options.bash;
  let bashAllowedBy = "allow-bash-flag";

  async function decide(call: ToolCall): Promise<[Approval, string]> {
    if (call.name !== "bash") return [denyBashByDefault(call), "default-policy"];
    if (bash === "allow") return [{ approved: true }, bashAllowedBy];
    if (!options.ask) return [denyBashByDefault(call), "no-terminal"];
    const answer = await options.ask(call);
    if (answer === "always") {
      bash = "allow";
      bashAllowedBy = "user-always";
      return [{ approved: true }, "user-always"];
    }
    if (answer === "closed") return [{ approved: false, reason: inputClosedReason }, "user"];
    return answer === "yes"
      ? [{ approved: true }, "user"]
      : [{ approved: false, reason: userDeniedReason }, "user"];
  }

  return async (call) => {
    const [approval, by] = await decide(call);
    await options.record({ toolCallId: call.id, tool: call.name, approved: approval.approved, by });
    return approval;
  };
}
