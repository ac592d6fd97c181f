import type { ModelClient, ModelEvent, ModelRequest, ToolCall } from "../types.js";

/** One step of a scripted round: an event to yield, or an error to throw at that point. */
export type ScriptStep = ModelEvent | Error;
/** A round is a list of steps, or a function of the request (for aborts and custom timing). */
export type ScriptRound = ScriptStep[] | ((request: ModelRequest) => AsyncIterable<ScriptStep>);

/** The request as the fake saw it, without the signal, copied so later rounds cannot change it. */
export type RecordedRequest = Omit<ModelRequest, "signal">;

/**
 * The one scripted `ModelClient` of the test suite. Round N of the script answers the N-th
 * call to `stream`; every request is recorded; running out of script throws loudly.
 */
export class FakeClient implements ModelClient {
  readonly requests: RecordedRequest[] = [];
  private readonly rounds: ScriptRound[];

  constructor(rounds: ScriptRound[]) {
    this.rounds = [...rounds];
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const { signal: _signal, ...rest } = request;
    this.requests.push(structuredClone(rest));
    const round = this.rounds[this.requests.length - 1];
    if (round === undefined) {
      throw new Error(`fake client: no scripted round ${this.requests.length}`);
    }
    const steps = typeof round === "function" ? round(request) : round;
    for await (const step of steps) {
      if (step instanceof Error) throw step;
      yield step;
    }
  }
}

/** Shorthands for scripts. */
export const text = (value: string): ModelEvent => ({ type: "text", text: value });
export const done: ModelEvent = { type: "done" };
export const call = (
  id: string,
  name: string,
  input: Record<string, unknown> = {},
): ModelEvent => ({
  type: "tool_call",
  call: { id, name, input },
});
export const toolCall = (
  id: string,
  name: string,
  input: Record<string, unknown> = {},
): ToolCall => ({
  id,
  name,
  input,
});
