/**
 * The public API of `mini-agent`: the loop, its three seams and what plugs into them. Every name
 * here is listed in the "Public API" section of docs/library.md, and a test holds the package to
 * that list. The testing kit is the `mini-agent/testing` subpath (`src/testing/`).
 */
export { type AgentEvent, type RunAgentOptions, type RunAgentResult, runAgent } from "./agent.js";
export { denyBashByDefault } from "./approval.js";
export { CompactingClient, type CompactingOptions } from "./compaction/client.js";
export { type Compaction, CompactionError } from "./compaction/record.js";
export { ImageBytesGone, readableData } from "./images.js";
export {
  type ConnectMcpOptions,
  connectMcpServers,
  type McpConfig,
  type McpServerConfig,
  type McpServerState,
  type McpServerStatus,
  type McpServers,
  type McpTool,
  type McpToolAnnotations,
} from "./mcp/index.js";
export { AnthropicModelClient, type AnthropicOptions } from "./providers/anthropic.js";
export { toAnthropicMessages, toModelEvents } from "./providers/anthropic-protocol.js";
export { OpenAIModelClient, type OpenAIOptions } from "./providers/openai.js";
export {
  OpenAIResponsesModelClient,
  type OpenAIResponsesOptions,
} from "./providers/openai-responses.js";
export { ProviderError } from "./providers/provider-error.js";
export { type ApplyOptions, applyRewind } from "./rewind/apply.js";
export { FileChanges, type FileChangesOptions } from "./rewind/changes.js";
export {
  type FileOutcome,
  planRewind,
  RewindError,
  type RewindOptions,
  type RewindPlan,
} from "./rewind/rewind.js";
export type {
  Decision,
  RetryNotice,
  SessionInfo,
  StopReason,
  TurnEnd,
  TurnEvent,
  TurnResult,
  TurnStatus,
} from "./runner/events.js";
export { Journal, type TurnListener } from "./runner/journal.js";
export {
  SessionRunner,
  type SessionRunnerOptions,
  type TurnOptions,
  type TurnStart,
} from "./runner/runner.js";
export type { SandboxLimits, SandboxMode, SandboxOptions } from "./sandbox/bwrap.js";
export {
  type CreateSessionOptions,
  type LoadedSession,
  Session,
  type SessionHeader,
} from "./session/session.js";
export { SessionStore } from "./session/store.js";
export type { BashOptions } from "./tools/bash.js";
export { defineTool, type ToolDefinition, ToolError } from "./tools/define.js";
export { createWorkspaceTools, type WorkspaceToolsOptions } from "./tools/index.js";
export { workspacePath } from "./tools/path.js";
export { type PlanItem, planOf, planTool } from "./tools/plan.js";
export { SeenFiles } from "./tools/seen.js";
export type {
  Approval,
  BeforeToolCall,
  ImagePart,
  JsonSchema,
  Message,
  ModelClient,
  ModelEvent,
  ModelRequest,
  Reasoning,
  ResultPart,
  ThinkingLevel,
  Tool,
  ToolCall,
  ToolResult,
  ToolSpec,
  Usage,
} from "./types.js";
