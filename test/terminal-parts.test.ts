import { describe, expect, it } from "vitest";
import { lineIntent } from "../src/cli/slash-commands.js";
import { foldLines } from "../src/cli/terminal/fold.js";
import { SessionStatus, tokens } from "../src/cli/terminal/status-line.js";
import type { Compaction } from "../src/compaction/record.js";
import { columnsOf } from "../src/render/columns.js";
import { colourWanted } from "../src/render/style.js";
import { CountingClient } from "../src/runner/usage.js";
import type { ModelEvent, Usage } from "../src/types.js";

describe("colour decision", () => {
  it("follows FORCE_COLOR, then NO_COLOR, then TERM=dumb, then whether it is a terminal", () => {
    const cases: [NodeJS.ProcessEnv, boolean, boolean][] = [
      [{}, true, true],
      [{}, false, false],
      [{ NO_COLOR: "1" }, true, false],
      [{ NO_COLOR: "" }, true, true],
      [{ TERM: "dumb" }, true, false],
      [{ TERM: "xterm-256color" }, true, true],
      [{ FORCE_COLOR: "1", TERM: "dumb" }, true, true],
      [{ FORCE_COLOR: "1", NO_COLOR: "1" }, true, true],
      [{ FORCE_COLOR: "", TERM: "dumb" }, true, true],
      [{ FORCE_COLOR: "0" }, true, false],
      [{ FORCE_COLOR: "false" }, true, false],
    ];
    expect(cases.map(([env, tty]) => colourWanted(env, tty))).toEqual(cases.map((c) => c[2]));
  });
});

describe("what a typed line asks for", () => {
  it("tells commands from prompts that start with a slash", () => {
    expect(
      [
        "/exit",
        "/help",
        "/compact",
        "/compact keep the API notes",
        "/tmp",
        "/tmp is full",
        "/etc/hosts is weird?",
        "//tmp is full",
        "hello /help",
        "/",
        "/mode",
        "/mode  plan ",
      ].map(lineIntent),
    ).toEqual([
      { kind: "exit" },
      { kind: "help" },
      { kind: "compact", instructions: "" },
      { kind: "compact", instructions: "keep the API notes" },
      { kind: "unknown", name: "tmp" },
      { kind: "unknown", name: "tmp" },
      { kind: "prompt", text: "/etc/hosts is weird?" },
      { kind: "prompt", text: "/tmp is full" },
      { kind: "prompt", text: "hello /help" },
      { kind: "prompt", text: "/" },
      { kind: "mode", name: "" },
      { kind: "mode", name: "plan" },
    ]);
  });
});

describe("folding a tool's output", () => {
  it("keeps 4 lines and counts the rest, or all of 5 lines or fewer", () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `l${i + 1}`).join("\n");
    expect(foldLines(lines(7), 80)).toEqual([
      "    │ l1",
      "    │ l2",
      "    │ l3",
      "    │ l4",
      "    │ … 3 more lines",
    ]);
    expect(foldLines(`${lines(5)}\n`, 80)).toEqual([
      "    │ l1",
      "    │ l2",
      "    │ l3",
      "    │ l4",
      "    │ l5",
    ]);
    expect(foldLines("", 80)).toEqual([]);
  });

  it("cuts a line to the width and shows its controls", () => {
    expect(foldLines(`${"x".repeat(40)}\x1b[2J\tend`, 30)).toEqual([`    │ ${"x".repeat(22)}…`]);
    expect(foldLines("a\x1b[2J\tb\r", 80)).toEqual(["    │ a␛[2J  b"]);
  });
});

/** A client whose rounds report the given usages, one per round. */
function counting(usages: Usage[]): CountingClient {
  return new CountingClient({
    async *stream(): AsyncGenerator<ModelEvent> {
      yield { type: "done", usage: usages.shift() as Usage };
    },
  });
}

async function round(client: CountingClient): Promise<void> {
  for await (const _ of client.stream({ system: "", messages: [], tools: [] })) {
  }
}

describe("the status line", () => {
  it("says the context used of the window, the compactions and the tokens of the turn and the session", async () => {
    const client = counting([
      { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 3000, cacheWriteTokens: 500 },
      { inputTokens: 40_000, outputTokens: 1200 },
      { inputTokens: 9000, outputTokens: 100 },
    ]);
    let count = 0;
    const status = new SessionStatus("claude-x", 200_000, client, () => count);
    await round(client);
    expect(status.line()).toBe(
      "claude-x · context 2% of 200k · 0 compactions · tokens in/out: turn 4.5k/200, session 4.5k/200",
    );
    status.beginTurn();
    await round(client);
    expect(status.line()).toBe(
      "claude-x · context 21% of 200k · 0 compactions · tokens in/out: turn 40k/1.2k, session 45k/1.4k",
    );
    count = 1;
    status.compacted({ tokensAfter: 12_000 } as Compaction);
    expect(status.line()).toBe(
      "claude-x · context 6% of 200k · 1 compaction · tokens in/out: turn 40k/1.2k, session 45k/1.4k",
    );
    await round(client);
    expect(status.line()).toMatch(/^claude-x · context 5% of 200k · 1 compaction · /);
  });

  it("counts tokens without a window, and shows the model's name safely", async () => {
    const client = counting([{ inputTokens: 12_345, outputTokens: 6 }]);
    const status = new SessionStatus("m\x1b[2J", undefined, client, () => 2);
    await round(client);
    expect(status.line()).toBe(
      "m␛[2J · context 12k tokens · 2 compactions · tokens in/out: turn 12k/6, session 12k/6",
    );
  });

  it("writes token counts short", () => {
    expect([999, 1000, 9_950, 12_345, 999_400, 1_250_000].map(tokens)).toEqual([
      "999",
      "1.0k",
      "9.9k",
      "12k",
      "999k",
      "1.3M",
    ]);
  });
});

describe("lines of wide characters", () => {
  it("are folded and fitted by the columns they take, so none wraps", () => {
    const wide = "漢".repeat(40);
    expect(foldLines(wide, 30)).toEqual([`    │ ${"漢".repeat(11)}…`]);
    expect(columnsOf(foldLines(wide, 30)[0] ?? "")).toBe(29);
    expect(columnsOf("a漢\u0301😀")).toBe(5);
  });
});
