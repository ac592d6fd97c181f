/**
 * `mini-agent/testing`: the supported testing kit. Test a tool, a policy or a whole program
 * offline: a scripted `ModelClient`, strict local servers that speak the Anthropic Messages, Chat
 * Completions and Responses streaming protocols and refuse what the real APIs refuse, a history
 * validator and a client that replays a recorded session. No product module imports it.
 */
export {
  type AnthropicServer,
  type ScriptedCall,
  type ServerOptions,
  startAnthropicServer,
  status as anthropicStatus,
  stream as anthropicStream,
  type TurnScript,
  turn as anthropicTurn,
} from "./anthropic-server.js";
export {
  call,
  done,
  FakeClient,
  type RecordedRequest,
  type ScriptRound,
  type ScriptStep,
  text,
  toolCall,
} from "./fake-client.js";
export { assertValidHistory, historyProblem } from "./history.js";
export {
  type CompletionScript,
  completion as openaiCompletion,
  type OpenAIServer,
  type Quirks,
  startOpenAIServer,
  status as openaiStatus,
  stream as openaiStream,
} from "./openai-server.js";
export { replaySession } from "./replay.js";
export {
  type ResponseScript,
  type ResponsesServer,
  type ResponsesServerOptions,
  response as responsesResponse,
  startResponsesServer,
  status as responsesStatus,
  stream as responsesStream,
} from "./responses-server.js";
export type { Reply, ReplyScript, StreamFaults } from "./sse-server.js";
export { NULL_MODEL, oracleRounds, taskModels } from "./task-models.js";
