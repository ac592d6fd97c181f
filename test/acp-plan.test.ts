import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { invalidLines, noAnswer, withAcpAgent } from "./support/acp.js";
import { useCliSetup } from "./support/cli.js";

/**
 * The model's plan in an editor, through the SDK's own client side: a `plan` update (the whole
 * list, each entry `medium`) after the call that set it, and the session's plan again at the end
 * of a `session/load`.
 */

const setup = useCliSetup();

const items = [
  { text: "Read the notes", status: "completed" },
  { text: "Write the summary", status: "in_progress" },
  { text: "Check the links", status: "pending" },
];
const planUpdate = {
  sessionUpdate: "plan",
  entries: [
    { content: "Read the notes", priority: "medium", status: "completed" },
    { content: "Write the summary", priority: "medium", status: "in_progress" },
    { content: "Check the links", priority: "medium", status: "pending" },
  ],
};

describe("the plan in mini-agent acp", () => {
  it("sends a plan update after the call that set it, and again when the session is loaded", async () => {
    const { workspace, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_p1", name: "plan", input: { items } }] })),
      stream(turn({ text: "planned" })),
    ]);
    const { value: sessionId, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const { sessionId } = await agent.request("session/new", {
          cwd: workspace,
          mcpServers: [],
        });
        const prompt = [{ type: "text" as const, text: "plan it" }];
        expect(await agent.request("session/prompt", { sessionId, prompt })).toEqual({
          stopReason: "end_turn",
        });
        return sessionId;
      },
    );
    expect(run.updates.map((note) => note.update)).toEqual([
      {
        sessionUpdate: "tool_call",
        toolCallId: "toolu_p1",
        title: "plan",
        kind: "think",
        status: "pending",
        locations: [],
        rawInput: { items },
      },
      { sessionUpdate: "tool_call_update", toolCallId: "toolu_p1", status: "in_progress" },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "toolu_p1",
        status: "completed",
        content: [
          { type: "content", content: { type: "text", text: "plan updated: 1 of 3 done" } },
        ],
        rawOutput: { content: "plan updated: 1 of 3 done", isError: false },
      },
      planUpdate,
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "planned" } },
    ]);
    expect(invalidLines(run.lines)).toEqual([]);

    const loaded = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      await agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
    });
    const updates = loaded.run.updates.map((note) => note.update);
    expect(updates.map((update) => update.sessionUpdate)).toEqual([
      "user_message_chunk",
      "tool_call",
      "tool_call_update",
      "agent_message_chunk",
      "plan",
    ]);
    expect(updates.at(-1)).toEqual(planUpdate);
    expect(invalidLines(loaded.run.lines)).toEqual([]);
  });
});
