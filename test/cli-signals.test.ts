import { closeSync, existsSync, openSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session/session.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { type CliRun, runBin, sessionFiles, toolResults, useCliSetup } from "./support/cli.js";
import { exitAfterLastSignal, exitClockEnv } from "./support/exit-clock.js";
import { catches } from "./support/processes.js";
import { signalWhen, until } from "./support/until.js";

/** Every way a run can be told to stop from outside: signals, and a reader that goes away. */

const setup = useCliSetup();

/** The workspace's `started`, which the slow commands below touch once they run. */
const running = (workspace: string) => () => existsSync(join(workspace, "started"));

const slowRound = (command: string) =>
  stream(
    turn({
      calls: [
        { id: "toolu_1", name: "bash", input: { command } },
        { id: "toolu_2", name: "ls", input: {} },
      ],
    }),
  );

describe("signals", () => {
  it.each([
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const)(
    "%s during a slow tool ends the turn like Ctrl-C: exit %d, a receipt for every call, a valid history",
    async (signal, code) => {
      const { server, workspace, home, options } = await setup([
        slowRound("touch started; sleep 30"),
        stream(turn({ text: ["continuing"] })),
      ]);
      const run = await runBin(["--allow-bash", "--sandbox", "off", "slow task"], {
        ...options,
        started: (child) => signalWhen(child, running(workspace), signal),
      });
      expect(run.code).toBe(code);
      expect(run.stderr).toBe(
        [
          "",
          `mini-agent: ${signal}: stopping the turn (again to quit at once)`,
          "  ✗ bash touch started; sleep 30: [aborted: the command and its processes were killed]",
          "  ✗ ls: aborted before execution",
          "interrupted",
          "",
        ].join("\n"),
      );
      const [file] = await sessionFiles(home);
      const session = await readSession(file ?? "");
      expect(session.repaired).toBe(0);
      expect(session.messages.slice(2)).toEqual([
        {
          role: "tool",
          toolCallId: "toolu_1",
          content: "[aborted: the command and its processes were killed]",
          isError: true,
        },
        { role: "tool", toolCallId: "toolu_2", content: "aborted before execution", isError: true },
      ]);
      const next = await runBin(["--continue", "go on"], options);
      expect(next).toEqual({ code: 0, stdout: "continuing\n", stderr: "" });
      expect(server.rejections).toEqual([]);
      expect(toolResults(server.requests[1]?.body ?? {}).map((result) => result.id)).toEqual([
        "toolu_1",
        "toolu_2",
      ]);
    },
  );

  it("a second SIGTERM exits at once while the first still waits for a command that ignores it", async () => {
    const { server, workspace, home, options } = await setup([
      slowRound("trap '' TERM; touch started; sleep 4"),
      stream(turn({ text: ["continuing"] })),
    ]);
    const clock = join(home, "exit-clock.json");
    const run = await runBin(["--allow-bash", "--sandbox", "off", "slow task"], {
      ...options,
      env: exitClockEnv(options.env, clock),
      started: (child) => {
        let stderr = "";
        child.stderr?.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        // The second once the first has been taken: the turn is stopping, its command not.
        void until(running(workspace)).then(() => {
          child.kill("SIGTERM");
          signalWhen(child, () => stderr.includes("stopping the turn"), "SIGTERM");
        });
      },
    });
    expect(run.code).toBe(143);
    const { signals, afterMs } = await exitAfterLastSignal(clock);
    expect(signals).toEqual(["SIGTERM", "SIGTERM"]);
    // The first abort waits 2 s for the command before killing it; the second does not wait.
    expect(afterMs).toBeLessThan(1000);
    const [file] = await sessionFiles(home);
    expect((await readSession(file ?? "")).repaired).toBe(2);
    const next = await runBin(["--continue", "go on"], options);
    expect(next.code).toBe(0);
    expect(server.rejections).toEqual([]);
    expect(toolResults(server.requests[1]?.body ?? {}).map((result) => result.id)).toEqual([
      "toolu_1",
      "toolu_2",
    ]);
  });

  it("a SIGTERM before any turn started exits 143 at once", async () => {
    const { home, options } = await setup([]);
    // No task and stdin left open: the CLI waits for the task on stdin.
    const run = await new Promise<CliRun>((resolve) => {
      void runBin([], {
        ...options,
        openStdin: true,
        started: (child) => {
          child.stdin?.write("partial task");
          // Once the CLI listens for its stop signals (before, SIGTERM's default would end it).
          // Node itself catches SIGTERM from its start; SIGHUP only once the CLI listens.
          signalWhen(child, () => catches(child.pid ?? 0, "SIGHUP"), "SIGTERM");
        },
      }).then(resolve);
    });
    expect(run.code).toBe(143);
    expect(await sessionFiles(home)).toEqual([]);
  });
});

describe("closed or full output", () => {
  const slowText = () =>
    stream(
      turn({
        text: ["Working", " on", " it", " step", " by", " step", ".", " Done."],
        calls: [{ id: "toolu_1", name: "ls", input: {} }],
      }),
      { frameDelayMs: 120 },
    );

  it("a reader that stops reading ends the run like an interrupt: exit 141, a valid session, no stack trace", async () => {
    const { server, home, options } = await setup([slowText(), stream(turn({ text: ["ok"] }))]);
    const run = await runBin(["task"], {
      ...options,
      started: (child) => child.stdout?.once("data", () => child.stdout?.destroy()),
    });
    expect(run.code).toBe(141);
    expect(run.stderr).toBe("mini-agent: stdout was closed: stopping the turn\ninterrupted\n");
    const [file] = await sessionFiles(home);
    const session = await readSession(file ?? "");
    expect(session.repaired).toBe(0);
    expect(session.messages).toEqual([{ role: "user", content: "task" }]);
    const next = await runBin(["--continue", "again"], options);
    expect(next).toEqual({ code: 0, stdout: "ok\n", stderr: "" });
    expect(server.rejections).toEqual([]);
  });

  it("a full stdout ends the run with one line and exit 1, no stack trace", async () => {
    const { home, options } = await setup([slowText()]);
    const full = openSync("/dev/full", "w");
    let run: CliRun;
    let help: CliRun;
    try {
      run = await runBin(["task"], { ...options, stdout: full });
      help = await runBin(["--help"], { ...options, stdout: full });
    } finally {
      closeSync(full);
    }
    expect(help).toEqual({
      code: 1,
      stdout: "",
      stderr: "mini-agent: cannot write to stdout: no space left on device (ENOSPC)\n",
    });
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr: "mini-agent: cannot write to stdout: no space left on device (ENOSPC)\ninterrupted\n",
    });
    const [file] = await sessionFiles(home);
    expect((await readSession(file ?? "")).repaired).toBe(0);
  });

  it("a closed stderr never ends the run", async () => {
    const { options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "ls", input: {} }] })),
      stream(turn({ text: ["listed"] })),
    ]);
    const run = await runBin(["task"], {
      ...options,
      started: (child) => child.stderr?.destroy(),
    });
    expect(run).toEqual({ code: 0, stdout: "listed\n", stderr: "" });
  });
});
