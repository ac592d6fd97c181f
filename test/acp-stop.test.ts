import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { invalidLines, noAnswer, withAcpAgent } from "./support/acp.js";
import { runBin, sessionFiles, sessionRecords, useCliSetup } from "./support/cli.js";
import { until } from "./support/until.js";

const setup = useCliSetup();

describe("mini-agent acp stopped in the middle of a turn", () => {
  for (const [how, code] of [
    ["the editor closes stdin", 0],
    ["SIGTERM", 143],
    ["SIGINT", 130],
    ["SIGHUP", 129],
  ] as const)
    it(`ends the turn when ${how}: the running call gets its result and the turn its end`, async () => {
      const sleep = { id: "toolu_1", name: "bash", input: { command: "sleep 30" } };
      const { workspace, home, options } = await setup([stream(turn({ calls: [sleep] }))]);
      const { run, code: exit } = await withAcpAgent(
        ["--sandbox", "off", "--allow-bash"],
        options,
        noAnswer,
        async (agent, run) => {
          await agent.request("initialize", { protocolVersion: 1 });
          const { sessionId } = await agent.request("session/new", {
            cwd: workspace,
            mcpServers: [],
          });
          const prompt = agent
            .request("session/prompt", { sessionId, prompt: [{ type: "text", text: "wait" }] })
            .catch(() => undefined);
          await until(() =>
            run.updates.some(
              ({ update }) =>
                update.sessionUpdate === "tool_call_update" && update.status === "in_progress",
            ),
          );
          // Closing stdin is what the harness does once this returns.
          if (how === "the editor closes stdin") return;
          run.kill(how);
          await prompt;
        },
      );
      expect(exit).toBe(code);
      expect(invalidLines(run.lines)).toEqual([]);
      const [file] = await sessionFiles(home);
      const records = await sessionRecords(file ?? "");
      const results = records.filter(
        (r) => r.type === "message" && (r.message as { role: string }).role === "tool",
      );
      expect(results.map((r) => (r.message as { toolCallId: string }).toolCallId)).toEqual([
        "toolu_1",
      ]);
      expect(results.map((r) => (r.message as { isError: boolean }).isError)).toEqual([true]);
      expect(records.at(-1)).toEqual({
        type: "turn_end",
        status: "aborted",
        durationMs: expect.any(Number),
      });
    }, 40_000);
});

describe("mini-agent acp given a message over the protocol's bound", () => {
  it("says in one line on stderr why the connection ended, and exits 1", async () => {
    const { options } = await setup([]);
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: 1, pad: "x".repeat(33 * 1024 * 1024) },
    });
    const run = await runBin(["acp", "--sandbox", "off"], { ...options, input: `${huge}\n` });
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "mini-agent: the editor's connection ended: Incoming ACP data exceeds the configured 33554432 byte limit\n",
    });
  }, 30_000);
});
