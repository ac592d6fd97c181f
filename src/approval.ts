import type { Approval, ToolCall } from "./types.js";

/** The reason the model (and through it the user) sees when bash is denied by default. */
export const bashDeniedReason =
  "bash is denied by default: run mini-agent with --allow-bash to let the agent run shell commands";

/** The default policy: read and edit tools run, `bash` is denied with a reason saying how to allow it. */
export const denyBashByDefault = (call: ToolCall): Approval =>
  call.name === "bash" ? { approved: false, reason: bashDeniedReason } : { approved: true };
