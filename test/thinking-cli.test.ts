import { describe, expect, it } from "vitest";
import { textOutput } from "../src/cli/text-output.js";
import { thinkingView } from "../src/cli/thinking-view.js";
import { stream, thinkingSignature, turn } from "./support/anthropic-server.js";
import { cliEnv, runBin, sessionFiles, sessionRecords, useCliSetup } from "./support/cli.js";
import { converse, hasScript } from "./support/pty.js";

/**
 * `--thinking` and how the CLI shows and stores the model's thinking: asked for as the model's
 * API takes it, kept in the session with its signature, a `thinking` event in stream-json,
 * dimmed and folded on a terminal, absent from a pipe's answer.
 */

const setup = useCliSetup();

/** A stream that records what is written, with `isTTY` as given. */
function sink(isTTY = false) {
  const chunks: string[] = [];
  const stream = {
    isTTY,
    write: (chunk: string) => {
      chunks.push(chunk);
      return true;
    },
  } as unknown as NodeJS.WritableStream;
  return { stream, text: () => chunks.join("") };
}

const thinkingLoop = () => [
  stream(
    turn({ thinking: [["I will ", "list."]], calls: [{ id: "toolu_1", name: "ls", input: {} }] }),
  ),
  stream(turn({ thinking: [["Empty."]], text: ["Nothing here."] })),
];

describe("--thinking", () => {
  it("asks the model to think, keeps the thinking in the session and prints only the answer to a pipe", async () => {
    const { server, home, options } = await setup(thinkingLoop());
    const run = await runBin(["--thinking", "high", "what is here?"], options);
    expect(run.stdout).toBe("Nothing here.\n");
    expect(run.stderr).toBe("  ✓ ls\n");
    expect(run.code).toBe(0);
    expect(server.rejections).toEqual([]);
    expect(server.requests[0]?.body.thinking).toEqual({ type: "adaptive" });
    expect(server.requests[0]?.body.output_config).toEqual({ effort: "high" });
    const [file] = await sessionFiles(home);
    const rounds = (await sessionRecords(file ?? "")).flatMap((record) => {
      const message = record.message as { role?: string; reasoning?: unknown } | undefined;
      return message?.role === "assistant" ? [message.reasoning] : [];
    });
    expect(rounds).toEqual([
      [
        {
          type: "thinking",
          text: "I will list.",
          signature: thinkingSignature("I will list."),
          at: { text: 0, calls: 0 },
        },
      ],
      [
        {
          type: "thinking",
          text: "Empty.",
          signature: thinkingSignature("Empty."),
          at: { text: 0, calls: 0 },
        },
      ],
    ]);
  });

  it("streams the thinking as its own stream-json event", async () => {
    const { options } = await setup(thinkingLoop());
    const run = await runBin(["--output-format", "stream-json", "-p", "what is here?"], options);
    const events = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    expect(events.filter((e) => e.type === "thinking" || e.type === "text")).toEqual([
      { type: "thinking", text: "I will " },
      { type: "thinking", text: "list." },
      { type: "thinking", text: "Empty." },
      { type: "text", text: "Nothing here." },
    ]);
  });

  it("refuses an unknown level with a usage error", async () => {
    const { options } = await setup([]);
    const run = await runBin(["--thinking", "max", "hi"], options);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'mini-agent: unknown thinking level "max" (off, low, medium or high)\n',
    );
  });
});

describe.skipIf(!hasScript)("the thinking on a terminal", () => {
  it("shows each round's thinking dimmed, and none with --hide-thinking", async () => {
    const { server, workspace, home } = await setup([...thinkingLoop(), ...thinkingLoop()]);
    const env = cliEnv(home, server.url);
    const shown = await converse(env, workspace, [], ["--thinking", "low", '"what is here?"']);
    expect(shown.code).toBe(0);
    expect(shown.screen).toContain("\x1b[2m✻ thinking\r\n  I will list.\x1b[22m");
    expect(shown.screen).toContain("\x1b[2m✻ thinking\r\n  Empty.\x1b[22m");
    const hidden = await converse(env, workspace, [], ["--hide-thinking", '"what is here?"']);
    expect(hidden.code).toBe(0);
    expect(hidden.screen).toContain("Nothing here.");
    expect(hidden.screen).not.toContain("thinking");
  });
});

describe("the thinking view", () => {
  it("shows a round's thinking dimmed on stderr, folded, before the answer", () => {
    const out = sink();
    const err = sink(true);
    const output = textOutput({ stdout: out.stream, stderr: err.stream }, true);
    for (const text of ["one\ntwo\nthree\n", "four\nfive\x1b[2J\nsix"])
      output.event({ type: "thinking", text });
    output.event({ type: "text", text: "Answer." });
    expect(err.text()).toBe(
      "\x1b[2m✻ thinking\n  one\n  two\n  three\n  four\n  [… 2 more lines of thinking]\x1b[22m\n",
    );
    expect(out.text()).toBe("Answer.");
  });

  it("shows every character of the thinking as visible text", () => {
    const err = sink(true);
    const view = thinkingView(err.stream, true);
    view.add("set\x1b]0;title\x07 \u202eevil");
    view.end();
    expect(err.text()).toBe("\x1b[2m✻ thinking\n  set␛]0;title␇ <U+202E>evil\x1b[22m\n");
  });

  it("shows nothing when hidden, and nothing for a round without thinking", () => {
    const err = sink(true);
    const hidden = thinkingView(err.stream, false);
    hidden.add("secret plans");
    hidden.end();
    const shown = thinkingView(err.stream, true);
    shown.end();
    expect(err.text()).toBe("");
  });
});

describe("the thinking view and a lost round", () => {
  it("drops the thinking of a round that is run again instead of showing it with the next", () => {
    const out = sink();
    const err = sink(true);
    const output = textOutput({ stdout: out.stream, stderr: err.stream }, true);
    output.event({ type: "thinking", text: "lost thought" });
    output.retry({ attempt: 2, attempts: 3, delayMs: 0, reason: "overloaded" });
    output.event({ type: "thinking", text: "kept thought" });
    output.event({ type: "text", text: "Answer." });
    const shown = err
      .text()
      .split("\n")
      .filter((line) => line.includes("thought"));
    expect(shown).toEqual(["  kept thought\x1b[22m"]);
  });
});
