import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { summaryPrompt } from "../src/compaction/summary.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import type { Body, Reply } from "../src/testing/sse-server.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { afterBanner, converse, hasScript, screenOf } from "./support/pty.js";
import { protocolLines } from "./support/stream-json.js";

/**
 * The plan tool through the built CLI against the strict local server: the model's checklist is
 * shown when it changes and when a session is resumed, carried by a compaction's facts, taken
 * back by a rewind, and written as a stream-json event and in the export.
 */

const setup = useCliSetup();
const limit = 8000;
const summary = "## Goal\nsum up\n## Decisions\n-\n## Done\nplanned\n## In progress\n-\n## Next\n-";

const firstPlan = [
  { text: "Read the notes", status: "in_progress" },
  { text: "Write the summary", status: "pending" },
];
const secondPlan = [
  { text: "Read the notes", status: "completed" },
  { text: "Write the summary", status: "in_progress" },
];
const firstLines = "    [>] Read the notes\n    [ ] Write the summary\n";
const secondLines = "    [x] Read the notes\n    [>] Write the summary\n";

const systemText = (body: Body) =>
  ((body.system ?? []) as { text: string }[]).map((block) => block.text).join("");
const isSummary = (body: Body) => systemText(body) === summaryPrompt;
const firstText = (body: Body | undefined) =>
  ((body?.messages ?? []) as { content: { text?: string }[] }[])[0]?.content[0]?.text ?? "";
/** The inputs of the `plan` calls a request carries, in order. */
const planInputs = (body: Body | undefined) =>
  ((body?.messages ?? []) as { content: { type: string; name?: string; input?: unknown }[] }[])
    .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
    .filter((block) => block.type === "tool_use" && block.name === "plan")
    .map((block) => block.input);

const planCall = (id: string, items: object[]) =>
  stream(turn({ calls: [{ id, name: "plan", input: { items } }] }));
const read = (id: string) =>
  stream(turn({ calls: [{ id, name: "read", input: { path: "big.txt" } }] }));

/**
 * A server whose rounds the test queues before each run; a summary request always gets the
 * summary. Runs out loudly: a round not queued is a 500 the test sees.
 */
async function planSetup() {
  const queued: Reply[] = [];
  const dispatch = (body: Body): Reply =>
    isSummary(body)
      ? stream(turn({ text: [summary] }))
      : (queued.shift() ?? stream(turn({ text: ["no round was queued"] })));
  const parts = await setup(
    Array.from({ length: 40 }, () => dispatch),
    { contextLimit: limit },
  );
  await writeFile(join(parts.workspace, "big.txt"), "a line of a rather large file\n".repeat(200));
  const queue = (...replies: Reply[]) => queued.push(...replies);
  const run = (args: string[], ...replies: Reply[]) => {
    queue(...replies);
    return runBin(args, parts.options);
  };
  return { ...parts, queue, run };
}

describe("the plan tool in the CLI", () => {
  it("writes a plan, resumes, compacts and still shows it", async () => {
    const { server, run } = await planSetup();
    const window = ["--context-window", String(limit)];

    const first = await run(
      [...window, "plan it"],
      planCall("toolu_p1", firstPlan),
      stream(turn({ text: ["planned"] })),
    );
    expect(first).toEqual({ code: 0, stdout: "planned\n", stderr: `  ✓ plan\n${firstLines}` });

    const reads = ["toolu_r1", "toolu_r2", "toolu_r3", "toolu_r4"].map(read);
    const second = await run(
      [...window, "--continue", "read it over and over"],
      ...reads,
      stream(turn({ text: ["read"] })),
    );
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(
      new RegExp(
        `^mini-agent: the plan so far:\\n${escaped(firstLines)}(  ✓ read big.txt\\n)+mini-agent: compacted the conversation`,
      ),
    );
    const bodies = server.requests.map((request) => request.body);
    const compacted = bodies.slice(bodies.findIndex(isSummary) + 1);
    expect(compacted.length).toBeGreaterThan(0);
    const facts =
      'The plan, as the last plan call left it:\n- [>] "Read the notes"\n- [ ] "Write the summary"';
    for (const body of compacted) {
      expect(firstText(body)).toContain(facts);
      // The plan call itself was covered by the compaction: the facts carry the plan.
      expect(planInputs(body)).toEqual([]);
    }

    const before = server.requests.length;
    const third = await run(
      [...window, "--continue", "where are we?"],
      stream(turn({ text: ["here"] })),
    );
    expect(third).toEqual({
      code: 0,
      stdout: "here\n",
      stderr: `mini-agent: the plan so far:\n${firstLines}`,
    });
    const next = server.requests[before]?.body;
    expect(firstText(next)).toContain(facts);
    expect(planInputs(next)).toEqual([]);
    expect(server.rejections).toEqual([]);

    // The export shows the plan the call set, and the one the compaction's facts kept.
    const exported = await run(["export", "--format", "md", "-o", "-"]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain(
      "Plan:\n\n```text\n[>] Read the notes\n[ ] Write the summary\n```\n",
    );
    expect(exported.stdout).toContain(
      "Plan:\n\n- `[>] Read the notes`\n- `[ ] Write the summary`\n",
    );
    const page = await run(["export", "--format", "html", "-o", "-"]);
    expect(page.stdout).toContain("<pre>[&gt;] Read the notes\n[ ] Write the summary</pre>");
  }, 60_000);

  it("shows the older plan after a rewind to before the prompt that changed it", async () => {
    const { server, run } = await planSetup();
    await run(["plan it"], planCall("toolu_p1", firstPlan), stream(turn({ text: ["planned"] })));
    const second = await run(
      ["--continue", "the notes are read"],
      planCall("toolu_p2", secondPlan),
      stream(turn({ text: ["on to the summary"] })),
    );
    expect(second.stderr).toBe(
      `mini-agent: the plan so far:\n${firstLines}  ✓ plan\n${secondLines}`,
    );

    const rewound = await run(["rewind", "--to", "2", "--conversation-only"]);
    expect(rewound.code).toBe(0);

    const before = server.requests.length;
    const third = await run(["--continue", "again"], stream(turn({ text: ["again"] })));
    expect(third.stderr).toBe(`mini-agent: the plan so far:\n${firstLines}`);
    expect(planInputs(server.requests[before]?.body)).toEqual([{ items: firstPlan }]);
  }, 30_000);

  it("emits a plan event in stream-json after the call's result", async () => {
    const { run } = await planSetup();
    const result = await run(
      ["--output-format", "stream-json", "plan it"],
      planCall("toolu_p1", firstPlan),
      stream(turn({ text: ["planned"] })),
    );
    expect(result.code).toBe(0);
    const lines = protocolLines(result.stdout);
    const at = lines.findIndex((line) => line.type === "tool_result");
    expect(lines.slice(at, at + 2)).toEqual([
      {
        version: 1,
        type: "tool_result",
        id: "toolu_p1",
        content: "plan updated: 0 of 2 done",
        isError: false,
      },
      { version: 1, type: "plan", items: firstPlan },
    ]);
    expect(lines.filter((line) => line.type === "plan")).toHaveLength(1);
  });

  it("sets no plan with a call it refuses, and says why in one line", async () => {
    const { run } = await planSetup();
    const bad = [{ text: "Read the notes", status: "started" }];
    const result = await run(
      ["--output-format", "stream-json", "plan it"],
      planCall("toolu_p1", bad),
      stream(turn({ text: ["no plan"] })),
    );
    const lines = protocolLines(result.stdout);
    expect(lines.filter((line) => line.type === "tool_result")).toEqual([
      {
        version: 1,
        type: "tool_result",
        id: "toolu_p1",
        content:
          'invalid plan input: items.0.status must be one of "pending", "in_progress", "completed"',
        isError: true,
      },
    ]);
    expect(lines.filter((line) => line.type === "plan")).toEqual([]);
  });
});

describe.skipIf(!hasScript)("the plan on a terminal", () => {
  it("shows the checklist under the call's line, and the older one after /rewind", async () => {
    const { workspace, options, queue } = await planSetup();
    queue(
      planCall("toolu_p1", firstPlan),
      stream(turn({ text: ["planned"] })),
      planCall("toolu_p2", secondPlan),
      stream(turn({ text: ["on to the summary"] })),
    );
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", "plan it\r"],
      ["planned", ""],
      ["› ", "the notes are read\r"],
      ["on to the summary", ""],
      ["› ", "/rewind 2\r"],
      ["the plan as it was then", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    const lines = afterBanner(screenOf(screen)).map((line) =>
      line.replace(/ · \d+ms$| · \d+\.\ds$/, ""),
    );
    const plans = lines.flatMap((line, at) =>
      line === "  ✓ plan" ? [lines.slice(at, at + 3)] : [],
    );
    expect(plans).toEqual([
      ["  ✓ plan", ...firstLines.trimEnd().split("\n")],
      ["  ✓ plan", ...secondLines.trimEnd().split("\n")],
    ]);
    const at = lines.indexOf("mini-agent: the plan as it was then:");
    expect(lines.slice(at + 1, at + 3)).toEqual(firstLines.trimEnd().split("\n"));
  });
});

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
