import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session/session.js";
import {
  type ReplyScript,
  startAnthropicServer,
  stream,
  thinkingSignature,
  turn,
} from "../src/testing/anthropic-server.js";
import { useCleanup } from "./support/cleanup.js";
import { cliEnv, runBin } from "./support/cli.js";
import { killProcessesWith } from "./support/processes.js";
import { useTempDirs } from "./support/temp.js";
import { signalWhen } from "./support/until.js";

/**
 * A tool loop cut off by a crash and taken up again with `--continue`, whatever thinking it had:
 * the real CLI is killed while the loop's command runs, then resumed with another `--thinking`
 * against the strict server, which refuses what the Messages API refuses.
 */

const tempDir = useTempDirs();
const track = useCleanup();

const key = "sk-test-key-0123456789";
/** `sleep N` with N unique to this run, so a leftover from elsewhere cannot match. */
const sleeper = () => `sleep ${3000 + Math.floor(Math.random() * 6000)}`;

/** Every file under `dir`, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    if ((await stat(path)).isDirectory()) files.push(...(await filesUnder(path)));
    else files.push(path);
  }
  return files;
}

/**
 * Runs the CLI with `args` on a loop whose first reply (`first`) calls `marker`, kills it once
 * the call is in the session file, and gives what a resume needs: `cont` runs `--continue` and
 * then ends the command if it is still running. The server answers later requests with `after`.
 */
async function killedInLoop(
  marker: string,
  first: ReplyScript,
  args: string[],
  after: ReplyScript[],
) {
  const server = track(await startAnthropicServer([first, ...after]));
  const workspace = await tempDir();
  const home = await tempDir();
  const env = cliEnv(home, server.url);
  const run = await runBin([...args, "--sandbox", "off", "--allow-bash", "wait"], {
    cwd: workspace,
    env,
    started: (child) =>
      signalWhen(child, async () => (await sessionText(home)).includes('"toolu_1"'), "SIGKILL", {
        everyMs: 10,
      }),
  });
  expect(run.code).toBe(null);
  const [file] = await filesUnder(join(home, "state", "sessions"));
  const cont = async (flags: string[], prompt: string) => {
    const next = await runBin([...flags, "--continue", prompt], { cwd: workspace, env });
    await killProcessesWith(marker);
    return next;
  };
  return { server, home, file: file ?? "", cont };
}

async function sessionText(home: string): Promise<string> {
  try {
    const [file] = await filesUnder(join(home, "state", "sessions"));
    return await readFile(file ?? "", "utf8");
  } catch {
    return "";
  }
}

const sleepCall = (marker: string) => ({
  id: "toolu_1",
  name: "bash",
  input: { command: marker },
});

describe("a tool loop's thinking, in its own run and taken up again after a crash", () => {
  it("sends a secret-holding thinking back signed while its own run lasts, and never stores it", async () => {
    const thought = `The key is ${key}, so I list.`;
    const server = track(
      await startAnthropicServer([
        stream(turn({ thinking: [[thought]], calls: [{ id: "toolu_1", name: "ls", input: {} }] })),
        stream(turn({ text: ["Nothing here."] })),
      ]),
    );
    const home = await tempDir();
    const run = await runBin(["--thinking", "high", "look"], {
      cwd: await tempDir(),
      env: cliEnv(home, server.url),
    });
    expect(run.stdout).toBe("Nothing here.\n");
    expect(server.rejections).toEqual([]);
    const body = server.requests[1]?.body;
    expect(body?.thinking).toEqual({ type: "adaptive", display: "summarized" });
    const sent = body?.messages as { content: unknown[] }[];
    expect(sent[1]?.content[0]).toEqual({
      type: "thinking",
      thinking: thought,
      signature: thinkingSignature(thought),
    });
    for (const file of await filesUnder(join(home, "state")))
      expect(await readFile(file, "utf8")).not.toContain(key);
  }, 30_000);

  it("drops the signature of a thinking text that held a secret, and the resumed loop is taken", async () => {
    const marker = sleeper();
    const thought = `The key is ${key}, so I wait.`;
    const ctx = await killedInLoop(
      marker,
      stream(turn({ thinking: [[thought]], calls: [{ ...sleepCall(marker), pieces: 1 }] })),
      ["--thinking", "high"],
      [stream(turn({ text: ["resumed fine"] }))],
    );
    const resumed = await ctx.cont(["--thinking", "high"], "what happened?");
    expect(ctx.server.rejections).toEqual([]);
    expect(resumed.stdout).toBe("resumed fine\n");
    expect(resumed.code).toBe(0);
    // The session keeps the redacted text for the reader, and no signature it no longer matches.
    const { messages } = await readSession(ctx.file);
    expect(messages[1]).toEqual({
      role: "assistant",
      content: "",
      toolCalls: [sleepCall(marker)],
      reasoning: [
        { type: "thinking", text: "The key is [redacted], so I wait.", at: { text: 0, calls: 0 } },
      ],
    });
    for (const file of await filesUnder(join(ctx.home, "state")))
      expect(await readFile(file, "utf8")).not.toContain(key);
    // The loop goes back without that thinking, so this request of the loop does not think up
    // front: Claude Sonnet 5.5's lowest setting, at the session's effort.
    const body = ctx.server.requests.at(-1)?.body;
    expect(body?.thinking).toEqual({ type: "between_tools" });
    expect(body?.output_config).toEqual({ effort: "high" });
    const sent = body?.messages as { role: string; content: unknown[] }[];
    expect(sent[1]).toEqual({
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_1", name: "bash", input: { command: marker } }],
    });
  }, 30_000);

  it("finishes a loop begun without thinking with thinking off, and thinks again the turn after", async () => {
    const marker = sleeper();
    const ctx = await killedInLoop(
      marker,
      stream(turn({ calls: [sleepCall(marker)] })),
      ["--thinking", "off"],
      [
        stream(turn({ text: ["resumed fine"] })),
        stream(turn({ thinking: [["Next."]], text: ["thought again"] })),
      ],
    );
    const resumed = await ctx.cont(["--thinking", "high"], "what happened?");
    expect(ctx.server.rejections).toEqual([]);
    expect(resumed.stdout).toBe("resumed fine\n");
    // Claude Sonnet 5.5, the default model, refuses `disabled`: its lowest setting finishes the loop.
    expect(ctx.server.requests.at(-1)?.body.thinking).toEqual({ type: "between_tools" });
    expect(ctx.server.requests.at(-1)?.body.output_config).toEqual({ effort: "high" });
    const next = await ctx.cont(["--thinking", "high"], "and now?");
    expect(ctx.server.rejections).toEqual([]);
    expect(next.stdout).toBe("thought again\n");
    expect(next.code).toBe(0);
    const body = ctx.server.requests.at(-1)?.body;
    expect(body?.thinking).toEqual({ type: "adaptive", display: "summarized" });
    expect(body?.output_config).toEqual({ effort: "high" });
  }, 30_000);

  it("finishes a loop begun with thinking with thinking off, the loop without its thinking", async () => {
    const marker = sleeper();
    // A model that takes `disabled` (Claude Sonnet 5.5 finishes with between_tools instead).
    const model = ["-m", "claude-opus-4-6"];
    const ctx = await killedInLoop(
      marker,
      stream(turn({ thinking: [["I will wait."]], calls: [sleepCall(marker)] })),
      [...model, "--thinking", "high"],
      [stream(turn({ text: ["resumed fine"] }))],
    );
    const resumed = await ctx.cont([...model, "--thinking", "off"], "what happened?");
    expect(ctx.server.rejections).toEqual([]);
    expect(resumed.stdout).toBe("resumed fine\n");
    const body = ctx.server.requests.at(-1)?.body;
    expect(body?.thinking).toEqual({ type: "disabled" });
    const sent = body?.messages as { content: unknown[] }[];
    expect(sent[1]?.content).toEqual([
      { type: "tool_use", id: "toolu_1", name: "bash", input: { command: marker } },
    ]);
    // The session still holds the thinking, signed: only this request leaves it out.
    const { messages } = await readSession(ctx.file);
    expect(messages[1]).toEqual({
      role: "assistant",
      content: "",
      toolCalls: [sleepCall(marker)],
      reasoning: [
        {
          type: "thinking",
          text: "I will wait.",
          signature: thinkingSignature("I will wait."),
          at: { text: 0, calls: 0 },
        },
      ],
    });
  }, 30_000);
});
