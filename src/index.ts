export { type AgentEvent, type RunAgentOptions, type RunAgentResult, runAgent } from "./agent.js";
export { bashDeniedReason, denyBashByDefault } from "./approval.js";
export { CompactingClient, type CompactingOptions } from "./compaction/client.js";
export { type Compaction, CompactionError, type Facts } from "./compaction/record.js";
export { historyProblem } from "./compaction/valid.js";
export { normalizeHistory } from "./history.js";
export { AnthropicModelClient, type AnthropicOptions } from "./providers/anthropic.js";
export {
  supportedStopReasons,
  toAnthropicMessages,
  toModelEvents,
} from "./providers/anthropic-protocol.js";
export { OpenAIModelClient, type OpenAIOptions } from "./providers/openai.js";
export {
  toModelEventsFromOpenAI,
  toOpenAIMessages,
} from "./providers/openai-protocol.js";
export { ProviderStreamError } from "./providers/stream-error.js";
export { receipts } from "./receipts.js";
export { isSecretName, isSecretVariable, secretRedactor, withoutSecrets } from "./secrets.js";
export {
  type CreateSessionOptions,
  type LoadedSession,
  listSessions,
  readSession,
  Session,
  type SessionHeader,
  type SessionSummary,
} from "./session.js";
export type { BashOptions } from "./tools/bash.js";
export { defineTool, type ToolDefinition, ToolError } from "./tools/define.js";
export { createWorkspaceTools, type WorkspaceToolsOptions } from "./tools/index.js";
export { workspacePath } from "./tools/path.js";
export type { SandboxLimits, SandboxMode, SandboxOptions } from "./tools/sandbox.js";
export { SeenFiles } from "./tools/seen.js";
export type {
  Approval,
  BeforeToolCall,
  JsonSchema,
  Message,
  ModelClient,
  ModelEvent,
  ModelRequest,
  Reasoning,
  ThinkingLevel,
  Tool,
  ToolCall,
  ToolResult,
  ToolSpec,
  Usage,
} from "./types.js";
