import { basename } from "node:path";
import { describe, expect, it } from "vitest";
import {
  encryptedReasoning,
  response,
  startResponsesServer,
  stream,
} from "../src/testing/responses-server.js";
import { useCleanup } from "./support/cleanup.js";
import { runBin, sessionFiles, sessionRecords, useCliSetup } from "./support/cli.js";
import { protocolLines } from "./support/stream-json.js";

/**
 * `--provider openai-responses` through the built CLI and the strict local Responses server: a
 * tool loop with reasoning whose encrypted items go back before their calls, in the session
 * and after `--continue`, byte for byte.
 */

const setup = useCliSetup();
const track = useCleanup();
const lsCall = (id: string) => ({ id, name: "ls", input: {} });

/** The first reasoning item id in a reply's frames. */
function reasoningId(reply: ReturnType<typeof stream>): string {
  const frames = reply.kind === "stream" ? reply.frames : [];
  for (const frame of frames) {
    const item = (frame.data as { item?: { type?: string; id?: string } }).item;
    if (item?.type === "reasoning" && item.id) return item.id;
  }
  throw new Error("no reasoning item");
}

const reasoningItem = (id: string) => ({
  type: "reasoning",
  id,
  summary: [],
  encrypted_content: encryptedReasoning("gpt-5.5", id),
});
const fc = (id: string) => ({ type: "function_call", call_id: id, name: "ls", arguments: "{}" });
const out = (id: string) => ({
  type: "function_call_output",
  call_id: id,
  output: "(empty folder)",
});
const say = (content: string) => ({ type: "message", role: "user", content });

describe("--provider openai-responses", () => {
  it("runs a two-round tool loop with --thinking high, each reasoning item sent back before its call, and again after --continue", async () => {
    const rounds = [
      stream(response({ reasoning: ["List first."], calls: [lsCall("call_1")] }, "gpt-5.5")),
      stream(response({ reasoning: ["Once more."], calls: [lsCall("call_2")] }, "gpt-5.5")),
      stream(response({ reasoning: ["Both empty."], text: ["Two listings."] }, "gpt-5.5")),
      stream(response({ reasoning: [], text: ["Still empty."] }, "gpt-5.5")),
    ];
    const [rs1, rs2, rs3] = rounds.map(reasoningId) as [string, string, string];
    const server = track(await startResponsesServer(rounds));
    const { home, options } = await setup([]);
    const env = { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${server.url}/v1` };
    const flags = ["--provider", "openai-responses", "--model", "gpt-5.5", "--thinking", "high"];
    const run = await runBin([...flags, "list twice"], { ...options, env });
    expect(run).toEqual({ code: 0, stdout: "Two listings.\n", stderr: "  ✓ ls\n  ✓ ls\n" });
    expect(server.rejections).toEqual([]);
    const inputs = server.requests.map((request) => request.body.input);
    expect(inputs[1]).toEqual([say("list twice"), reasoningItem(rs1), fc("call_1"), out("call_1")]);
    expect(inputs[2]).toEqual([
      say("list twice"),
      reasoningItem(rs1),
      fc("call_1"),
      out("call_1"),
      reasoningItem(rs2),
      fc("call_2"),
      out("call_2"),
    ]);
    const [file] = await sessionFiles(home);
    const sessionId = basename(file ?? "", ".jsonl");
    expect(
      server.requests.map(({ body }) => [body.prompt_cache_key, body.reasoning, body.store]),
    ).toEqual(Array(3).fill([sessionId, { effort: "high", summary: "auto" }, false]));

    const resumed = await runBin([...flags, "--continue", "again"], { ...options, env });
    expect(resumed).toEqual({ code: 0, stdout: "Still empty.\n", stderr: "" });
    expect(server.rejections).toEqual([]);
    const answer = { type: "message", role: "assistant", content: "Two listings." };
    const before = [...(inputs[2] as unknown[]), reasoningItem(rs3), answer, say("again")];
    expect(JSON.stringify(server.requests[3]?.body.input)).toBe(JSON.stringify(before));
    expect(server.requests[3]?.body.prompt_cache_key).toBe(sessionId);
  });

  it("drops reasoning the API cannot verify (a gateway answered with another model) and goes on, then and after --continue", async () => {
    // Asked for gpt-5, answered by gpt-5-mini: its encrypted item cannot be verified by gpt-5.
    // A refused request takes its place in the script: `unused` marks those places.
    const unused = stream(response({ text: ["never sent"] }, "gpt-5"));
    const rounds = [
      stream(response({ reasoning: ["r"], calls: [lsCall("call_1")] }, "gpt-5-mini")),
      unused,
      stream(response({ text: ["listed"] }, "gpt-5")),
      unused,
      stream(response({ text: ["again"] }, "gpt-5")),
    ];
    const server = track(await startResponsesServer(rounds));
    const { options } = await setup([]);
    const env = { ...options.env, OPENAI_BASE_URL: `${server.url}/v1` };
    const flags = ["--provider", "openai-responses", "-m", "gpt-5"];
    const run = await runBin([...flags, "list"], { ...options, env });
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "listed\n" });
    const resumed = await runBin([...flags, "--continue", "more"], { ...options, env });
    expect({ code: resumed.code, stdout: resumed.stdout }).toEqual({ code: 0, stdout: "again\n" });
    expect(server.rejections.map((text) => text.replace(/rs_\w+/, "rs_…"))).toEqual([
      "The encrypted content for item rs_… could not be verified.",
      "The encrypted content for item rs_… could not be verified.",
    ]);
    const carries = server.requests.map(({ body }) =>
      (body.input as { type?: string }[]).some((item) => item.type === "reasoning"),
    );
    expect(carries).toEqual([false, true, false, true, false]);
  });

  it("reports cached and reasoning tokens in stream-json, in the schema, and in the session", async () => {
    const usage = { input: 1200, cached: 1000, output: 40, reasoning: 30 };
    const server = track(
      await startResponsesServer([stream(response({ reasoning: [], text: ["Hi."], usage }))]),
    );
    const { home, options } = await setup([]);
    const env = { ...options.env, OPENAI_BASE_URL: `${server.url}/v1` };
    const run = await runBin(
      ["--provider", "openai-responses", "-m", "gpt-5.5", "--output-format", "stream-json", "hi"],
      { ...options, env },
    );
    expect(run.code).toBe(0);
    const reported = {
      inputTokens: 200,
      outputTokens: 40,
      cacheReadTokens: 1000,
      reasoningTokens: 30,
    };
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "usage")).toEqual([
      { version: 1, type: "usage", usage: reported },
    ]);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((record) => record.type === "usage")).toEqual([
      { type: "usage", ...reported },
    ]);
    const exported = await runBin(["export", "--format", "md", "-o", "-"], { ...options, env });
    expect(exported.stdout).toContain(
      "### Answer (200 input · 40 output, 30 of them reasoning · 1,000 cache read tokens)\n",
    );
  });

  it("needs a model, and a key unless a base URL points at a local server", async () => {
    const { options } = await setup([]);
    const env = { ...options.env, OPENAI_API_KEY: "", OPENAI_BASE_URL: "" };
    const noModel = await runBin(["--provider", "openai-responses", "x"], { ...options, env });
    expect(noModel).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "mini-agent: --provider openai-responses needs --model (or MINI_AGENT_MODEL), e.g. --model gpt-5.5\n",
    });
    const noKey = await runBin(["--provider", "openai-responses", "-m", "gpt-5.5", "x"], {
      ...options,
      env,
    });
    expect(noKey).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "mini-agent: OPENAI_API_KEY is not set: export it, or point --base-url (OPENAI_BASE_URL) at a local server\n",
    });
  });
});
