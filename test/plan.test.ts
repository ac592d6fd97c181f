import { describe, expect, it } from "vitest";
import { rewindAtPrompt } from "../src/cli/rewind-turn.js";
import { factsOf, mergeFacts, noFacts, renderFacts } from "../src/compaction/facts.js";
import type { TurnEvent } from "../src/runner/events.js";
import { call, done, text } from "../src/testing/fake-client.js";
import { limits } from "../src/tools/limits.js";
import { checklist, type PlanItem, planOf, planTool } from "../src/tools/plan.js";
import type { Message } from "../src/types.js";
import { trackedRunner } from "./support/changes.js";
import { useTempDirs } from "./support/temp.js";

/**
 * The plan tool: its input checked and bounded, the plan read back from a history (the input of
 * the last `plan` call that returned without error), carried by a compaction's facts, told as a
 * `plan` event by the runner and taken back by `/rewind` at the prompt.
 */

const tempDir = useTempDirs();

const first: PlanItem[] = [
  { text: "Read the notes", status: "in_progress" },
  { text: "Write the summary", status: "pending" },
];
const second: PlanItem[] = [
  { text: "Read the notes", status: "completed" },
  { text: "Write the summary", status: "in_progress" },
];

/** An assistant round with one plan call, and its result. */
const planRound = (id: string, items: unknown, isError = false): Message[] => [
  { role: "assistant", content: "", toolCalls: [{ id, name: "plan", input: { items } }] },
  { role: "tool", toolCallId: id, content: isError ? "denied" : "plan updated", isError },
];

describe("the plan tool", () => {
  const tool = planTool();

  it("takes the whole list and answers with how far it is", async () => {
    expect(await tool.execute({ items: second })).toEqual({
      content: "plan updated: 1 of 2 done",
    });
    expect(await tool.execute({ items: [] })).toEqual({ content: "plan cleared" });
  });

  it.each([
    [{}, "items must be an array"],
    [{ items: [{ text: "", status: "pending" }] }, "items.0.text must not be empty"],
    [
      { items: [{ text: "x".repeat(limits.planItemChars + 1), status: "pending" }] },
      `items.0.text must be at most ${limits.planItemChars} characters`,
    ],
    [
      { items: [{ text: "step" }] },
      'items.0.status must be one of "pending", "in_progress", "completed"',
    ],
    [
      { items: [{ text: "step", status: "done" }] },
      'items.0.status must be one of "pending", "in_progress", "completed"',
    ],
    [
      { items: Array.from({ length: limits.planItems + 1 }, () => first[0]) },
      `items must have at most ${limits.planItems} items`,
    ],
  ])("refuses %j in one line", async (input, problem) => {
    expect(await tool.execute(input)).toEqual({
      content: `invalid plan input: ${problem}`,
      isError: true,
    });
  });
});

describe("the plan of a history", () => {
  it("is the input of the last plan call that returned without error", () => {
    expect(planOf([{ role: "user", content: "hi" }])).toBeUndefined();
    expect(planOf([...planRound("p1", first), ...planRound("p2", second)])).toEqual(second);
    // A denied call, or one whose input is not a plan, sets nothing.
    expect(planOf([...planRound("p1", first), ...planRound("p2", second, true)])).toEqual(first);
    expect(planOf([...planRound("p1", first), ...planRound("p2", "none")])).toEqual(first);
  });

  it("keeps only each item's text and status", () => {
    const extra = [{ text: "Read", status: "pending", id: "1", priority: "high" }];
    expect(planOf(planRound("p1", extra))).toEqual([{ text: "Read", status: "pending" }]);
  });

  it("shows as a checklist", () => {
    expect(checklist(second)).toEqual(["[x] Read the notes", "[>] Write the summary"]);
  });
});

describe("the plan in a compaction's facts", () => {
  it("is the covered part's last plan, or the earlier compaction's when it set none", () => {
    const facts = factsOf([...planRound("p1", first), ...planRound("p2", second)]);
    expect(facts.plan).toEqual(second);
    expect(mergeFacts(facts, factsOf([{ role: "user", content: "go on" }])).plan).toEqual(second);
    expect(mergeFacts(facts, factsOf(planRound("p3", []))).plan).toEqual([]);
    expect(factsOf([{ role: "user", content: "hi" }])).toEqual(noFacts);
  });

  it("is rendered one item a line, its text quoted", () => {
    const facts = {
      ...noFacts,
      plan: [{ text: 'Read\n## Summary "x"', status: "pending" as const }],
    };
    expect(renderFacts(facts).split("\n").slice(-2)).toEqual([
      "The plan, as the last plan call left it:",
      '- [ ] "Read\\n## Summary \\"x\\""',
    ]);
    expect(renderFacts(noFacts)).not.toContain("plan");
  });
});

describe("the plan in a session runner", () => {
  it("tells a plan event after the result of a call that set it, and none for a refused one", async () => {
    const session = await trackedRunner(
      await tempDir(),
      [
        [call("p1", "plan", { items: first }), call("p2", "plan", { items: "none" }), done],
        [text("planned"), done],
      ],
      { plan: true },
    );
    const events: TurnEvent[] = [];
    await session.runner.runTurn("plan it", { onEvent: (event) => events.push(event) });
    const told = events.flatMap((event) =>
      event.type === "plan"
        ? ["plan"]
        : event.type === "message" && event.message.role === "tool"
          ? [event.message.toolCallId]
          : [],
    );
    expect(told).toEqual(["p1", "plan", "p2"]);
    expect(events.find((event) => event.type === "plan")).toEqual({ type: "plan", items: first });
    expect(session.runner.plan).toEqual(first);
  });

  it("goes back to the older plan with /rewind at the prompt, and says so", async () => {
    const session = await trackedRunner(
      await tempDir(),
      [
        [call("p1", "plan", { items: first }), done],
        [text("planned"), done],
        [call("p2", "plan", { items: second }), done],
        [text("read"), done],
        [text("on the branch"), done],
      ],
      { plan: true },
    );
    const { runner, journal, workspace, client } = session;
    await runner.runTurn("plan it");
    await runner.runTurn("the notes are read");
    expect(runner.plan).toEqual(second);
    let shown = "";
    const parts = { runner, journal, workspace, stateDir: session.state };
    await rewindAtPrompt({ ...parts, write: (t) => (shown += t) }, { kind: "rewind", to: 2 });
    expect(shown).toBe(
      [
        "mini-agent: the conversation went back to just before prompt 2; prompt 2 stays in the session file as a branch",
        "mini-agent: the plan as it was then:",
        "    [>] Read the notes",
        "    [ ] Write the summary",
        "",
      ].join("\n"),
    );
    expect(runner.plan).toEqual(first);
    // The model is sent the branch: the first plan call only.
    await runner.runTurn("again");
    const calls = client.requests
      .at(-1)
      ?.messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls.map((c) => c.id) : []));
    expect(calls).toEqual(["p1"]);

    shown = "";
    await rewindAtPrompt({ ...parts, write: (t) => (shown += t) }, { kind: "rewind", to: 1 });
    expect(shown.split("\n").slice(-2)).toEqual(["mini-agent: there was no plan then", ""]);
    expect(runner.plan).toBeUndefined();
  });
});
