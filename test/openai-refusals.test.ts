import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import {
  completion,
  effortWithTools,
  maxTokensRefused,
  startOpenAIServer,
  status,
  stream,
} from "../src/testing/openai-server.js";
import type { Message } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { scriptedTool } from "./support/tools.js";

/**
 * What OpenAI's current reasoning models refuse on Chat Completions, and how the adapter goes on
 * without breaking the turn: function tools with reasoning (it sends `reasoning_effort: none`, as
 * the refusal asks, once told, for the rest of the client's life) and `max_tokens` (it sends
 * `max_completion_tokens`). Other refusals, and other servers, are left as they are.
 */

const setup = useCliSetup();
const track = useCleanup();
const ls = scriptedTool("ls", async () => ({ content: "a.txt" }));
const user: Message = { role: "user", content: "Look around." };
const lsCall = (id: string) => ({ id, name: "ls", input: {} });
/** The scripted server counts a refused request too: its reply slot is never used. */
const refused = status(500, "unused: this request is refused before its reply");

const notice =
  "mini-agent: the model refuses function tools with reasoning on Chat Completions: this session sends reasoning_effort none from now on, so the model does not reason; for reasoning with tools, use --provider openai-responses\n";

describe("Chat Completions on a model that refuses function tools with reasoning", () => {
  it("goes on with reasoning_effort none through a two-round tool loop, saying so once", async () => {
    const server = track(
      await startOpenAIServer(
        [
          refused,
          stream(completion({ calls: [lsCall("call_1")] })),
          stream(completion({ calls: [lsCall("call_2")] })),
          stream(completion({ text: ["Two listings."] })),
        ],
        { reasoningModel: true },
      ),
    );
    const { options } = await setup([]);
    const env = { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${server.url}/v1` };
    const run = await runBin(
      ["--provider", "openai", "--model", "gpt-5.6", "--thinking", "high", "list twice"],
      { ...options, env },
    );
    expect(run).toEqual({
      code: 0,
      stdout: "Two listings.\n",
      stderr: `${notice}  ✓ ls\n  ✓ ls\n`,
    });
    expect(server.rejections).toEqual([effortWithTools("gpt-5.6")]);
    expect(server.requests.map((request) => request.body.reasoning_effort)).toEqual([
      "high",
      "none",
      "none",
      "none",
    ]);
    // The resent request is the refused one with only the effort changed.
    const [first, second] = server.requests.map((request) => request.body);
    expect(second).toEqual({ ...first, reasoning_effort: "none" });
  });

  it("keeps sending the level to a server that takes it", async () => {
    const server = track(
      await startOpenAIServer([
        stream(completion({ calls: [lsCall("call_1")] })),
        stream(completion({ text: ["Listed."] })),
      ]),
    );
    const { options } = await setup([]);
    const env = { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${server.url}/v1` };
    const run = await runBin(
      ["--provider", "openai", "--model", "deepseek-reasoner", "--thinking", "high", "list"],
      { ...options, env },
    );
    expect(run).toEqual({ code: 0, stdout: "Listed.\n", stderr: "  ✓ ls\n" });
    expect(server.requests.map((request) => request.body.reasoning_effort)).toEqual([
      "high",
      "high",
    ]);
  });

  it("sends reasoning_effort none to such a model even when no level was asked for", async () => {
    const server = track(
      await startOpenAIServer([refused, stream(completion({ text: ["Hi."] }))], {
        reasoningModel: true,
      }),
    );
    const notices: string[] = [];
    const client = new OpenAIModelClient({
      baseURL: `${server.url}/v1`,
      model: "gpt-5.6",
      onNotice: (text) => notices.push(text),
    });
    const result = await runAgent({ client, tools: [ls], system: "", messages: [user] });
    expect(result.text).toBe("Hi.");
    expect(server.requests.map((request) => request.body.reasoning_effort)).toEqual([
      undefined,
      "none",
    ]);
    expect(notices).toHaveLength(1);
  });

  it("knows the refusal when a gateway passes it on inside its own message", async () => {
    const passed = `litellm.BadRequestError: OpenAIException - ${effortWithTools("gpt-5.5")}`;
    const server = track(
      await startOpenAIServer([status(400, passed), stream(completion({ text: ["Hi."] }))]),
    );
    const client = new OpenAIModelClient({
      baseURL: `${server.url}/v1`,
      model: "openai/gpt-5.5",
      thinking: "low",
    });
    expect((await runAgent({ client, tools: [ls], system: "", messages: [user] })).text).toBe(
      "Hi.",
    );
    expect(server.requests.map((request) => request.body.reasoning_effort)).toEqual([
      "low",
      "none",
    ]);
  });

  it("does not resend on another refusal, even one that names reasoning_effort", async () => {
    const other =
      "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'none', 'low', 'medium', 'high', 'xhigh'.";
    const server = track(await startOpenAIServer([status(400, other)]));
    const notices: string[] = [];
    const client = new OpenAIModelClient({
      baseURL: `${server.url}/v1`,
      model: "gpt-5.6",
      thinking: "high",
      onNotice: (text) => notices.push(text),
    });
    await expect(runAgent({ client, tools: [ls], system: "", messages: [user] })).rejects.toThrow(
      other,
    );
    expect(server.requests).toHaveLength(1);
    expect(notices).toEqual([]);
  });

  it("does not resend a refusal of function tools with reasoning when none was already sent", async () => {
    const server = track(await startOpenAIServer([status(400, effortWithTools("gpt-5.6"))]));
    const client = new OpenAIModelClient({
      baseURL: `${server.url}/v1`,
      model: "gpt-5.6",
      thinking: "off",
    });
    await expect(runAgent({ client, tools: [ls], system: "", messages: [user] })).rejects.toThrow(
      effortWithTools("gpt-5.6"),
    );
    expect(server.requests).toHaveLength(1);
  });
});

describe("Chat Completions on a model that refuses max_tokens", () => {
  it("sends the limit as max_completion_tokens from the refusal on, for every later request", async () => {
    const server = track(
      await startOpenAIServer(
        [
          refused,
          refused,
          stream(completion({ calls: [lsCall("call_1")] })),
          stream(completion({ text: ["Done."] })),
        ],
        { reasoningModel: true },
      ),
    );
    const notices: string[] = [];
    const client = new OpenAIModelClient({
      baseURL: `${server.url}/v1`,
      model: "gpt-5.6",
      maxTokens: 4096,
      thinking: "medium",
      onNotice: (text) => notices.push(text),
    });
    const result = await runAgent({ client, tools: [ls], system: "", messages: [user] });
    expect(result.text).toBe("Done.");
    expect(server.rejections).toEqual([maxTokensRefused, effortWithTools("gpt-5.6")]);
    expect(
      server.requests.map(({ body }) => [
        body.max_tokens,
        body.max_completion_tokens,
        body.reasoning_effort,
      ]),
    ).toEqual([
      [4096, undefined, "medium"],
      [undefined, 4096, "medium"],
      [undefined, 4096, "none"],
      [undefined, 4096, "none"],
    ]);
    expect(notices).toHaveLength(1);
  });

  it("keeps max_tokens for a server that takes it", async () => {
    const server = track(await startOpenAIServer([stream(completion({ text: ["Hi."] }))]));
    const client = new OpenAIModelClient({
      baseURL: `${server.url}/v1`,
      model: "llama3.1",
      maxTokens: 512,
    });
    await runAgent({ client, tools: [], system: "", messages: [user] });
    expect(server.requests[0]?.body.max_tokens).toBe(512);
    expect(server.requests[0]?.body.max_completion_tokens).toBeUndefined();
  });
});
