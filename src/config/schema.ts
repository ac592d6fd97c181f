import { type Static, Type } from "@sinclair/typebox";
import { HttpSchema, StdioSchema } from "../mcp/config.js";
import { MAX_COUNT, MAX_PROCESSES, MIN_CONTEXT_WINDOW } from "./bounds.js";
import { SIZE } from "./size.js";

/**
 * The configuration file, one schema for both places it is read from: the user's
 * `config.json` in the state folder and a project's `.mini-agent/config.json` at its root. The
 * project file may hold only the fields that narrow (`projectFields`); the build writes this
 * schema out as `mini-agent/config.schema.json`, so an editor can check either file.
 */

const Paths = Type.Array(Type.String({ minLength: 1 }));
const Words = Type.Array(Type.String({ minLength: 1 }));

export const LimitsSchema = Type.Object(
  {
    processes: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PROCESSES,
        description: "most processes at once in the sandbox",
      }),
    ),
    memory: Type.Optional(
      Type.String({ pattern: SIZE.source, description: "most memory: 512M, 16G or bytes" }),
    ),
    fileSize: Type.Optional(
      Type.String({
        pattern: SIZE.source,
        description: "largest file a sandboxed process may write: 1G, 4G or bytes",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    provider: Type.Optional(
      Type.Union([
        Type.Literal("anthropic"),
        Type.Literal("openai"),
        Type.Literal("openai-responses"),
      ]),
    ),
    model: Type.Optional(Type.String({ minLength: 1 })),
    baseURL: Type.Optional(Type.String({ pattern: "^https?://" })),
    thinking: Type.Optional(
      Type.Union([
        Type.Literal("off"),
        Type.Literal("low"),
        Type.Literal("medium"),
        Type.Literal("high"),
        Type.Literal("xhigh"),
        Type.Literal("max"),
      ]),
    ),
    contextWindow: Type.Optional(Type.Integer({ minimum: MIN_CONTEXT_WINDOW, maximum: MAX_COUNT })),
    maxTurns: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_COUNT })),
    sandbox: Type.Optional(
      Type.Object(
        {
          mode: Type.Optional(
            Type.Union([Type.Literal("auto"), Type.Literal("required"), Type.Literal("off")]),
          ),
          hide: Type.Optional(Paths),
          limits: Type.Optional(LimitsSchema),
        },
        { additionalProperties: false },
      ),
    ),
    rules: Type.Optional(
      Type.Object(
        { allow: Type.Optional(Words), deny: Type.Optional(Words) },
        { additionalProperties: false },
      ),
    ),
    mcpServers: Type.Optional(
      Type.Record(Type.String(), Type.Union([StdioSchema, HttpSchema]), {
        description: "MCP servers, as in .mcp.json (user file only)",
      }),
    ),
    skills: Type.Optional(
      Type.Object({ paths: Paths }, { additionalProperties: false, description: "skill folders" }),
    ),
    hooks: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "Commands run on the agent's events, in Claude Code's shape: events -> [{ matcher, hooks: [{ type: \"command\", command, timeout }] }] (docs/hooks.md)",
      }),
    ),
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigSchema>;

/**
 * What a project file may set, as paths into the document: each either narrows what the user
 * allowed (deny rules, more hidden paths, lower limits, `required`) or harms nothing (model,
 * thinking, context window, turns, skills), or runs only once the project file is trusted, its
 * scripts with it (`hooks`, docs/hooks.md). Anything else is refused by name.
 */
export const projectFields: readonly string[] = [
  "$schema",
  "model",
  "thinking",
  "contextWindow",
  "maxTurns",
  "sandbox.mode",
  "sandbox.hide",
  "sandbox.limits.processes",
  "sandbox.limits.memory",
  "sandbox.limits.fileSize",
  "rules.deny",
  "skills.paths",
  "hooks",
];

/** What each field holds, for the one line that says a file is wrong. */
export const expectedValues: Record<string, string> = {
  $schema: "a string",
  provider: '"anthropic", "openai" or "openai-responses"',
  model: "a non-empty string",
  baseURL: "an http(s) address such as http://127.0.0.1:11434/v1",
  thinking: '"off", "low", "medium", "high", "xhigh" or "max"',
  contextWindow: `a whole number of tokens from ${MIN_CONTEXT_WINDOW} to ${MAX_COUNT}`,
  maxTurns: `a whole number from 1 to ${MAX_COUNT}`,
  sandbox: "an object with mode, hide and limits",
  "sandbox.mode": '"auto", "required" or "off"',
  "sandbox.hide": "an array of paths",
  "sandbox.limits": "an object with processes, memory and fileSize",
  "sandbox.limits.processes": `a whole number from 1 to ${MAX_PROCESSES}`,
  "sandbox.limits.memory": "a size such as 512M, 16G or a number of bytes",
  "sandbox.limits.fileSize": "a size such as 1G, 4G or a number of bytes",
  rules: "an object with allow and deny",
  "rules.allow": "an array of rules (command words)",
  "rules.deny": "an array of rules (command words)",
  mcpServers: "an object of servers",
  skills: "an object with paths",
  "skills.paths": "an array of folders",
  hooks: "an object of events (docs/hooks.md)",
};

/** What one item of a list holds, for the line that says an item is wrong. */
export const elementValues: Record<string, string> = {
  "sandbox.hide": "a path",
  "rules.allow": "a rule (command words)",
  "rules.deny": "a rule (command words)",
  "skills.paths": "a folder",
};

/** The JSON Schema the package ships as `mini-agent/config.schema.json`. */
export function configJsonSchema(): Record<string, unknown> {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "mini-agent configuration (config.json, .mini-agent/config.json)",
    ...JSON.parse(JSON.stringify(ConfigSchema)),
  };
}
