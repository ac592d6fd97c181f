import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { status, stream, turn } from "../src/testing/anthropic-server.js";
import { errorOf, invalidLines, noAnswer, withAcpAgent } from "./support/acp.js";
import { useCliSetup } from "./support/cli.js";

/**
 * An editor starts `mini-agent acp` with its own environment, often without the provider's key
 * (newcomer report F2). The agent answers `initialize` with how to set the key, opens sessions,
 * and fails only the prompt, with the JSON-RPC error an editor shows for missing authentication;
 * it never exits first. A key the provider refuses fails the prompt the same way.
 */

const setup = useCliSetup();

const prompt = (agent: acp.ClientContext, sessionId: string, text: string) =>
  agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

/** JSON-RPC's "authentication required" (ACP's `auth_required`). */
const AUTH_REQUIRED = -32000;

const authMethods = [
  {
    id: "anthropic-api-key",
    name: "Anthropic API key",
    description:
      "Set ANTHROPIC_API_KEY in the environment the editor starts mini-agent with (its agent server settings), then restart the agent.",
  },
];

describe("mini-agent acp without a usable key", () => {
  it("answers initialize with how to set the key, opens a session, and fails only the prompt", async () => {
    const { server, workspace, options } = await setup([stream(turn({ text: "never" }))]);
    const { ANTHROPIC_API_KEY: _key, ...env } = options.env;
    const { value, run, code } = await withAcpAgent(
      ["--sandbox", "off"],
      { ...options, env },
      noAnswer,
      async (agent) => {
        const init = await agent.request("initialize", { protocolVersion: 1 });
        const session = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
        const failed = await errorOf(prompt(agent, session.sessionId, "hello"));
        const again = await errorOf(prompt(agent, session.sessionId, "hello again"));
        const listed = await agent.request("session/list", {});
        return { init, failed, again, listed: listed.sessions.length };
      },
    );
    expect(value.init.authMethods).toEqual(authMethods);
    const failed = {
      code: AUTH_REQUIRED,
      message: expect.stringContaining(
        "ANTHROPIC_API_KEY is not set: export your Anthropic API key in it",
      ),
    };
    expect(value.failed).toEqual(failed);
    expect(value.again).toEqual(failed);
    expect(value.listed).toBe(1);
    expect(code).toBe(0);
    expect(server.requests).toEqual([]);
    expect(invalidLines(run.lines)).toEqual([]);
  });

  it("fails the prompt as unauthenticated when the provider refuses the key, and goes on", async () => {
    const { workspace, options } = await setup([
      status(401, undefined, "invalid x-api-key"),
      stream(turn({ text: "fine now" })),
    ]);
    const { value, code } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent) => {
        const init = await agent.request("initialize", { protocolVersion: 1 });
        const session = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
        const failed = await errorOf(prompt(agent, session.sessionId, "hello"));
        const next = await prompt(agent, session.sessionId, "hello again");
        return { init, failed, next };
      },
    );
    expect(value.init.authMethods).toEqual(authMethods);
    expect(value.failed).toEqual({
      code: AUTH_REQUIRED,
      message: expect.stringContaining(
        "provider error 401 authentication_error: invalid x-api-key",
      ),
    });
    expect(value.next).toEqual({ stopReason: "end_turn" });
    expect(code).toBe(0);
  });
});
