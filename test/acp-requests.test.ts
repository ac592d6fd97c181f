import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { errorOf, invalidLines, noAnswer, select, withAcpAgent } from "./support/acp.js";
import { toolResults, useCliSetup } from "./support/cli.js";
import { everythingServer } from "./support/mcp.js";

const setup = useCliSetup();

describe("mini-agent acp with requests an editor gets wrong", () => {
  it("refuses a relative cwd in session/new and session/load, whatever folder the agent runs in", async () => {
    const { server, workspace, options } = await setup([]);
    const { value, run, code } = await withAcpAgent(
      ["--sandbox", "off"],
      { ...options, cwd: join(workspace, "..") },
      noAnswer,
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const relative = `./${workspace.split("/").at(-1)}`;
        return {
          created: await errorOf(agent.request("session/new", { cwd: relative, mcpServers: [] })),
          loaded: await errorOf(
            agent.request("session/load", { sessionId: "x", cwd: relative, mcpServers: [] }),
          ),
        };
      },
    );
    expect(code).toBe(0);
    const refusal = {
      code: -32602,
      message: `Invalid params: cwd must be an absolute path: ./${workspace.split("/").at(-1)}`,
    };
    expect(value).toEqual({ created: refusal, loaded: refusal });
    expect(invalidLines(run.lines)).toEqual([]);
    expect(server.requests).toEqual([]);
  });

  it("gives an editor's server its env values as written: no ${} is expanded from the agent's own", async () => {
    const getEnv = { id: "toolu_1", name: "mcp__everything__get-env", input: {} };
    const { server, workspace, options } = await setup([
      stream(turn({ calls: [getEnv] })),
      stream(turn({ text: "read" })),
    ]);
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      { ...options, env: { ...options.env, AGENT_ONLY: "agent value" } },
      () => select("allow_once"),
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const env: acp.EnvVariable[] = [
          { name: "AS_WRITTEN", value: "${AGENT_ONLY}" },
          { name: "UNCLOSED", value: "pa${ss" },
        ];
        const session = await agent.request("session/new", {
          cwd: workspace,
          mcpServers: [
            {
              name: "everything",
              command: process.execPath,
              args: [everythingServer(), "stdio"],
              env,
            },
          ],
        });
        return await agent.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "show the env" }],
        });
      },
    );
    expect(value).toEqual({ stopReason: "end_turn" });
    const [result] = toolResults(server.requests[1]?.body ?? {});
    const seen = JSON.parse(String(result?.content)) as Record<string, string>;
    expect({ asWritten: seen.AS_WRITTEN, unclosed: seen.UNCLOSED }).toEqual({
      asWritten: "${AGENT_ONLY}",
      unclosed: "pa${ss",
    });
    expect(invalidLines(run.lines)).toEqual([]);
    expect(server.rejections).toEqual([]);
  }, 30_000);

  it("refuses the state folder, or a folder inside it, as a session's cwd", async () => {
    const { server, home, options } = await setup([]);
    const state = join(home, "state");
    await mkdir(join(state, "sessions"), { recursive: true });
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        return await Promise.all(
          [state, join(state, "sessions")].map((cwd) =>
            errorOf(agent.request("session/new", { cwd, mcpServers: [] })),
          ),
        );
      },
    );
    expect(value).toEqual(
      [state, join(state, "sessions")].map((cwd) => ({
        code: -32602,
        message: `Invalid params: ${cwd} is mini-agent's state folder or inside it: the agent never works there (run it in a project folder)`,
      })),
    );
    expect(invalidLines(run.lines)).toEqual([]);
    expect(server.requests).toEqual([]);
  });
});
