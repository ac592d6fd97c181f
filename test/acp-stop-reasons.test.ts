import { describe, expect, it } from "vitest";
import {
  stream as anthropicStream,
  startAnthropicServer,
  turn,
} from "../src/testing/anthropic-server.js";
import {
  completion,
  stream as openaiStream,
  startOpenAIServer,
} from "../src/testing/openai-server.js";
import {
  response,
  stream as responsesStream,
  startResponsesServer,
} from "../src/testing/responses-server.js";
import { invalidLines, noAnswer, withAcpAgent } from "./support/acp.js";
import { useCleanup } from "./support/cleanup.js";
import { useCliSetup } from "./support/cli.js";

/**
 * A model that stops at its output limit or refuses (a content filter included) ends the prompt
 * with the protocol's `max_tokens` or `refusal`, read from the stop the adapter told, whatever the
 * provider's words; never as an internal error. Through the built CLI and each strict server.
 */

const setup = useCliSetup();
const track = useCleanup();

interface Case {
  name: string;
  expected: "refusal" | "max_tokens";
  serve: () => Promise<{ url: string; close(): unknown; rejections: string[] }>;
  /** The flags and environment that point the agent at the server. */
  flags: string[];
  env: (url: string) => NodeJS.ProcessEnv;
}

const openai = (url: string) => ({
  ANTHROPIC_API_KEY: "",
  OPENAI_API_KEY: "sk-test-key-0123456789",
  OPENAI_BASE_URL: `${url}/v1`,
});

const cases: Case[] = [
  {
    name: "a Responses content filter",
    expected: "refusal",
    serve: () =>
      startResponsesServer([
        responsesStream(
          response({ text: ["I can"], status: "incomplete", incompleteReason: "content_filter" }),
        ),
      ]),
    flags: ["--provider", "openai-responses", "--model", "gpt-5.5"],
    env: (url) => openai(url),
  },
  {
    name: "the Responses output limit",
    expected: "max_tokens",
    serve: () =>
      startResponsesServer([
        responsesStream(
          response({ text: ["Half"], status: "incomplete", incompleteReason: "max_output_tokens" }),
        ),
      ]),
    flags: ["--provider", "openai-responses", "--model", "gpt-5.5"],
    env: (url) => openai(url),
  },
  {
    name: "a Chat Completions content filter",
    expected: "refusal",
    serve: () =>
      startOpenAIServer([
        openaiStream(completion({ text: ["I can"], finishReason: "content_filter" })),
      ]),
    flags: ["--provider", "openai", "--model", "gpt-test"],
    env: (url) => openai(url),
  },
  {
    name: "a Messages refusal",
    expected: "refusal",
    serve: () =>
      startAnthropicServer([anthropicStream(turn({ text: ["I can"], stopReason: "refusal" }))]),
    flags: [],
    env: (url) => ({ ANTHROPIC_BASE_URL: url }),
  },
  {
    name: "the Messages output limit",
    expected: "max_tokens",
    serve: () =>
      startAnthropicServer([anthropicStream(turn({ text: ["Half"], stopReason: "max_tokens" }))]),
    flags: [],
    env: (url) => ({ ANTHROPIC_BASE_URL: url }),
  },
];

describe("mini-agent acp's stop reasons", () => {
  it.each(cases)("answers $name with $expected", async (scenario) => {
    const server = track(await scenario.serve());
    const { workspace, options } = await setup([]);
    const env = { ...options.env, ...scenario.env(server.url) };
    const { value, run, code } = await withAcpAgent(
      [...scenario.flags, "--sandbox", "off"],
      { ...options, env },
      noAnswer,
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const { sessionId } = await agent.request("session/new", {
          cwd: workspace,
          mcpServers: [],
        });
        return await agent.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "go" }],
        });
      },
    );
    expect(value).toEqual({ stopReason: scenario.expected });
    expect(code).toBe(0);
    expect(server.rejections).toEqual([]);
    expect(invalidLines(run.lines)).toEqual([]);
  });
});
