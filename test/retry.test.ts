import { join } from "node:path";
import * as anthropicErrors from "@anthropic-ai/sdk/core/error";
import * as openaiErrors from "openai/core/error";
import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { retryLine } from "../src/app/notices.js";
import { failWhenIdle } from "../src/providers/idle.js";
import { ProviderError, providerErrorFrom, retryAfterMs } from "../src/providers/provider-error.js";
import type { RetryNotice } from "../src/runner/events.js";
import { isRetryable, retryLostRound } from "../src/runner/retry.js";
import { readSession } from "../src/session/session.js";
import { status, stream, turn } from "../src/testing/anthropic-server.js";
import { call, done, FakeClient, text } from "../src/testing/fake-client.js";
import {
  completion,
  stream as openaiStream,
  startOpenAIServer,
} from "../src/testing/openai-server.js";
import type { Message, Tool } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { runBin, sessionFiles, useCliSetup } from "./support/cli.js";
import { exitAfterLastSignal, exitClockEnv } from "./support/exit-clock.js";
import { statusError, streamError } from "./support/provider-errors.js";
import { protocolLines } from "./support/stream-json.js";

/** The CLI runs a round again when it was lost to a passing provider failure and committed nothing. */

const setup = useCliSetup();
const track = useCleanup();

const overloaded = "mini-agent: overloaded_error: Overloaded";
const lostMidStream = () =>
  stream(turn({ text: ["Partial answer"] }), { errorAfter: 4, errorType: "overloaded_error" });

describe("retry of a lost round, through the real command", () => {
  it("runs a round lost to a mid-stream overload again: exit 0, the answer, one assistant message", async () => {
    const { server, home, options } = await setup([
      lostMidStream(),
      stream(turn({ text: ["Full answer."] })),
    ]);
    const run = await runBin(["task"], options);
    expect(run).toEqual({
      code: 0,
      stdout: "Partial answer\nFull answer.\n",
      stderr: `${overloaded}; retrying in 1 s (attempt 2 of 4); the partial answer above is discarded\n`,
    });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.body.messages).toEqual(server.requests[0]?.body.messages);
    const [file] = await sessionFiles(home);
    expect((await readSession(file ?? "")).messages).toEqual([
      { role: "user", content: "task" },
      { role: "assistant", content: "Full answer.", toolCalls: [] },
    ]);
  });

  it("tells a stream-json consumer with a retry event; the result holds the last attempt's answer", async () => {
    const { options } = await setup([lostMidStream(), stream(turn({ text: ["Full answer."] }))]);
    const run = await runBin(["--output-format", "stream-json", "task"], options);
    expect(run.code).toBe(0);
    const events = protocolLines(run.stdout);
    expect(events.slice(1, 5)).toEqual([
      { version: 1, type: "text", text: "Partial answer" },
      {
        version: 1,
        type: "retry",
        attempt: 2,
        attempts: 4,
        delayMs: 1000,
        reason: "overloaded_error: Overloaded",
        errorKind: "overloaded",
      },
      { version: 1, type: "text", text: "Full answer." },
      { version: 1, type: "usage", usage: { inputTokens: 10, outputTokens: 5 } },
    ]);
    expect(events[0]?.type).toBe("session");
    expect(events[5]).toMatchObject({ type: "result", status: "completed", text: "Full answer." });
    expect(events).toHaveLength(6);
    expect(run.stderr).toBe(`${overloaded}; retrying in 1 s (attempt 2 of 4)\n`);
  });

  it("gives up after four attempts of a persistent overload: one line per retry, then the error, exit 1", async () => {
    const { server, options } = await setup([
      lostMidStream(),
      lostMidStream(),
      lostMidStream(),
      lostMidStream(),
    ]);
    const run = await runBin(["--output-format", "json", "task"], options);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      [
        `${overloaded}; retrying in 1 s (attempt 2 of 4)`,
        `${overloaded}; retrying in 2 s (attempt 3 of 4)`,
        `${overloaded}; retrying in 4 s (attempt 4 of 4)`,
        "mini-agent: provider error overloaded_error: Overloaded (the provider is overloaded; try again later)",
        "",
      ].join("\n"),
    );
    expect(server.requests).toHaveLength(4);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "error", text: "" });
  }, 20_000);

  it("waits what retry-after asks once the SDK's own retries of a 529 ran out", async () => {
    const busy = () => status(529, 0.05);
    const { server, options } = await setup(Array.from({ length: 12 }, busy));
    const run = await runBin(["task"], options);
    expect(run.code).toBe(1);
    const line = "mini-agent: 529 overloaded_error: Overloaded; retrying in 50 ms";
    expect(run.stderr).toBe(
      [
        `${line} (attempt 2 of 4)`,
        `${line} (attempt 3 of 4)`,
        `${line} (attempt 4 of 4)`,
        "mini-agent: provider error 529 overloaded_error: Overloaded (the provider is overloaded; try again later)",
        "",
      ].join("\n"),
    );
    // Each attempt is the SDK's request and its two retries.
    expect(server.requests).toHaveLength(12);
  }, 20_000);

  it("runs a round lost to a dropped connection again after earlier rounds committed, without running their tools again", async () => {
    const { server, home, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "ls", input: {} }] })),
      stream(turn({ text: ["Listing ", "shows"] }), { dropAfter: 5 }),
      stream(turn({ text: ["Empty folder."] })),
    ]);
    const run = await runBin(["look"], options);
    expect(run).toEqual({
      code: 0,
      stdout: "Listing shows\nEmpty folder.\n",
      stderr:
        "  ✓ ls\nmini-agent: connection lost: terminated; retrying in 1 s (attempt 2 of 4); the partial answer above is discarded\n",
    });
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]?.body.messages).toEqual(server.requests[1]?.body.messages);
    const [file] = await sessionFiles(home);
    expect((await readSession(file ?? "")).messages).toEqual([
      { role: "user", content: "look" },
      { role: "assistant", content: "", toolCalls: [{ id: "toolu_1", name: "ls", input: {} }] },
      { role: "tool", toolCallId: "toolu_1", content: "(empty folder)", isError: false },
      { role: "assistant", content: "Empty folder.", toolCalls: [] },
    ]);
  });

  it("counts the rounds committed before a lost one toward --max-turns", async () => {
    const round = () => stream(turn({ calls: [{ id: "toolu_1", name: "ls", input: {} }] }));
    const { server, options } = await setup([
      round(),
      stream(turn({ text: ["x"] }), { errorAfter: 3 }),
      stream(turn({ calls: [{ id: "toolu_2", name: "ls", input: {} }] })),
      stream(turn({ text: ["one round too many"] })),
    ]);
    const run = await runBin(["--max-turns", "2", "look"], options);
    expect(run.code).toBe(3);
    expect(server.requests).toHaveLength(3);
  });

  it.each([
    ["SIGINT", 130, "mini-agent: interrupting (Ctrl-C again to quit)"],
    ["SIGTERM", 143, "mini-agent: SIGTERM: stopping the turn (again to quit at once)"],
  ] as const)(
    "stops at once when %s comes during the wait, and exits %d",
    async (signal, code, notice) => {
      const { server, home, options } = await setup([
        lostMidStream(),
        lostMidStream(),
        lostMidStream(),
        stream(turn({ text: ["never asked for"] })),
      ]);
      const clock = join(home, "exit-clock.json");
      let signalled = false;
      const run = await runBin(["task"], {
        ...options,
        env: exitClockEnv(options.env, clock),
        started: (child) => {
          let seen = "";
          child.stderr?.on("data", (chunk: Buffer) => {
            seen += chunk.toString();
            if (!signalled && seen.includes("(attempt 4 of 4)")) {
              signalled = true;
              child.kill(signal);
            }
          });
        },
      });
      expect(run.code).toBe(code);
      // The wait was 4 s: an abort that did not end it would take that long.
      const { signals, afterMs } = await exitAfterLastSignal(clock);
      expect(signals).toEqual([signal]);
      expect(afterMs).toBeLessThan(2000);
      expect(server.requests).toHaveLength(3);
      expect(run.stderr.split("\n").slice(-3)).toEqual([notice, "interrupted", ""]);
    },
    20_000,
  );

  it("runs again a round an OpenAI-compatible server lost to an in-band server_error", async () => {
    const server = track(
      await startOpenAIServer([
        openaiStream(completion({ text: ["half"] }), { errorAfter: 2 }),
        openaiStream(completion({ text: ["whole"] })),
      ]),
    );
    const { options } = await setup([]);
    const env = { ...options.env, OPENAI_BASE_URL: `${server.url}/v1` };
    const run = await runBin(["--provider", "openai", "-m", "local", "task"], { ...options, env });
    expect(run).toEqual({
      code: 0,
      stdout: "half\nwhole\n",
      stderr:
        "mini-agent: server_error: The server had an error while processing your request; retrying in 1 s (attempt 2 of 4); the partial answer above is discarded\n",
    });
    expect(server.requests).toHaveLength(2);
  });

  it("does not run again a request the provider refused", async () => {
    const { server, options } = await setup([status(400, undefined, "bad request")]);
    const run = await runBin(["task"], options);
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "mini-agent: provider error 400 invalid_request_error: bad request (the provider rejected the request)\n",
    });
    expect(server.requests).toHaveLength(1);
  });
});

const user: Message = { role: "user", content: "go" };

/** A tool whose failure looks like a passing provider error. */
const throwingTool: Tool = {
  spec: { name: "fetch_docs", description: "d", inputSchema: { type: "object" } },
  execute: async () => {
    throw streamError("overloaded_error", "Overloaded");
  },
};

describe("retryLostRound", () => {
  const attempt = async (options: { client: FakeClient; tools?: Tool[]; policy?: () => never }) => {
    const history: Message[] = [user];
    const notices: RetryNotice[] = [];
    const outcome = await retryLostRound({
      client: options.client,
      signal: new AbortController().signal,
      historyLength: () => history.length,
      notify: (notice) => {
        notices.push(notice);
      },
      policy: { attempts: 4, firstDelayMs: 1, maxDelayMs: 1 },
      run: (client) =>
        runAgent({
          client,
          tools: options.tools ?? [],
          system: "",
          messages: history,
          ...(options.policy && { beforeToolCall: options.policy }),
          onEvent: (event) => void (event.type === "message" && history.push(event.message)),
        }),
    }).catch((caught: unknown) => caught);
    return { outcome, notices, history };
  };

  it("never runs again a round whose tool threw after the commit, even an error that looks like an overload", async () => {
    const client = new FakeClient([
      [call("c1", "fetch_docs"), done],
      [text("again"), done],
    ]);
    const { outcome, notices, history } = await attempt({ client, tools: [throwingTool] });
    expect(outcome).toMatchObject({ name: "ProviderError", type: "overloaded_error" });
    expect(notices).toEqual([]);
    expect(client.requests).toHaveLength(1);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  });

  it("never runs again a round whose policy threw after the commit", async () => {
    const client = new FakeClient([
      [call("c1", "fetch_docs"), done],
      [text("again"), done],
    ]);
    const policy = () => {
      throw statusError(503, "Service Unavailable");
    };
    const { outcome, notices } = await attempt({ client, tools: [throwingTool], policy });
    expect(outcome).toMatchObject({ status: 503 });
    expect(notices).toEqual([]);
    expect(client.requests).toHaveLength(1);
  });

  it("runs again a round whose stream failed before anything was committed", async () => {
    const client = new FakeClient([
      [text("half"), streamError("api_error", "Internal server error")],
      [text("whole"), done],
    ]);
    const { outcome, notices, history } = await attempt({ client });
    expect(outcome).toEqual({ status: "completed", text: "whole", messages: history });
    expect(notices).toEqual([
      {
        attempt: 2,
        attempts: 4,
        delayMs: 1,
        reason: "api_error: Internal server error",
        errorKind: "server",
      },
    ]);
  });

  it("says a status once when the SDK's message already begins with it (OpenAI's)", async () => {
    const failure = providerErrorFrom(
      "openai",
      openaiErrors.APIError.generate(
        500,
        undefined,
        "test server: no scripted reply 5",
        new Headers(),
      ),
      openaiErrors,
    );
    expect(failure).toBeInstanceOf(ProviderError);
    const client = new FakeClient([[failure as ProviderError], [text("whole"), done]]);
    const { notices } = await attempt({ client });
    expect(notices).toEqual([
      {
        attempt: 2,
        attempts: 4,
        delayMs: 1,
        reason: "500: test server: no scripted reply 5",
        errorKind: "server",
      },
    ]);
  });

  it("gives the reason as it is to JSON consumers, and made visible on the terminal line", async () => {
    const client = new FakeClient([
      [streamError("api_error", "down \x1b[2J again")],
      [text("whole"), done],
    ]);
    const { notices } = await attempt({ client });
    expect(notices).toEqual([
      {
        attempt: 2,
        attempts: 4,
        delayMs: 1,
        reason: "api_error: down \x1b[2J again",
        errorKind: "server",
      },
    ]);
    expect(retryLine(notices[0] as RetryNotice)).toBe(
      "api_error: down ␛[2J again; retrying in 1 ms (attempt 2 of 4)",
    );
  });

  it("does not run again a stream error that does not pass with time", async () => {
    const client = new FakeClient([
      [streamError("invalid_request_error", "bad")],
      [text("whole"), done],
    ]);
    const { outcome, notices } = await attempt({ client });
    expect(outcome).toMatchObject({ type: "invalid_request_error" });
    expect(notices).toEqual([]);
  });
});

describe("which failures pass with time", () => {
  /** What the Anthropic adapter throws for what its SDK or transport threw. */
  const adapted = (error: unknown) => providerErrorFrom("anthropic", error, anthropicErrors);
  /** An HTTP error status from the Anthropic SDK, as the adapter throws it. */
  const sdkStatus = (status: number, headers: Record<string, string> = {}) =>
    adapted(
      anthropicErrors.APIError.generate(
        status,
        { type: "error", error: { type: "api_error", message: "failed" } },
        undefined,
        new Headers(headers),
      ),
    );

  /** The error of a stream that sends nothing until the idle timer aborts its request. */
  const stalled = async () => {
    const controller = new AbortController();
    const quiet = (async function* () {
      await new Promise((resolve) => controller.signal.addEventListener("abort", resolve));
      yield* [];
    })();
    try {
      for await (const _ of failWhenIdle(quiet, 10, controller)) void _;
    } catch (error) {
      return error;
    }
  };

  it.each([
    ["an overload mid-stream", streamError("overloaded_error", "Overloaded"), true],
    ["an api_error mid-stream", streamError("api_error", "x"), true],
    ["a rate limit mid-stream", streamError("rate_limit_error", "x"), true],
    ["a server_error mid-stream", streamError("server_error", "x"), true],
    ["another error type mid-stream", streamError("error", "x"), false],
    ["a 529", sdkStatus(529), true],
    ["a 500", sdkStatus(500), true],
    ["a 429", sdkStatus(429), true],
    ["a 408", sdkStatus(408), true],
    ["a 400", sdkStatus(400), false],
    ["a 401", sdkStatus(401), false],
    ["a 413", sdkStatus(413), false],
    ["a 529 the server says not to retry", sdkStatus(529, { "x-should-retry": "false" }), false],
    [
      "a connection that could not be made (the SDK retried it)",
      adapted(new anthropicErrors.APIConnectionError({ message: "Connection error." })),
      false,
    ],
    [
      "a dropped stream",
      adapted(Object.assign(new TypeError("terminated"), { cause: { code: "UND_ERR_SOCKET" } })),
      true,
    ],
    ["a plain error", new Error("model completed without text or tool calls"), false],
    ["a value that is not an error", "overloaded_error", false],
  ])("%s: %s", (_, error, retryable) => {
    expect(isRetryable(error)).toBe(retryable);
  });

  it("counts a stalled stream as passing", async () => {
    expect(isRetryable(adapted(await stalled()))).toBe(true);
  });

  it("reads retry-after-ms, retry-after in seconds and as a date", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    const waitFor = (headers: Record<string, string>) => retryAfterMs(new Headers(headers), now);
    expect(waitFor({ "retry-after-ms": "250" })).toBe(250);
    expect(waitFor({ "retry-after": "2" })).toBe(2000);
    expect(waitFor({ "retry-after": "Wed, 01 Jan 2025 00:00:30 GMT" })).toBe(30_000);
    expect(waitFor({ "retry-after": "soon" })).toBeUndefined();
    expect(waitFor({})).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});
