import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Compaction } from "../src/compaction/record.js";
import { summaryPrompt } from "../src/compaction/summary.js";
import { compactionMessage } from "../src/compaction/view.js";
import { toAnthropicMessages } from "../src/providers/anthropic-protocol.js";
import { readSession } from "../src/session/session.js";
import {
  bodyTokens,
  startAnthropicServer,
  status,
  stream,
  turn,
} from "../src/testing/anthropic-server.js";
import type { Body, Reply } from "../src/testing/sse-server.js";
import { useCleanup } from "./support/cleanup.js";
import {
  cliEnv,
  failingSessionWrites,
  runBin,
  sessionFiles,
  sessionRecords,
} from "./support/cli.js";
import { converse, hasScript } from "./support/pty.js";
import { protocolLines } from "./support/stream-json.js";
import { useTempDirs } from "./support/temp.js";

/** Compaction through the real CLI against the strict local server with a small window. */

const tempDir = useTempDirs();
const track = useCleanup();
const limit = 8000;
const summary =
  "## Goal\nread big.txt\n## Decisions\n-\n## Done\nread it\n## In progress\n-\n## Next\nanswer";

const systemText = (body: Body) =>
  ((body.system ?? []) as { text: string }[]).map((block) => block.text).join("");
const isSummary = (body: Body) => systemText(body) === summaryPrompt;
const firstText = (body: Body | undefined) =>
  ((body?.messages ?? []) as { content: { text?: string }[] }[])[0]?.content[0]?.text ?? "";
const compacted = (body: Body | undefined) =>
  firstText(body).startsWith("[This conversation was compacted");

/** Reads big.txt `reads` times, one round each, then answers; the summary request gets `onSummary`. */
function script(reads: number, onSummary: () => Reply = () => stream(turn({ text: [summary] }))) {
  let round = 0;
  const dispatch = (body: Body): Reply => {
    if (isSummary(body)) return onSummary();
    round++;
    if (round > reads) return stream(turn({ text: [`done after ${reads} reads`] }));
    return stream(
      turn({ calls: [{ id: `toolu_${round}`, name: "read", input: { path: "big.txt" } }] }),
    );
  };
  return Array.from({ length: 50 }, () => dispatch);
}

async function setup(reads: number, onSummary?: () => Reply) {
  const server = track(
    await startAnthropicServer(script(reads, onSummary), { contextLimit: limit }),
  );
  const workspace = await tempDir();
  const home = await tempDir();
  await writeFile(join(workspace, "big.txt"), "a line of a rather large file\n".repeat(200));
  const options = { cwd: workspace, env: cliEnv(home, server.url) };
  return { server, workspace, home, options };
}

/** A request's messages without the prompt-cache marks the adapter adds. */
const withoutCacheMarks = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (key, item) => (key === "cache_control" ? undefined : item));

const compactedLine =
  /^mini-agent: compacted the conversation: \d+k → \d+k tokens \(1 compaction\)$/m;

describe("compaction in the CLI", () => {
  it("forgets what the agent saw: after a compaction an edit needs a fresh read", async () => {
    let round = 0;
    let summarized = false;
    let edited = false;
    const edit = { path: "big.txt", oldText: "a line", newText: "one line" };
    const dispatch = (body: Body): Reply => {
      if (isSummary(body)) {
        summarized = true;
        return stream(turn({ text: [summary] }));
      }
      round++;
      if (summarized && !edited) {
        edited = true;
        return stream(turn({ calls: [{ id: "toolu_edit", name: "edit", input: edit }] }));
      }
      if (!summarized && round <= 8)
        return stream(
          turn({ calls: [{ id: `toolu_${round}`, name: "read", input: { path: "big.txt" } }] }),
        );
      return stream(turn({ text: ["done"] }));
    };
    const server = track(
      await startAnthropicServer(
        Array.from({ length: 50 }, () => dispatch),
        { contextLimit: limit },
      ),
    );
    const workspace = await tempDir();
    await writeFile(join(workspace, "big.txt"), "a line of a rather large file\n".repeat(200));
    const options = { cwd: workspace, env: cliEnv(await tempDir(), server.url) };
    const run = await runBin(["--context-window", String(limit), "read, then edit"], options);
    expect(run.code).toBe(0);
    expect(summarized && edited).toBe(true);
    const sent = JSON.stringify(server.requests.at(-1)?.body.messages);
    expect(sent).toContain(
      "big.txt exists and has not been read since the conversation was compacted: read it first, then edit",
    );
  });

  it("compacts a one-shot task before the window fills: one line on stderr, one record", async () => {
    const { server, home, options } = await setup(4);
    const run = await runBin(
      ["--context-window", String(limit), "read big.txt over and over"],
      options,
    );
    expect(run.stdout).toBe("done after 4 reads\n");
    expect(run.stderr).toMatch(compactedLine);
    expect(run.code).toBe(0);
    expect(server.rejections).toEqual([]);
    const bodies = server.requests.map((r) => r.body);
    const at = bodies.findIndex(isSummary);
    expect(at).toBeGreaterThan(0);
    expect(bodies.slice(at + 1).every(compacted)).toBe(true);
    expect(bodies.slice(0, at).some(compacted)).toBe(false);
    expect(systemText(bodies[at + 1] ?? {})).toBe(systemText(bodies[0] ?? {}));
    expect(firstText(bodies[at + 1])).toContain("### Message 1\nread big.txt over and over");
    expect(firstText(bodies[at + 1])).toContain('Files read:\n- "big.txt"');
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((r) => r.type === "compaction")).toEqual([
      expect.objectContaining({
        count: 1,
        trigger: "size",
        summary,
        userMessages: ["read big.txt over and over"],
      }),
    ]);
    expect(records.filter((r) => r.type === "message")).toHaveLength(1 + 4 * 2 + 1);
  });

  it("reports the compaction as an event in stream-json", async () => {
    const { options } = await setup(4);
    const run = await runBin(
      ["--context-window", String(limit), "--output-format", "stream-json", "go"],
      options,
    );
    const events = protocolLines(run.stdout);
    const compactions = events.filter((e) => e.type === "compaction");
    expect(compactions).toEqual([
      {
        version: 1,
        type: "compaction",
        trigger: "size",
        count: 1,
        tokensBefore: expect.any(Number),
        tokensAfter: expect.any(Number),
      },
    ]);
    const [event] = compactions as { tokensBefore: number; tokensAfter: number }[];
    expect(event?.tokensAfter).toBeLessThan(event?.tokensBefore ?? 0);
    expect(events.at(-1)?.type).toBe("result");
    expect(run.code).toBe(0);
  });

  it("compacts on the provider's refusal when the window is unknown, and retries once", async () => {
    const { server, options } = await setup(8);
    const run = await runBin(["--model", "local-model", "go"], options);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(compactedLine);
    expect(server.rejections).toEqual([
      expect.stringMatching(/^prompt is too long: \d+ tokens > 8000 maximum$/),
    ]);
    const kinds = server.requests.map(({ body }) =>
      bodyTokens(body) > limit ? "refused" : isSummary(body) ? "summary" : "round",
    );
    const refused = kinds.indexOf("refused");
    expect(kinds.slice(refused, refused + 3)).toEqual(["refused", "summary", "round"]);
  });

  it("stops with exit 4 and one line when the summary request fails; the session is as it was", async () => {
    const { server, home, options } = await setup(4, () =>
      status(400, undefined, "messages: bad summary"),
    );
    const run = await runBin(["--context-window", String(limit), "go"], options);
    expect(run.code).toBe(4);
    expect(run.stderr).toBe(
      "  ✓ read big.txt\n".repeat(4) +
        "mini-agent: compaction failed: the summary request failed: provider error 400 invalid_request_error: messages: bad summary (the provider rejected the request)\n",
    );
    expect(server.requests.filter((r) => isSummary(r.body))).toHaveLength(1);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.some((r) => r.type === "compaction")).toBe(false);
    const loaded = await readSession(file ?? "");
    expect(loaded.compaction).toBeUndefined();
    expect(loaded.messages[0]).toEqual({ role: "user", content: "go" });
  });

  it("runs the round again when the summary request is lost to a passing overload, as a round is", async () => {
    let summaries = 0;
    const { server, home, options } = await setup(4, () =>
      ++summaries === 1
        ? stream(turn({ text: ["## Goal\nhalf"] }), {
            errorAfter: 3,
            errorType: "overloaded_error",
          })
        : stream(turn({ text: [summary] })),
    );
    const run = await runBin(["--context-window", String(limit), "go"], options);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("done after 4 reads\n");
    expect(run.stderr).toContain(
      "mini-agent: compaction failed: the summary request failed: overloaded_error: Overloaded; retrying in 1 s (attempt 2 of 4)\n",
    );
    expect(server.requests.filter((r) => isSummary(r.body))).toHaveLength(2);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((r) => r.type === "compaction")).toHaveLength(1);
    expect(records.filter((r) => r.type === "retry")).toHaveLength(1);
    expect((await readSession(file ?? "")).repaired).toBe(0);
  }, 30_000);

  it("resumes from the last compaction: the next request is the compacted view, not the old rounds", async () => {
    const { server, home, options } = await setup(4);
    const first = await runBin(
      ["--context-window", String(limit), "read big.txt over and over"],
      options,
    );
    expect(first.code).toBe(0);
    const before = server.requests.length;
    const [file] = await sessionFiles(home);
    const { compaction, messages } = await readSession(file ?? "");
    const second = await runBin(
      ["--context-window", String(limit), "--continue", "and now?"],
      options,
    );
    expect(second.code).toBe(0);
    const next = server.requests[before]?.body;
    expect(compacted(next)).toBe(true);
    expect(firstText(next)).toContain(compaction?.summary ?? "no summary");
    const expected = toAnthropicMessages([
      compactionMessage(compaction as Compaction),
      ...messages,
      { role: "user", content: "and now?" },
    ]);
    expect(withoutCacheMarks(next?.messages)).toEqual(expected);
  });

  it("leaves the session as it was when the compaction record cannot be written", async () => {
    const { home, options } = await setup(4);
    // Writes: the header, the prompt, 4 per read round (usage, call, approval, result), the
    // summary request's usage: 20 is the record.
    const env = { ...options.env, ...failingSessionWrites(20) };
    const run = await runBin(["--context-window", String(limit), "go"], { ...options, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("mini-agent: cannot write the session in");
    expect(run.stderr).not.toContain("compacted the conversation");
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.map((r) => r.type)).toEqual([
      "session",
      "message",
      ...Array(4).fill(["usage", "message", "approval", "message"]).flat(),
      "usage",
    ]);
    const loaded = await readSession(file ?? "");
    expect(loaded.compaction).toBeUndefined();
    expect(loaded.messages).toHaveLength(9);
  });

  it("refuses a --context-window that is not a whole number from 4096 to 100000000", async () => {
    const { server, options } = await setup(0);
    for (const value of ["abc", "4095", "12.5", "1e308", "100000001"]) {
      const run = await runBin(["--context-window", value, "go"], options);
      expect(run).toEqual({
        code: 2,
        stdout: "",
        stderr: `mini-agent: --context-window must be a whole number of tokens from 4096 to 100000000, not ${JSON.stringify(value)}\n`,
      });
    }
    expect(server.requests).toEqual([]);
  });
});

describe.skipIf(!hasScript)("/compact at the interactive prompt", () => {
  it("compacts now, with the instructions in the summary request, and the next prompt sees the view", async () => {
    const { server, options } = await setup(2);
    const { code, screen } = await converse(options.env, options.cwd, [
      ["› ", "read big.txt twice\r"],
      ["done after 2 reads", ""],
      ["› ", "/compact keep the API notes\r"],
      ["(1 compaction)", ""],
      ["› ", "and then?\r"],
      ["done after 2 reads", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(screen).toMatch(
      /mini-agent: compacted the conversation: \d+k? → \d+k? tokens \(1 compaction\)/,
    );
    const summaries = server.requests.filter((r) => isSummary(r.body));
    expect(summaries).toHaveLength(1);
    expect(JSON.stringify(summaries[0]?.body.messages)).toContain(
      "The user asks the notes to keep this in view: keep the API notes",
    );
    const last = server.requests.at(-1)?.body;
    expect(compacted(last)).toBe(true);
    expect(firstText(last)).toContain("### Message 1\nread big.txt twice");
  });
});

describe.skipIf(!hasScript)("/compact on a session too short to compact", () => {
  it("says so before sending anything: no summary request, no round spent", async () => {
    const server = track(
      await startAnthropicServer([
        stream(turn({ text: "first answer" })),
        stream(turn({ text: "SECOND ROUND" })),
      ]),
    );
    const home = await tempDir();
    const options = { cwd: await tempDir(), env: cliEnv(home, server.url) };
    const { code, screen } = await converse(options.env, options.cwd, [
      ["› ", "hi\r"],
      ["first answer", ""],
      ["› ", "/compact\r"],
      ["nothing to compact yet", ""],
      ["› ", "again\r"],
      ["SECOND ROUND", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(screen).toMatch(
      /mini-agent: nothing to compact yet: the conversation is \d+ tokens, and a summary would leave at least \d+, over the bound of \d+ /,
    );
    expect(server.requests.map((r) => isSummary(r.body))).toEqual([false, false]);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((r) => r.type === "usage")).toHaveLength(2);
    expect(records.filter((r) => r.type === "compaction")).toEqual([]);
  });
});

describe.skipIf(!hasScript)("a failed compaction at the interactive prompt", () => {
  const failing = () => status(400, undefined, "messages: bad summary");
  const failed =
    "mini-agent: compaction failed: the summary request failed: provider error 400 invalid_request_error: messages: bad summary (the provider rejected the request)";

  it("after /compact is one line, and the session goes on", async () => {
    const { server, options } = await setup(2, failing);
    const { code, screen } = await converse(options.env, options.cwd, [
      ["› ", "read big.txt twice\r"],
      ["done after 2 reads", ""],
      ["› ", "/compact\r"],
      [failed, ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(screen).not.toContain("compacted the conversation");
    expect(server.requests.filter((r) => isSummary(r.body))).toHaveLength(1);
  });

  it("before a request ends the session with exit 4", async () => {
    const { options } = await setup(4, failing);
    const { code, screen } = await converse(
      options.env,
      options.cwd,
      [
        ["› ", "read big.txt over and over\r"],
        [failed, ""],
      ],
      ["--context-window", String(limit)],
    );
    expect(code).toBe(4);
    expect(screen).not.toContain("done after");
  });
});

describe("a refusal for length that compacting does not cure", () => {
  it("exits 4 with one line naming the provider's refusal, after one compaction and one retry", async () => {
    // A window large enough for the CLI's system prompt and tool specs, which compaction cannot
    // shrink, to fit its bound once the conversation is compacted: the retry is what fails.
    const tooLong = status(400, undefined, "prompt is too long: 12000 tokens > 10000 maximum");
    const server = track(
      await startAnthropicServer([tooLong, stream(turn({ text: [summary] })), tooLong]),
    );
    const home = await tempDir();
    const run = await runBin(["task"], { cwd: await tempDir(), env: cliEnv(home, server.url) });
    const [compactedNote, ...rest] = run.stderr.split("\n");
    expect(compactedNote).toMatch(
      /^mini-agent: compacted the conversation: 12k → \d+k tokens \(1 compaction\)$/,
    );
    expect({ ...run, stderr: rest.join("\n") }).toEqual({
      code: 4,
      stdout: "",
      stderr:
        "mini-agent: compaction failed: the provider still refuses the request as too long after compacting: provider error 400 invalid_request_error: prompt is too long: 12000 tokens > 10000 maximum (the provider rejected the request)\n",
    });
    expect(server.requests.map((r) => isSummary(r.body))).toEqual([false, true, false]);
  });
});
