import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { BudgetClient, BudgetExceeded, budgetStop } from "../src/runner/budget.js";
import { readSession } from "../src/session/session.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { call, FakeClient, text } from "../src/testing/fake-client.js";
import { assertValidHistory } from "../src/testing/history.js";
import type { Message, ModelEvent, Tool } from "../src/types.js";
import { runBin, sessionFiles, useCliSetup } from "./support/cli.js";
import { protocolLines } from "./support/stream-json.js";

const setup = useCliSetup();

const echo: Tool = {
  spec: { name: "echo", description: "echoes", inputSchema: { type: "object" } },
  execute: async (input) => ({ content: JSON.stringify(input) }),
};
const used = (inputTokens: number, outputTokens: number): ModelEvent => ({
  type: "done",
  usage: { inputTokens, outputTokens },
});

describe("the token budget", () => {
  it("sends a request only while the tokens used plus the previous request's stay within the budget", async () => {
    const fake = new FakeClient([
      [call("c1", "echo", { n: 1 }), used(100, 10)],
      [call("c2", "echo", { n: 2 }), used(120, 10)],
      [text("never sent"), used(1, 1)],
    ]);
    // After two requests: 110 + 130 = 240 used; the next one needs at least 130: 370 > 369.
    const client = new BudgetClient(fake, 369);
    const messages: Message[] = [{ role: "user", content: "go" }];
    const run = runAgent({
      client,
      tools: [echo],
      system: "",
      messages,
      onEvent: (event) => {
        if (event.type === "message") messages.push(event.message);
      },
    });
    await expect(run).rejects.toEqual(new BudgetExceeded(369, 240, 130));
    await expect(run).rejects.toThrow(
      "token budget reached: 240 tokens used, the next request needs at least 130 more, the budget is 369 (--token-budget)",
    );
    expect(fake.requests).toHaveLength(2);
    assertValidHistory(messages);
    expect(messages.at(-1)).toEqual({
      role: "tool",
      toolCallId: "c2",
      content: '{"n":2}',
      isError: false,
    });
  });

  it("sends the request that lands exactly on the budget", async () => {
    const fake = new FakeClient([
      [call("c1", "echo"), used(100, 10)],
      [call("c2", "echo"), used(120, 10)],
      [text("the third"), used(1, 1)],
    ]);
    const result = await runAgent({
      client: new BudgetClient(fake, 370),
      tools: [echo],
      system: "",
      messages: [{ role: "user", content: "go" }],
    });
    expect(result.text).toBe("the third");
    expect(fake.requests).toHaveLength(3);
  });

  it("is found behind the error that wraps it", () => {
    const stop = new BudgetExceeded(10, 9, 2);
    expect(budgetStop(new Error("compaction failed", { cause: stop }))).toBe(stop);
    expect(budgetStop(new Error("other"))).toBeUndefined();
  });

  it("stops the CLI at the right request with exit 5, a budget result and a valid session", async () => {
    const round = (n: number) =>
      stream(turn({ calls: [{ id: `toolu_${n}`, name: "read", input: { path: "a.txt" } }] }));
    const { server, home, workspace, options } = await setup([round(1), round(2), round(3)]);
    await writeFile(join(workspace, "a.txt"), "hi\n");
    // Each request reports 10 input and 5 output tokens: after two, 30 used; the third needs 15.
    const run = await runBin(
      ["--output-format", "stream-json", "--token-budget", "44", "-p", "read it again"],
      options,
    );
    const message =
      "token budget reached: 30 tokens used, the next request needs at least 15 more, the budget is 44 (--token-budget)";
    expect(run.stderr).toBe(`mini-agent: ${message}\n`);
    expect(run.code).toBe(5);
    expect(server.requests).toHaveLength(2);
    const lines = protocolLines(run.stdout);
    expect(lines.at(-1)).toEqual({
      version: 1,
      type: "result",
      status: "budget_exceeded",
      text: "",
      sessionId: expect.any(String),
      usage: { inputTokens: 20, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
      denied: [],
      error: message,
    });
    const [file] = await sessionFiles(home);
    const loaded = await readSession(file ?? "");
    expect(loaded.repaired).toBe(0);
    assertValidHistory(loaded.messages);
    expect(loaded.messages.filter((m) => m.role === "tool").map((m) => m.toolCallId)).toEqual([
      "toolu_1",
      "toolu_2",
    ]);
  });

  it("reports the budget stop in the json result too", async () => {
    const round = stream(turn({ calls: [{ id: "toolu_1", name: "ls", input: {} }] }));
    const { server, options } = await setup([round, round]);
    const run = await runBin(
      ["--output-format", "json", "--token-budget", "29", "-p", "go"],
      options,
    );
    expect(run.code).toBe(5);
    expect(server.requests).toHaveLength(1);
    expect(JSON.parse(run.stdout)).toEqual({
      status: "budget_exceeded",
      text: "",
      sessionId: expect.any(String),
      usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
      error:
        "token budget reached: 15 tokens used, the next request needs at least 15 more, the budget is 29 (--token-budget)",
    });
  });

  it("refuses a budget that is not a whole number of tokens", async () => {
    const { options } = await setup([]);
    const run = await runBin(["--token-budget", "1e3", "task"], options);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'mini-agent: --token-budget must be a whole number of tokens, at least 1, not "1e3"\n',
    });
  });
});
