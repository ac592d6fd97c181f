import { existsSync, readdirSync, readFileSync } from "node:fs";
import { readdir, readFile, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveSandbox } from "../src/sandbox/bwrap.js";
import { readSession } from "../src/session/session.js";
import {
  type ReplyScript,
  redactedData,
  startAnthropicServer,
  stream,
  thinkingSignature,
  turn,
} from "../src/testing/anthropic-server.js";
import {
  encryptedReasoning,
  response,
  stream as responsesStream,
  startResponsesServer,
} from "../src/testing/responses-server.js";
import type { Message } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { cliEnv, runBin } from "./support/cli.js";
import { survivors } from "./support/processes.js";
import { gitRepository } from "./support/repository.js";
import { useTempDirs } from "./support/temp.js";
import { signalWhen } from "./support/until.js";

/**
 * The real CLI killed with SIGKILL at many points, then resumed with --continue: the session
 * loads, a call cut off gets one receipt saying its outcome is unknown, nothing runs again on
 * its own, and the next request passes the strict server. Once with bash in the sandbox (when
 * bwrap works here; always in CI) and once with `--sandbox off`.
 */

const bwrap = (await resolveSandbox({ mode: "required" })).kind === "bwrap";
const modes = bwrap || process.env.CI ? ["required", "off"] : ["off"];

/** `sleep N` with N unique to this run, so a leftover from elsewhere cannot match. */
const sleeper = () => `sleep ${3000 + Math.floor(Math.random() * 6000)}`;

const tempDir = useTempDirs();
const track = useCleanup();

const outcomeUnknown =
  "outcome unknown: the session ended before this call reported a result; it may or may not have run";

async function killedRun(
  script: ReplyScript[],
  args: string[],
  killWhen: (ctx: { workspace: string; requests: number; session: () => string }) => boolean,
) {
  const server = await startAnthropicServer([...script, stream(turn({ text: ["resumed fine"] }))]);
  track(server);
  const workspace = await tempDir();
  const home = await tempDir();
  const env = cliEnv(home, server.url);
  const first = await runBin(args, {
    cwd: workspace,
    env,
    started: (child) =>
      signalWhen(
        child,
        () =>
          killWhen({
            workspace,
            requests: server.requests.length,
            session: () => sessionText(home),
          }),
        "SIGKILL",
        { everyMs: 10 },
      ),
  });
  expect(first.code).toBe(null);
  const dir = join(home, "state", "sessions");
  const [folder] = await readdir(dir);
  const file = (await readdir(join(dir, folder ?? ""))).find((name) => name.endsWith(".jsonl"));
  return { server, workspace, env, file: join(dir, folder ?? "", file ?? "") };
}

async function resume(ctx: Awaited<ReturnType<typeof killedRun>>, flags: string[] = []) {
  const before = ctx.server.requests.length;
  const next = await runBin([...flags, "--continue", "what happened?"], {
    cwd: ctx.workspace,
    env: ctx.env,
  });
  expect(next.stdout).toBe("resumed fine\n");
  expect(next.code).toBe(0);
  expect(ctx.server.rejections).toEqual([]);
  expect(ctx.server.requests).toHaveLength(before + 1);
  return next;
}

/** The text of the one session file under `home`, or "" before it exists. */
function sessionText(home: string): string {
  try {
    const dir = join(home, "state", "sessions");
    const [folder] = readdirSync(dir);
    // The session's file, not its lock or blob folder beside it.
    const file = readdirSync(join(dir, folder ?? "")).find((name) => name.endsWith(".jsonl"));
    return readFileSync(join(dir, folder ?? "", file ?? ""), "utf8");
  } catch {
    return "";
  }
}

/** Whether the file at `path` holds exactly `text` (false while it does not exist). */
const wrote = (path: string, text: string) =>
  existsSync(path) && readFileSync(path, "utf8") === text;

const toolResults = (history: Message[]) =>
  history.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, m.content]] : []));

describe.each(modes)("crash matrix, --sandbox %s", (mode) => {
  const sandbox = ["--sandbox", mode];
  it("killed while the answer streams: resumes with the prompt and no half answer", async () => {
    const ctx = await killedRun(
      [stream(turn({ text: ["one ", "two ", "three"] }), { stallAfter: 4 })],
      [...sandbox, "a question"],
      ({ requests }) => requests === 1,
    );
    await resume(ctx);
    const { messages } = await readSession(ctx.file);
    expect(messages.map((m) => m.role)).toEqual(["user", "user", "assistant"]);
  });

  it("killed while a side-effecting command runs: one outcome-unknown receipt, not run again", async () => {
    const marker = sleeper();
    const ctx = await killedRun(
      [
        stream(
          turn({
            calls: [
              { id: "toolu_1", name: "ls", input: {} },
              {
                id: "toolu_2",
                name: "bash",
                input: { command: `echo ran >> side.txt; ${marker}` },
              },
            ],
          }),
        ),
      ],
      [...sandbox, "--allow-bash", "do it"],
      // Once the line is written, not when the file appears: `>>` creates it before echo writes.
      ({ workspace }) => wrote(join(workspace, "side.txt"), "ran\n"),
    );
    // With bwrap the sandbox dies with the agent. With --sandbox off SIGKILL runs no exit hook:
    // the command outlives the agent until a mini-agent starts in this PID namespace and sweeps
    // it (any other test's agent may already have), so only the resume's sweep is asserted.
    if (mode !== "off") expect(await survivors([marker])).toEqual([]);
    await resume(ctx);
    expect(await survivors([marker])).toEqual([]);
    expect(await readFile(join(ctx.workspace, "side.txt"), "utf8")).toBe("ran\n");
    const { messages } = await readSession(ctx.file);
    expect(toolResults(messages)).toEqual([
      ["toolu_1", "(empty folder)"],
      ["toolu_2", outcomeUnknown],
    ]);
    const sent = JSON.stringify(ctx.server.requests.at(-1)?.body.messages);
    expect(sent).toContain(outcomeUnknown);
  });

  it("killed between the calls' commit and their receipts, then torn mid-append: loads, repairs, resumes", async () => {
    const marker = sleeper();
    const ctx = await killedRun(
      [stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: marker } }] }))],
      [...sandbox, "--allow-bash", "wait"],
      ({ session }) => session().includes('"toolu_1"'),
    );
    // The call is committed and running; now cut a record as a crash mid-write would.
    const text = await readFile(ctx.file, "utf8");
    const torn = `${text}{"type":"message","message":{"role":"tool","toolCallId":"toolu_1","con`;
    await writeFile(ctx.file, torn);
    await resume(ctx);
    const loaded = await readSession(ctx.file);
    expect(toolResults(loaded.messages)).toEqual([["toolu_1", outcomeUnknown]]);
    expect(loaded.skipped).toBe(1);
    expect(await survivors([marker])).toEqual([]);
  });

  it("killed while the second round streams, after the results were written", async () => {
    const ctx = await killedRun(
      [
        stream(turn({ calls: [{ id: "toolu_1", name: "ls", input: {} }] })),
        stream(turn({ text: ["Listing shows", " nothing"] }), { stallAfter: 4 }),
      ],
      [...sandbox, "look"],
      ({ requests }) => requests === 2,
    );
    await resume(ctx);
    const { messages } = await readSession(ctx.file);
    expect(toolResults(messages)).toEqual([["toolu_1", "(empty folder)"]]);
  });

  it("killed mid tool loop of a thinking round: the thinking goes back as it was", async () => {
    const marker = sleeper();
    const ctx = await killedRun(
      [
        stream(
          turn({
            thinking: [{ redacted: "hidden" }, ["I will wait."]],
            calls: [{ id: "toolu_1", name: "bash", input: { command: marker } }],
          }),
        ),
      ],
      [...sandbox, "--thinking", "high", "--allow-bash", "wait"],
      ({ session }) => session().includes('"toolu_1"'),
    );
    await resume(ctx, ["--thinking", "high"]);
    const sent = ctx.server.requests.at(-1)?.body.messages as { content: unknown[] }[];
    expect(sent[1]?.content.slice(0, 2)).toEqual([
      { type: "redacted_thinking", data: redactedData("hidden") },
      { type: "thinking", thinking: "I will wait.", signature: thinkingSignature("I will wait.") },
    ]);
    expect(await survivors([marker])).toEqual([]);
  });

  it("killed mid tool loop of a Responses round: its encrypted reasoning goes back as it was", async () => {
    const marker = sleeper();
    const command = { command: marker };
    const first = responsesStream(
      response(
        { reasoning: ["I will wait."], calls: [{ id: "call_1", name: "bash", input: command }] },
        "gpt-5.5",
      ),
    );
    const server = track(
      await startResponsesServer([
        first,
        responsesStream(response({ text: ["resumed fine"] }, "gpt-5.5")),
      ]),
    );
    const frames = first.kind === "stream" ? first.frames : [];
    const rs = String((frames[2]?.data as { item?: { id?: string } } | undefined)?.item?.id);
    const workspace = await tempDir();
    const home = await tempDir();
    const env = cliEnv(home, server.url, { OPENAI_BASE_URL: `${server.url}/v1` });
    const flags = [...sandbox, "--provider", "openai-responses", "-m", "gpt-5.5"];
    const killed = await runBin([...flags, "--thinking", "high", "--allow-bash", "wait"], {
      cwd: workspace,
      env,
      started: (child) =>
        signalWhen(child, () => sessionText(home).includes('"call_1"'), "SIGKILL", { everyMs: 10 }),
    });
    expect(killed.code).toBe(null);
    const next = await runBin([...flags, "--thinking", "high", "--continue", "what happened?"], {
      cwd: workspace,
      env,
    });
    expect([next.stdout, next.code, server.rejections]).toEqual(["resumed fine\n", 0, []]);
    const sent = server.requests.at(-1)?.body.input as Record<string, unknown>[];
    expect(sent.slice(0, 3)).toEqual([
      { type: "message", role: "user", content: "wait" },
      {
        type: "reasoning",
        id: rs,
        summary: [],
        encrypted_content: encryptedReasoning("gpt-5.5", rs),
      },
      {
        type: "function_call",
        call_id: "call_1",
        name: "bash",
        arguments: JSON.stringify(command),
      },
    ]);
    expect(sent[3]).toEqual({
      type: "function_call_output",
      call_id: "call_1",
      output: `Error: ${outcomeUnknown}`,
    });
    expect(await survivors([marker])).toEqual([]);
  });

  it("killed while the model thinks: resumes with nothing of the cut round", async () => {
    const ctx = await killedRun(
      [stream(turn({ thinking: [["Hmm, ", "let me ", "see"]], text: ["x"] }), { stallAfter: 5 })],
      [...sandbox, "--thinking", "low", "a question"],
      ({ requests }) => requests === 1,
    );
    await resume(ctx, ["--thinking", "low"]);
    const { messages } = await readSession(ctx.file);
    expect(messages.map((m) => m.role)).toEqual(["user", "user", "assistant"]);
  });

  it("killed right after the session header was written, before anything else", async () => {
    const ctx = await killedRun(
      [stream(turn({ text: ["x"] }), { stallAfter: 1 })],
      [...sandbox, "first"],
      ({ requests }) => requests === 1,
    );
    await truncate(ctx.file, (await readFile(ctx.file, "utf8")).indexOf("\n") + 1);
    await resume(ctx);
    const { messages } = await readSession(ctx.file);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});

describe("crash matrix, a file change", () => {
  it("killed between keeping a file's old bytes and the edit's write: the next run says so, the session resumes, a rewind finds the file as it was", async () => {
    const workspace = await tempDir();
    // Big enough that the edit still reads, hashes and writes it when the kill lands.
    const old = `${"x".repeat(9 * 1024 * 1024)}\nneedle\n`;
    await writeFile(join(workspace, "big.txt"), old);
    const calls = [
      { id: "toolu_r", name: "read", input: { path: "big.txt", offset: 1, limit: 1 } },
      {
        id: "toolu_e",
        name: "edit",
        input: { path: "big.txt", oldText: "needle", newText: "thread" },
      },
    ];
    const server = await startAnthropicServer([
      stream(turn({ calls })),
      stream(turn({ text: ["resumed fine"] })),
    ]);
    track(server);
    const home = await tempDir();
    const env = cliEnv(home, server.url);
    const first = await runBin(["--sandbox", "off", "change it"], {
      cwd: workspace,
      env,
      started: (child) =>
        signalWhen(child, () => sessionText(home).includes('"type":"file_before"'), "SIGKILL", {
          everyMs: 5,
        }),
    });
    expect(first.code).toBe(null);
    expect(readFileSync(join(workspace, "big.txt"), "utf8") === old).toBe(true);

    const next = await runBin(["--continue", "what happened?"], { cwd: workspace, env });
    expect(next.stdout).toBe("resumed fine\n");
    expect(next.code).toBe(0);
    expect(next.stderr.split("\n").filter((line) => line.includes("cut off"))).toEqual([
      "mini-agent: edit big.txt (call toolu_e) was cut off after its file's bytes were kept: whether it changed the file is unknown (mini-agent rewind --to N --files-only --dry-run shows it)",
    ]);
    expect(server.rejections).toEqual([]);
    const rewind = await runBin(["rewind", "--to", "1", "--files-only", "--dry-run"], {
      cwd: workspace,
      env,
    });
    expect(rewind.stdout.split("\n").slice(1)).toEqual([
      "nothing to rewind: every file the agent changed from prompt 1 on is as it was then",
      "dry run: nothing was changed",
      "",
    ]);
    expect(rewind.code).toBe(0);
  }, 60_000);
});

describe("crash matrix, a bash call in a git repository", () => {
  it("killed while the command runs, between the snapshots before and after it: the session resumes, a rewind says what the call changed is not known", async () => {
    const workspace = await tempDir();
    await gitRepository(workspace);
    const marker = sleeper();
    const command = `echo made > made.txt; ${marker}`;
    const server = await startAnthropicServer([
      stream(turn({ calls: [{ id: "toolu_b", name: "bash", input: { command } }] })),
      stream(turn({ text: ["resumed fine"] })),
    ]);
    track(server);
    const home = await tempDir();
    const env = cliEnv(home, server.url);
    const first = await runBin(["--sandbox", "off", "--allow-bash", "make it"], {
      cwd: workspace,
      env,
      started: (child) =>
        signalWhen(child, () => wrote(join(workspace, "made.txt"), "made\n"), "SIGKILL", {
          everyMs: 10,
        }),
    });
    expect(first.code).toBe(null);

    // With --sandbox off SIGKILL runs no exit hook: the command outlives the agent until a
    // mini-agent starts in this PID namespace and sweeps it (the resume's own sweep at the latest).
    const next = await runBin(["--continue", "what happened?"], { cwd: workspace, env });
    expect(await survivors([marker])).toEqual([]);
    expect(next.stdout).toBe("resumed fine\n");
    expect(next.code).toBe(0);
    expect(server.rejections).toEqual([]);
    const [dir = ""] = readdirSync(join(home, "state", "sessions"));
    const [file = ""] = readdirSync(join(home, "state", "sessions", dir)).filter((name) =>
      name.endsWith(".jsonl"),
    );
    const { messages } = await readSession(join(home, "state", "sessions", dir, file));
    expect(toolResults(messages)).toEqual([["toolu_b", outcomeUnknown]]);

    const rewind = await runBin(["rewind", "--to", "1", "--files-only", "--dry-run"], {
      cwd: workspace,
      env,
    });
    expect(rewind.stdout.split("\n").slice(1)).toEqual([
      "nothing to rewind: every file the agent changed from prompt 1 on is as it was then",
      "note: 1 bash command from prompt 1 on has no record of what it changed (mini-agent ended while it ran, or it never ran); nothing of it is restored",
      "dry run: nothing was changed",
      "",
    ]);
    expect(rewind.code).toBe(0);
  }, 60_000);
});

describe("crash matrix, a rewind", () => {
  it("killed in the middle of a rewind of files: the next rewind finishes it, the session resumes", async () => {
    const workspace = await tempDir();
    const names = ["a.txt", "b.txt", "c.txt"];
    // Big enough that restoring each takes a while: the kill lands between or inside them.
    const old = `${"x".repeat(9 * 1024 * 1024)}\nneedle\n`;
    for (const name of names) await writeFile(join(workspace, name), old);
    const calls = names.flatMap((name) => [
      { id: `r_${name}`, name: "read", input: { path: name, offset: 1, limit: 1 } },
      { id: `e_${name}`, name: "edit", input: { path: name, oldText: "needle", newText: "pin" } },
    ]);
    const server = await startAnthropicServer([
      stream(turn({ calls })),
      stream(turn({ text: ["changed"] })),
      stream(turn({ text: ["resumed fine"] })),
    ]);
    track(server);
    const home = await tempDir();
    const env = cliEnv(home, server.url);
    expect((await runBin(["--sandbox", "off", "change them"], { cwd: workspace, env })).code).toBe(
      0,
    );
    const killed = await runBin(["rewind", "--to", "1", "--files-only"], {
      cwd: workspace,
      env,
      started: (child) =>
        // Once the rewind is recorded as begun: its files are restored at once (AT_ONCE), so
        // the first file's record came too close to the end to be caught every time.
        signalWhen(child, () => sessionText(home).includes('"type":"rewind_start"'), "SIGKILL", {
          everyMs: 2,
        }),
    });
    expect(killed.code).toBe(null);

    const again = await runBin(["rewind", "--to", "1", "--files-only"], { cwd: workspace, env });
    expect(again.code).toBe(0);
    expect(names.map((name) => readFileSync(join(workspace, name), "utf8") === old)).toEqual([
      true,
      true,
      true,
    ]);
    // Nothing of the cut-off write is left beside the files.
    expect((await readdir(workspace)).sort()).toEqual(names);
    const dry = await runBin(["rewind", "--to", "1", "--files-only", "--dry-run"], {
      cwd: workspace,
      env,
    });
    expect(dry.stdout.split("\n").slice(1)).toEqual([
      "nothing to rewind: every file the agent changed from prompt 1 on is as it was then",
      "dry run: nothing was changed",
      "",
    ]);
    const next = await runBin(["--continue", "what happened?"], { cwd: workspace, env });
    expect(next.stdout).toBe("resumed fine\n");
    expect(server.rejections).toEqual([]);
  }, 60_000);
});
