import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { SessionStatus } from "../src/cli/terminal/status-line.js";
import { textOutput } from "../src/cli/terminal/text-output.js";
import { terminalView } from "../src/cli/terminal/view.js";
import { CountingClient } from "../src/runner/usage.js";
import { stream, thinkingSignature, turn } from "../src/testing/anthropic-server.js";
import { FakeClient } from "../src/testing/fake-client.js";
import { cliEnv, runBin, sessionFiles, sessionRecords, useCliSetup } from "./support/cli.js";
import { converse, hasScript } from "./support/pty.js";
import { protocolLines } from "./support/stream-json.js";

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
    // The default model, Claude Sonnet 5.5, omits its thinking text unless asked to summarize it.
    expect(server.requests[0]?.body.thinking).toEqual({ type: "adaptive", display: "summarized" });
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

  it("turns up-front thinking off on the default model with between_tools, which its API takes", async () => {
    const { server, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "ls", input: {} }] })),
      stream(turn({ thinking: [["Listed; done."]], text: ["Nothing here."] })),
    ]);
    const run = await runBin(["--thinking", "off", "what is here?"], options);
    expect(server.rejections).toEqual([]);
    expect(run.stdout).toBe("Nothing here.\n");
    expect(run.code).toBe(0);
    expect(server.requests.map((request) => request.body.thinking)).toEqual([
      { type: "between_tools" },
      { type: "between_tools" },
    ]);
    expect(server.requests.map((request) => request.body.model)).toEqual([
      "claude-sonnet-5-5",
      "claude-sonnet-5-5",
    ]);
  });

  it("streams the thinking as its own stream-json event", async () => {
    const { options } = await setup(thinkingLoop());
    const run = await runBin(
      ["--thinking", "medium", "--output-format", "stream-json", "-p", "what is here?"],
      options,
    );
    const events = protocolLines(run.stdout);
    expect(events.filter((e) => e.type === "thinking" || e.type === "text")).toEqual([
      { version: 1, type: "thinking", text: "I will " },
      { version: 1, type: "thinking", text: "list." },
      { version: 1, type: "thinking", text: "Empty." },
      { version: 1, type: "text", text: "Nothing here." },
    ]);
  });

  it("gets no thinking text from the default model without --thinking, its signed blocks still kept", async () => {
    // Claude Sonnet 5.5 thinks by default with its thinking text omitted; nothing asks for it.
    const { server, home, options } = await setup(thinkingLoop());
    const run = await runBin(["--output-format", "stream-json", "-p", "what is here?"], options);
    expect(server.rejections).toEqual([]);
    expect(server.requests.map((request) => request.body.thinking)).toEqual([undefined, undefined]);
    const events = protocolLines(run.stdout);
    expect(events.filter((e) => e.type === "thinking" || e.type === "text")).toEqual([
      { version: 1, type: "text", text: "Nothing here." },
    ]);
    const [file] = await sessionFiles(home);
    const first = (await sessionRecords(file ?? "")).find(
      (record) => (record.message as { role?: string } | undefined)?.role === "assistant",
    );
    expect((first?.message as { reasoning?: unknown } | undefined)?.reasoning).toEqual([
      { type: "thinking", text: "", signature: thinkingSignature(""), at: { text: 0, calls: 0 } },
    ]);
  });

  it("asks for xhigh and max as the effort of adaptive thinking", async () => {
    for (const level of ["xhigh", "max"]) {
      const { server, options } = await setup(thinkingLoop());
      const run = await runBin(["--thinking", level, "what is here?"], options);
      expect(run).toEqual({ code: 0, stdout: "Nothing here.\n", stderr: "  ✓ ls\n" });
      expect(server.rejections).toEqual([]);
      expect(server.requests.map((request) => request.body.output_config)).toEqual([
        { effort: level },
        { effort: level },
      ]);
    }
  });

  it("refuses xhigh and max, in one line, for a model that thinks within a token budget", async () => {
    const { server, options } = await setup([]);
    const run = await runBin(["-m", "claude-sonnet-4-5", "--thinking", "xhigh", "hi"], options);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "mini-agent: --thinking xhigh is not taken by claude-sonnet-4-5, which thinks within a token budget: use low, medium or high\n",
    });
    expect(server.requests).toEqual([]);
  });

  it("refuses an unknown level with a usage error", async () => {
    const { options } = await setup([]);
    const run = await runBin(["--thinking", "extreme", "hi"], options);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'mini-agent: unknown thinking level "extreme" (off, low, medium, high, xhigh or max)\n',
    );
  });
});

describe.skipIf(!hasScript)("the thinking on a terminal", () => {
  it("shows each round's thinking folded, and none with --hide-thinking", async () => {
    const { server, workspace, home } = await setup([...thinkingLoop(), ...thinkingLoop()]);
    const env = cliEnv(home, server.url);
    const shown = await converse(env, workspace, [], ["--thinking", "low", '"what is here?"']);
    expect(shown.code).toBe(0);
    expect(shown.screen).toContain("  ✻ thinking\r\n    │ I will list.\r\n");
    expect(shown.screen).toContain("  ✻ thinking\r\n    │ Empty.\r\n");
    const hidden = await converse(env, workspace, [], ["--hide-thinking", '"what is here?"']);
    expect(hidden.code).toBe(0);
    expect(hidden.screen).toContain("Nothing here.");
    expect(hidden.screen).not.toContain("thinking");
  });
});

/** The terminal view of one turn over recording streams that say they are terminals. */
function terminalTurn(env: NodeJS.ProcessEnv, showThinking = true) {
  const out = sink(true);
  const err = sink(true);
  const stdin = new EventEmitter() as unknown as NodeJS.ReadStream;
  const process = { stdin, stdout: out.stream, stderr: err.stream } as unknown as Pick<
    NodeJS.Process,
    "stdin" | "stdout" | "stderr"
  >;
  const view = terminalView("text", process, env, showThinking);
  if (!view) throw new Error("no terminal view for two terminals");
  const status = new SessionStatus("m", undefined, new CountingClient(new FakeClient([])), () => 0);
  const output = view.turn(new AbortController().signal, status);
  // Only what is left once the indicator's own drawing (a carriage return line) is removed.
  const shown = () =>
    err
      .text()
      .replace(/\r[^\n\r]*(?=\r|$)/g, "")
      .replace(/\r/g, "");
  return { output, out, shown };
}

describe("the thinking view", () => {
  it("shows a round's thinking dimmed and folded before the answer, every character visible", () => {
    const { output, shown } = terminalTurn({ FORCE_COLOR: "1" });
    for (const text of ["one\ntwo\nthree\n", "four\nfive\x1b[2J\nsix\u202e"])
      output.event({ type: "thinking", text });
    output.event({ type: "text", text: "Answer." });
    expect(shown()).toBe(
      [
        "\x1b[2m  ✻ thinking\x1b[22m",
        "\x1b[2m    │ one\x1b[22m",
        "\x1b[2m    │ two\x1b[22m",
        "\x1b[2m    │ three\x1b[22m",
        "\x1b[2m    │ four\x1b[22m",
        "\x1b[2m    │ … 2 more lines\x1b[22m",
        "",
      ].join("\n"),
    );
  });

  it("has no style without colour, and shows an escape as text", () => {
    const { output, shown } = terminalTurn({ NO_COLOR: "1" });
    output.event({ type: "thinking", text: "set\x1b]0;title\x07 \u202eevil" });
    output.event({ type: "text", text: "Answer.\n" });
    expect(shown()).toBe("  ✻ thinking\n    │ set␛]0;title␇ <U+202E>evil\n");
  });

  it("shows nothing when hidden", () => {
    const { output, shown } = terminalTurn({ NO_COLOR: "1" }, false);
    output.event({ type: "thinking", text: "secret plans" });
    output.event({ type: "text", text: "Answer.\n" });
    expect(shown()).toBe("");
  });

  it("drops the thinking of a round that is run again instead of showing it with the next", () => {
    const { output, shown } = terminalTurn({ NO_COLOR: "1" });
    output.event({ type: "thinking", text: "lost thought" });
    output.event({
      type: "retry",
      notice: { attempt: 2, attempts: 3, delayMs: 0, reason: "overloaded" },
    });
    output.event({ type: "thinking", text: "kept thought" });
    output.event({ type: "text", text: "Answer.\n" });
    expect(
      shown()
        .split("\n")
        .filter((line) => line.includes("thought")),
    ).toEqual(["    │ kept thought"]);
  });

  it("is never written to a pipe", () => {
    const out = sink();
    const err = sink();
    const output = textOutput({ stdout: out.stream, stderr: err.stream });
    output.event({ type: "thinking", text: "a thought" });
    output.event({ type: "text", text: "Answer." });
    expect(out.text()).toBe("Answer.");
    expect(err.text()).toBe("");
  });
});
