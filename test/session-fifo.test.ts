import { execFileSync } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readForExport } from "../src/export/export.js";
import { listSessions, readSession, Session } from "../src/session/session.js";
import { sessionsDir } from "../src/session/store.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { type CliOptions, type CliRun, runBin, useCliSetup } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";
import { watchdog } from "./support/until.js";

/**
 * A FIFO (or anything but a regular file) named like a session is refused at once, never waited
 * on: opening it for reading would block until a writer came, and no signal would end the wait.
 */

const setup = useCliSetup();
const tempDir = useTempDirs();

/** `runBin`, but a run still going after 10 s is killed: a hang fails the test (code null). */
function runBounded(args: string[], options: CliOptions): Promise<CliRun> {
  return runBin(args, {
    ...options,
    started: (child) =>
      child.on(
        "exit",
        watchdog(10_000, () => child.kill("SIGKILL")),
      ),
  });
}

async function fifoSession(env: NodeJS.ProcessEnv, workspace: string, id: string) {
  const dir = sessionsDir(env, workspace);
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${id}.jsonl`);
  execFileSync("mkfifo", [path]);
  return path;
}

describe("a session file that is a FIFO", () => {
  it("is refused by export ID, --resume ID and --continue in one line, exit 2, without waiting", async () => {
    const { server, workspace, options } = await setup([stream(turn({ text: ["no"] }))]);
    const path = await fifoSession(options.env, workspace, "20261207-000000-fifo00");
    const refused = {
      code: 2,
      stdout: "",
      stderr: `mini-agent: session ${path} is not a regular file\n`,
    };
    const exported = await runBounded(["export", "20261207-000000-fifo00", "-o", "-"], options);
    expect(exported).toEqual(refused);
    const resumed = await runBounded(["--resume", "20261207-000000-fifo00", "-p", "hi"], options);
    expect(resumed).toEqual(refused);
    // --continue and export without an id look for the newest regular session, and find none.
    const continued = await runBounded(["--continue", "-p", "hi"], options);
    expect(continued).toEqual({
      code: 2,
      stdout: "",
      stderr: "mini-agent: no session to continue for this folder\n",
    });
    expect(await runBounded(["export", "-o", "-"], options)).toEqual({
      code: 2,
      stdout: "",
      stderr: "mini-agent: no session to export for this folder\n",
    });
    expect(await runBounded(["--sessions"], options)).toEqual({
      code: 0,
      stdout: "no sessions for this folder\n",
      stderr: "",
    });
    expect(server.requests).toEqual([]);
  }, 60_000);

  it("is refused by the library's readers with the same words", async () => {
    const dir = await tempDir();
    const path = join(dir, "s1.jsonl");
    execFileSync("mkfifo", [path]);
    const message = `session ${path} is not a regular file`;
    await expect(readSession(path)).rejects.toThrow(message);
    await expect(Session.open(path)).rejects.toThrow(message);
    await expect(readForExport(path)).rejects.toThrow(message);
    expect(await listSessions(dir)).toEqual([]);
  }, 10_000);
});
