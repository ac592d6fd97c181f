import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chown } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { bashTool } from "../src/tools/bash.js";
import { bashInChild, nobodyCanRun } from "./support/bash-in-child.js";
import { killProcessesWith, survivors } from "./support/processes.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";

/**
 * Plain bash (`--sandbox off`, macOS, Linux without bubblewrap): every process a command
 * started ends with it, even one that left the process group with `setsid`, and even when the
 * agent leaves through `process.exit` while the command runs.
 */

const tempDir = useTempDirs();
const markers: string[] = [];
afterEach(async () => {
  // Whatever a failing test left behind must not outlive it.
  for (const marker of markers.splice(0)) await killProcessesWith(marker);
});

/** `sleep N` with N unique to this run, so a leftover from elsewhere cannot match. */
function sleeper(): string {
  const marker = `sleep ${3000 + Math.floor(Math.random() * 6000)}`;
  markers.push(marker);
  return marker;
}

/**
 * A command that makes itself non-dumpable (prctl PR_SET_DUMPABLE 0) and sleeps: its
 * environment, marker included, is then unreadable to other processes of its uid (root reads
 * it still). Returns the command (to start in the background), shell code that waits until it
 * is non-dumpable, and the text its command line contains.
 */
function hiddenSleeper(): { command: string; hidden: string; marker: string } {
  const marker = `time.sleep(${3000 + Math.floor(Math.random() * 6000)})`;
  markers.push(marker);
  return {
    command: `python3 -c 'import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); open("hidden", "w").close(); ${marker}'`,
    hidden: "until [ -e hidden ]; do sleep 0.05; done",
    marker,
  };
}

describe("bash without the sandbox ends everything it started", () => {
  it("when the command returns: a background process and a setsid one", async () => {
    const root = await tempDir();
    const [background, detached] = [sleeper(), sleeper()];
    const bash = bashTool(root, { sandbox: { mode: "off" } });
    const result = await bash.execute({
      command: `${background} & setsid ${detached} > /dev/null 2>&1 & echo started`,
    });
    expect(result).toEqual({ content: "started\n[exit code 0]", isError: false });
    expect(await survivors([background, detached])).toEqual([]);
  });

  it("when the command returns: a process in its own group without the marker, still in the command's session", async () => {
    const root = await tempDir();
    const unmarked = sleeper();
    const bash = bashTool(root, { sandbox: { mode: "off" } });
    const result = await bash.execute({
      command: `set -m; env -u MINI_AGENT_RUN ${unmarked} > /dev/null 2>&1 & echo started`,
    });
    expect(result).toEqual({ content: "started\n[exit code 0]", isError: false });
    expect(await survivors([unmarked])).toEqual([]);
  });

  it("at the timeout and on abort, a setsid process included", async () => {
    const root = await tempDir();
    const [first, second, third] = [sleeper(), sleeper(), sleeper()];
    const bash = bashTool(root, { sandbox: { mode: "off" }, killGrace: 1 });
    const timedOut = await bash.execute({
      command: `setsid ${first} > /dev/null 2>&1 & ${second}`,
      timeout: 1,
    });
    expect(timedOut.content).toBe(
      "[timed out after 1 s: the command and its processes were killed]",
    );
    const controller = new AbortController();
    const running = bash.execute(
      { command: `setsid ${third} > /dev/null 2>&1 & touch begun; wait` },
      controller.signal,
    );
    await until(() => existsSync(join(root, "begun")));
    controller.abort();
    const aborted = await running;
    expect(aborted.content).toBe("[aborted: the command and its processes were killed]");
    expect(await survivors([first, second, third])).toEqual([]);
  });

  it("when the agent calls process.exit while a command runs", async () => {
    const root = await tempDir();
    const [background, detached, foreground] = [sleeper(), sleeper(), sleeper()];
    const script = fileURLToPath(new URL("./support/exit-while-running.mjs", import.meta.url));
    const command = `${background} & setsid ${detached} > /dev/null 2>&1 & touch begun; ${foreground}`;
    const child = spawn(process.execPath, [script, root, command], {
      stdio: ["pipe", "ignore", "ignore"],
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    // The agent exits when told, once the command has begun.
    await until(() => existsSync(join(root, "begun")));
    child.stdin?.end("exit\n");
    expect(await exited).toBe(0);
    expect(await survivors([background, detached, foreground])).toEqual([]);
  });
});

const nobody = await nobodyCanRun();

/**
 * As another uid than root. Survivors are listed by the agent's child process while it still
 * runs: once it has exited, any mini-agent started by root on this machine sweeps them.
 */
describe.skipIf(!nobody)("bash without the sandbox, run by a user other than root", () => {
  const started = (uid: number) => ({
    content: `${uid}\nstarted\n[exit code 0]`,
    isError: false,
  });

  it("ends a non-dumpable process that left the group but not the session", async () => {
    const root = await tempDir();
    await chown(root, 65534, 65534);
    const hidden = hiddenSleeper();
    const command = `id -u; set -m; ${hidden.command} > /dev/null 2>&1 & ${hidden.hidden}; echo started`;
    expect(
      await bashInChild(root, "off", command, { asNobody: true, watch: hidden.marker }),
    ).toEqual({ result: started(65534), survivors: [] });
  });

  it("cannot end a non-dumpable process that left the session (a documented limit); root can", async () => {
    const root = await tempDir();
    await chown(root, 65534, 65534);
    const hidden = hiddenSleeper();
    const command = `rm -f hidden; id -u; setsid ${hidden.command} > /dev/null 2>&1 & ${hidden.hidden}; echo started`;
    const asNobody = await bashInChild(root, "off", command, {
      asNobody: true,
      watch: hidden.marker,
    });
    expect(asNobody.result).toEqual(started(65534));
    expect(asNobody.survivors).toEqual([expect.stringContaining(hidden.marker)]);
    await killProcessesWith(hidden.marker);
    expect(await bashInChild(root, "off", command, { watch: hidden.marker })).toEqual({
      result: started(0),
      survivors: [],
    });
  });
});
