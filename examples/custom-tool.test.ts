import { Type } from "@sinclair/typebox";
import { type BeforeToolCall, defineTool, runAgent } from "mini-agent";
import { assertValidHistory, call, done, FakeClient, text } from "mini-agent/testing";
import { expect, it } from "vitest";

// A custom tool: looks up a ticket's title.
const tickets = defineTool({
  name: "ticket",
  description: "The title of a ticket, by number.",
  input: Type.Object({ number: Type.Integer() }),
  run: async ({ number }) => ({
    content: number === 7 ? "Login fails on Safari" : "no such ticket",
  }),
});

// A custom policy: tickets above 100 are private.
const noPrivateTickets: BeforeToolCall = (toolCall) =>
  toolCall.name === "ticket" && Number(toolCall.input.number) > 100
    ? { approved: false, reason: "tickets above 100 are private" }
    : { approved: true };

it("answers from the ticket tool and keeps private tickets out", async () => {
  const model = new FakeClient([
    [call("c1", "ticket", { number: 7 }), call("c2", "ticket", { number: 512 }), done],
    [text("Ticket 7 is the Safari login bug."), done],
  ]);
  const result = await runAgent({
    client: model,
    tools: [tickets],
    system: "You triage tickets.",
    messages: [{ role: "user", content: "What are tickets 7 and 512?" }],
    beforeToolCall: noPrivateTickets,
  });

  expect(result.status).toBe("completed");
  assertValidHistory(result.messages); // every call answered exactly once
  // The second request carried both results: the tool's answer and the policy's denial.
  expect(model.requests[1]?.messages.slice(2)).toEqual([
    { role: "tool", toolCallId: "c1", content: "Login fails on Safari", isError: false },
    { role: "tool", toolCallId: "c2", content: "tickets above 100 are private", isError: true },
  ]);
});
