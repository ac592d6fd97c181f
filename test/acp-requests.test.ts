import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { errorOf, invalidLines, withAcpAgent } from "./support/acp.js";
import { useCliSetup } from "./support/cli.js";

const setup = useCliSetup();

const noAnswer = (): acp.RequestPermissionResponse => {
  throw new Error("no permission request was expected");
};

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
});
