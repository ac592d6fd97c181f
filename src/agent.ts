import {
  checkApproval,
  checkedCall,
  checkedReasoning,
  checkResult,
  type RoundCall,
} from "./agent-guards.js";
import { receipts, toolError } from "./receipts.js";
import { StreamedText } from "./streamed-text.js";
import type {
  Approval,
  BeforeToolCall,
  Message,
  ModelClient,
  Reasoning,
  Tool,
  ToolCall,
  ToolResult,
} from "./types.js";

/** What the loop reports while it runs, in order. Awaited, so a sink can persist before tools run. */
export type AgentEvent =
  /** A piece of assistant text as it streams. */
  | { type: "text"; text: string }
  /** A piece of the model's reasoning as it streams (kept in the round's message once whole). */
  | { type: "thinking"; text: string }
  /** A message appended to the history: the assistant round, then one per call result. */
  | { type: "message"; message: Message }
  /** An approved, known tool is about to run. */
  | { type: "tool_start"; call: ToolCall };

export interface RunAgentOptions {
  client: ModelClient;
  tools: readonly Tool[];
  system: string;
  /** The history so far, ending with the new user message. Not mutated. */
  messages: Message[];
  beforeToolCall?: BeforeToolCall;
  signal?: AbortSignal;
  /** Model rounds allowed in this run; when the last one still asks for tools, `max_turns`. */
  maxTurns?: number;
  /** Called for every event and awaited. If it throws, the run stops with that error. */
  onEvent?: (event: AgentEvent) => void | Promise<void>;
}

/**
 * - `completed`: the model answered without calling tools; `text` is its answer.
 * - `aborted`: the signal fired; every declared call has a receipt.
 * - `max_turns`: the turn limit was reached after a round that called tools.
 * In every case `messages` is a valid history to send back to the provider.
 */
export interface RunAgentResult {
  status: "completed" | "aborted" | "max_turns";
  text: string;
  messages: Message[];
}

export async function runAgent(options: RunAgentOptions): Promise<RunAgentResult> {
  const { client, system, signal, maxTurns = Number.POSITIVE_INFINITY } = options;
  if (!(maxTurns >= 1 && (Number.isInteger(maxTurns) || maxTurns === Number.POSITIVE_INFINITY)))
    throw new RangeError(`maxTurns must be a whole number of at least 1, not ${maxTurns}`);
  const specs = options.tools.map((tool) => tool.spec);
  const messages = [...options.messages];
  const emit = options.onEvent ?? (() => {});
  const commit = async (message: Message) => {
    messages.push(message);
    await emit({ type: "message", message });
  };
  const finish = (status: RunAgentResult["status"], text: string) => ({ status, text, messages });

  for (let turn = 1; ; turn++) {
    if (signal?.aborted) return finish("aborted", "");
    const text = new StreamedText();
    const calls: RoundCall[] = [];
    const reasoning: Reasoning[] = [];
    try {
      const request = { system, messages, tools: specs, ...(signal && { signal }) };
      for await (const event of client.stream(request)) {
        if (event.type === "text") {
          text.add(event.text);
          await emit(event);
        } else if (event.type === "thinking") await emit(event);
        else if (event.type === "reasoning") reasoning.push(checkedReasoning(event.part));
        else if (event.type === "tool_call") calls.push(checkedCall(event, calls));
      }
    } catch (error) {
      if (signal?.aborted) return finish("aborted", "");
      throw error;
    }
    if (text.length === 0 && calls.length === 0) {
      if (signal?.aborted) return finish("aborted", "");
      throw new Error("model completed without text or tool calls");
    }
    const content = text.toString();
    await commit({
      role: "assistant",
      content,
      toolCalls: calls.map(({ call }) => call),
      ...(reasoning.length > 0 && { reasoning }),
    });
    if (calls.length === 0) return finish("completed", content);
    if ((await dispatch(calls, options, commit, emit)) === "aborted")
      return finish("aborted", content);
    if (turn >= maxTurns) return finish("max_turns", content);
  }
}

/**
 * Runs the calls one at a time, in order; every call leaves exactly one `tool` message. A call
 * whose input could not be used gets the receipt a tool gives an input it refuses, unasked.
 */
async function dispatch(
  calls: RoundCall[],
  options: RunAgentOptions,
  commit: (message: Message) => Promise<void>,
  emit: (event: AgentEvent) => void | Promise<void>,
): Promise<"done" | "aborted"> {
  const { signal, beforeToolCall } = options;
  const tools = new Map(options.tools.map((tool) => [tool.spec.name, tool]));
  const recordRest = async (index: number, first: string, later: string) => {
    for (const [offset, { call }] of calls.slice(index).entries()) {
      await commit(toolError(call.id, offset === 0 ? first : later));
    }
  };
  const aborted = receipts.abortedBeforeExecution;
  const abortFrom = async (index: number) => {
    await recordRest(index, aborted, aborted);
    return "aborted" as const;
  };

  for (const [index, { call, invalidInput }] of calls.entries()) {
    if (signal?.aborted) return abortFrom(index);
    if (invalidInput !== undefined) {
      await commit(toolError(call.id, receipts.invalidInput(call.name, invalidInput)));
      continue;
    }
    let approval: Approval = { approved: true };
    try {
      if (beforeToolCall) {
        const answer = await unlessAborted(beforeToolCall(call), signal);
        if (answer === abortedWait) return abortFrom(index);
        approval = checkApproval(answer);
      }
    } catch (error) {
      if (signal?.aborted) return abortFrom(index);
      await recordRest(index, receipts.approvalFailed, receipts.notExecutedAfterFailure);
      throw error;
    }
    if (signal?.aborted) return abortFrom(index);
    if (!approval.approved) {
      await commit(toolError(call.id, approval.reason ?? receipts.rejected));
      continue;
    }
    const tool = tools.get(call.name);
    if (!tool) {
      await commit(toolError(call.id, receipts.unknownTool(call.name)));
      continue;
    }
    await emit({ type: "tool_start", call });
    let result: ToolResult;
    try {
      result = checkResult(call, await tool.execute(call.input, signal));
    } catch (error) {
      if (signal?.aborted) {
        await recordRest(index, receipts.abortedDuringExecution, aborted);
        return "aborted";
      }
      await recordRest(index, receipts.executionFailed, receipts.notExecutedAfterFailure);
      throw error;
    }
    await commit({
      role: "tool",
      toolCallId: call.id,
      content: result.content,
      isError: result.isError === true,
      ...(result.parts !== undefined && { parts: result.parts }),
      ...(result.seen !== undefined && { seen: result.seen }),
    });
  }
  return "done";
}

const abortedWait = Symbol("aborted");

/** How long a policy may still take to answer once the signal fired. */
const POLICY_GRACE_MS = 1000;

/**
 * What a policy answers, or `abortedWait` when it has not answered within a second of the
 * signal firing: a policy that honours the signal (the CLI's asks end at once, recording why)
 * still has its say, and one that never answers cannot hold a run past its abort. A late failure
 * of the policy is then ignored.
 */
async function unlessAborted<T>(
  answer: T | Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T | typeof abortedWait> {
  if (signal === undefined) return await answer;
  const pending = Promise.resolve(answer);
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const late = new Promise<typeof abortedWait>((resolve) => {
    onAbort = () => {
      timer = setTimeout(() => resolve(abortedWait), POLICY_GRACE_MS);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([pending, late]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    pending.catch(() => {});
  }
}
