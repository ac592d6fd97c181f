import type { AgentEvent } from "../agent.js";
import type { Compaction } from "../compaction/record.js";
import type { Usage } from "../types.js";
import type { Decision } from "./policy.js";
import type { RetryNotice } from "./retry.js";

export interface TurnSummary {
  status: "completed" | "aborted" | "max_turns" | "budget_exceeded" | "error";
  text: string;
  sessionId: string;
  usage: Usage;
  error?: string;
}

/**
 * Renders what the loop reports, in one of the output formats (`formats.ts`): `text` for
 * people (`text-output.ts`), `json` (one summary line at the end) and `stream-json` for programs
 * (`stream-json.ts`). `retry` announces a lost round run again; `compaction` a compaction;
 * `finish` ends the turn. The optional parts are for programs: the session at the start, each
 * approval decision and the usage of each model request.
 */
export interface Output {
  event(event: AgentEvent): void;
  session?(session: SessionInfo): void;
  approval?(decision: Decision): void;
  usage?(usage: Usage): void;
  retry(notice: RetryNotice): void;
  compaction(compaction: Compaction): void;
  finish(summary: TurnSummary): void;
}

/** What a program needs to know of the session before its events. */
export interface SessionInfo {
  id: string;
  model: string;
  workspace: string;
  sandbox: string;
}

export interface Streams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** One JSON value on its own line. */
export const jsonLine = (stream: NodeJS.WritableStream, value: unknown) =>
  stream.write(`${JSON.stringify(value)}\n`);
