/**
 * The public API of `mini-agent`: the loop, its three seams and what plugs into them. Every name
 * here is listed in the README's "Public API" section, and a test holds the built package to
 * that list. The testing kit is the `mini-agent/testing` subpath (`src/testing/`).
 */
export { type AgentEvent, type RunAgentOptions, type RunAgentResult, runAgent } from "./agent.js";
export { denyBashByDefault } from "./approval.js";
export { CompactingClient, type CompactingOptions } from "./compaction/client.js";
export { type Compaction, CompactionError } from "./compaction/record.js";
export { AnthropicModelClient, type AnthropicOptions } from "./providers/anthropic.js";
export { toAnthropicMessages, toModelEvents } from "./providers/anthropic-protocol.js";
export { OpenAIModelClient, type OpenAIOptions } from "./providers/openai.js";
export {
  OpenAIResponsesModelClient,
  type OpenAIResponsesOptions,
} from "./providers/openai-responses.js";
export {
  type CreateSessionOptions,
  type LoadedSession,
  Session,
  type SessionHeader,
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
