import type { BeforeToolCall, Tool, ToolCall } from "../types.js";
import type { RunHooks } from "./hooks.js";

/**
 * The hooks through the two seams they need, and no other:
 * - before a call, a `BeforeToolCall` over the policy (`hookedPolicy`): the `PreToolUse` hooks
 *   run first; a block (exit 2, `deny`, a failure) denies the call and the policy is not asked;
 *   an `allow` or `ask` is handed to the policy (`HookOpinions`), which alone decides what it
 *   lifts: an allow skips only a question an allow rule could skip, never a deny rule, a mode or
 *   a protected file; an ask turns a call it would run unasked into a question.
 * - after a call, a `Tool` decorator (`hookedTools`): the `PostToolUse` hooks run after the tool,
 *   and what they say is added to the result the model reads.
 */

/** What a `PreToolUse` hook said of a call that the policy weighs: allow or ask, by whom. */
export interface HookOpinion {
  decision: "allow" | "ask";
  /** The hook, as the decision record names it (`hook:PreToolUse …`). */
  by: string;
  reason?: string;
}

/** The opinions of the calls being decided, shared by `hookedPolicy` and the policy. */
export class HookOpinions {
  private readonly opinions = new WeakMap<ToolCall, HookOpinion>();

  of(call: ToolCall): HookOpinion | undefined {
    return this.opinions.get(call);
  }

  set(call: ToolCall, opinion: HookOpinion | undefined): void {
    if (opinion === undefined) this.opinions.delete(call);
    else this.opinions.set(call, opinion);
  }
}

export interface HookedPolicyOptions {
  hooks: RunHooks;
  policy: BeforeToolCall;
  opinions: HookOpinions;
  /** Records a call the hooks blocked (the policy records the others). */
  record: (decision: {
    toolCallId: string;
    tool: string;
    approved: false;
    by: string;
  }) => Promise<void>;
  /** The running turn's abort signal: Ctrl-C ends a hook that runs. */
  signal: () => AbortSignal | undefined;
}

export function hookedPolicy(options: HookedPolicyOptions): BeforeToolCall {
  const { hooks, policy, opinions } = options;
  return async (call) => {
    const verdict = await hooks.pre(call, options.signal());
    if (verdict.kind === "block") {
      await options.record({
        toolCallId: call.id,
        tool: call.name,
        approved: false,
        by: verdict.by,
      });
      return { approved: false, reason: verdict.reason };
    }
    opinions.set(
      call,
      verdict.kind === "none"
        ? undefined
        : {
            decision: verdict.kind,
            by: verdict.by,
            ...(verdict.reason && { reason: verdict.reason }),
          },
    );
    try {
      return await policy(call);
    } finally {
      opinions.set(call, undefined);
    }
  };
}

/** Each tool with the `PostToolUse` hooks after it (and `PreToolUse` context added to its result). */
export function hookedTools(tools: readonly Tool[], hooks: RunHooks): Tool[] {
  return tools.map((tool) => ({
    spec: tool.spec,
    execute: async (input, signal) =>
      hooks.post(tool.spec.name, input, await tool.execute(input, signal), signal),
  }));
}
