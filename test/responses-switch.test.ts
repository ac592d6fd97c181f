import { describe, expect, it } from "vitest";
import {
  completion,
  effortUnsupported,
  effortWithTools,
  startOpenAIServer,
  status,
  stream,
} from "../src/testing/openai-server.js";
import { response, startResponsesServer } from "../src/testing/responses-server.js";
import { useCleanup } from "./support/cleanup.js";
import { runBin, sessionFiles, sessionRecords, useCliSetup } from "./support/cli.js";
import { startOpenAIEndpoint } from "./support/openai-endpoint.js";

/**
 * `--provider openai` with a model that refuses function tools on Chat Completions and names the
 * Responses API (OpenAI's gpt-6 family, at every effort): the session goes on on the Responses API
 * of the same endpoint, said in one line and recorded; an endpoint without it ends the turn in one
 * line. Through the built CLI, against the strict servers refusing as the real API does.
 */

const setup = useCliSetup();
const track = useCleanup();
/** The scripted server counts a refused request too: its reply slot is never used. */
const refused = status(500, "unused: this request is refused before its reply");
const lsCall = { id: "call_1", name: "ls", input: {} };
const switchLine =
  "mini-agent: gpt-6-astra refuses function tools on Chat Completions: this session runs on the Responses API (/responses) from now on\n";

async function openaiRun(url: string, args: string[]) {
  const { options, home } = await setup([]);
  const env = { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${url}/v1` };
  const run = await runBin(["--provider", "openai", "--model", "gpt-6-astra", ...args], {
    ...options,
    env,
  });
  return { run, home };
}

describe("a model that refuses function tools on Chat Completions", () => {
  it("runs its tool turns on the Responses API of the same endpoint, said once and recorded", async () => {
    const chat = track(await startOpenAIServer([refused], { toolsRefused: true }));
    const responses = track(
      await startResponsesServer(
        [
          response({ calls: [lsCall] }, "gpt-6-astra"),
          response({ text: ["One file."] }, "gpt-6-astra"),
        ],
        { alwaysReasons: true },
      ),
    );
    const endpoint = track(await startOpenAIEndpoint(chat, responses));
    const { run, home } = await openaiRun(endpoint.url, ["--thinking", "xhigh", "list"]);
    expect(run).toEqual({ code: 0, stdout: "One file.\n", stderr: `${switchLine}  ✓ ls\n` });
    expect(chat.rejections).toEqual([effortWithTools("gpt-6-astra")]);
    expect(chat.requests.map(({ body }) => body.reasoning_effort)).toEqual(["xhigh"]);
    expect(responses.rejections).toEqual([]);
    expect(responses.requests.map(({ body }) => body.reasoning)).toEqual([
      { effort: "xhigh", summary: "auto" },
      { effort: "xhigh", summary: "auto" },
    ]);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((record) => record.type === "responses_switch")).toEqual([
      { type: "responses_switch", model: "gpt-6-astra", reason: effortWithTools("gpt-6-astra") },
    ]);
  });

  it("resumes a session that holds the switch, switching again at the first refusal", async () => {
    const chat = track(await startOpenAIServer([refused, refused], { toolsRefused: true }));
    const responses = track(
      await startResponsesServer(
        [
          response({ text: ["First."] }, "gpt-6-astra"),
          response({ text: ["Second."] }, "gpt-6-astra"),
        ],
        { alwaysReasons: true },
      ),
    );
    const endpoint = track(await startOpenAIEndpoint(chat, responses));
    const { options, home } = await setup([]);
    const env = { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${endpoint.url}/v1` };
    const flags = ["--provider", "openai", "--model", "gpt-6-astra"];
    const first = await runBin([...flags, "one"], { ...options, env });
    expect(first).toEqual({ code: 0, stdout: "First.\n", stderr: switchLine });
    const second = await runBin([...flags, "--continue", "two"], { ...options, env });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe("Second.\n");
    expect(second.stderr).toContain(switchLine);
    // The resumed history went to the Responses API whole: both prompts and the first answer.
    const input = responses.requests[1]?.body.input as { role?: string }[];
    expect(input.map((item) => item.role)).toEqual(["user", "assistant", "user"]);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((record) => record.type === "responses_switch")).toHaveLength(2);
  });

  it("ends the turn in one line where the endpoint has no Responses API", async () => {
    const chat = track(await startOpenAIServer([refused, refused], { toolsRefused: true }));
    const { run } = await openaiRun(chat.url, ["list"]);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      "mini-agent: gpt-6-astra refuses function tools on Chat Completions at every reasoning effort, and this endpoint has no Responses API (/responses): use OpenAI's endpoint or a server that serves /responses\n",
    );
    expect(run.code).toBe(1);
    // The refusal, then the same request with reasoning_effort none, which the model refuses too.
    expect(chat.rejections).toEqual([
      effortWithTools("gpt-6-astra"),
      effortUnsupported("reasoning_effort", "none", ["low", "medium", "high", "xhigh"]),
    ]);
  });

  it("keeps a model that takes tools on Chat Completions there", async () => {
    const chat = track(
      await startOpenAIServer([
        stream(completion({ calls: [lsCall] })),
        stream(completion({ text: ["Listed."] })),
      ]),
    );
    const responses = track(await startResponsesServer([]));
    const endpoint = track(await startOpenAIEndpoint(chat, responses));
    const { run } = await openaiRun(endpoint.url, ["--thinking", "xhigh", "list"]);
    expect(run).toEqual({ code: 0, stdout: "Listed.\n", stderr: "  ✓ ls\n" });
    expect(chat.requests.map(({ body }) => body.reasoning_effort)).toEqual(["xhigh", "xhigh"]);
    expect(responses.requests).toEqual([]);
  });
});

describe("the efforts gpt-6 takes on the Responses API", () => {
  it("sends --thinking max as reasoning.effort max", async () => {
    const responses = track(
      await startResponsesServer([response({ text: ["Hi."] }, "gpt-6-astra")], {
        alwaysReasons: true,
      }),
    );
    const { options } = await setup([]);
    const env = { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${responses.url}/v1` };
    const run = await runBin(
      ["--provider", "openai-responses", "--model", "gpt-6-astra", "--thinking", "max", "hi"],
      { ...options, env },
    );
    expect(run).toEqual({ code: 0, stdout: "Hi.\n", stderr: "" });
    expect(responses.requests.map(({ body }) => body.reasoning)).toEqual([
      { effort: "max", summary: "auto" },
    ]);
  });

  it("shows the API's refusal of --thinking off (effort none), which gpt-6 does not take", async () => {
    const responses = track(await startResponsesServer([refused], { alwaysReasons: true }));
    const { options } = await setup([]);
    const env = { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${responses.url}/v1` };
    const run = await runBin(
      ["--provider", "openai-responses", "--model", "gpt-6-astra", "--thinking", "off", "hi"],
      { ...options, env },
    );
    const levels = ["low", "medium", "high", "xhigh", "max"];
    expect(responses.rejections).toEqual([effortUnsupported("reasoning.effort", "none", levels)]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(effortUnsupported("reasoning.effort", "none", levels));
  });
});
