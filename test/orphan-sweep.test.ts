import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { bin, cliEnv } from "./support/cli.js";
import { killProcessesWith, processesWith, survivors } from "./support/processes.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";

/**
 * The sweep for what a killed mini-agent left running reads every process's environment in
 * `/proc`, so it is not part of making the bash tool: it runs once per process, before the
 * first command, and a run that used no bash still sweeps before it exits (the CLI; see the
 * crash matrix's resume); and it reads the processes only when a recorded agent is gone. Any other mini-agent of this PID namespace may sweep a test's orphan
 * first, so these tests show the sweep happened, not which agent did it: run in a PID namespace
 * of their own (`unshare -pf --mount-proc`) they show which.
 */

vi.mock("node:fs", async (original) => {
  const real = await original<typeof import("node:fs")>();
  return { ...real, readdirSync: vi.fn(real.readdirSync) };
});

const { bashTool } = await import("../src/tools/bash.js");

const tempDir = useTempDirs();
const markers: string[] = [];
afterEach(async () => {
  for (const marker of markers.splice(0)) await killProcessesWith(marker);
});

/** How many times `/proc` was listed since the last call. */
function procListings(): number {
  const spy = vi.mocked(fs.readdirSync);
  const count = spy.mock.calls.filter(([path]) => path === "/proc").length;
  spy.mockClear();
  return count;
}

/** This process's PID namespace and start time, as the records name them. */
const namespace = () => fs.readlinkSync("/proc/self/ns/pid").replace(/\D/g, "");
const startTime = () => {
  const stat = fs.readFileSync("/proc/self/stat", "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
};

const script = (name: string) => fileURLToPath(new URL(`./support/${name}`, import.meta.url));

function node(
  args: string[],
  options: { stdin?: "pipe"; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): { child: ReturnType<typeof spawn>; exited: Promise<string> } {
  const child = spawn(process.execPath, args, {
    stdio: [options.stdin ?? "ignore", "pipe", "ignore"],
    ...(options.env && { env: options.env }),
    ...(options.cwd && { cwd: options.cwd }),
  });
  let stdout = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  return { child, exited: new Promise((resolve) => child.on("close", () => resolve(stdout))) };
}

describe("the sweep of a killed agent's leftovers", () => {
  it("is not run when the bash tool is made", async () => {
    const root = await tempDir();
    procListings();
    const bash = bashTool(root, { sandbox: { mode: "off" } });
    expect(procListings()).toBe(0);
    expect(await bash.execute({ command: "echo one" })).toEqual({
      content: "one\n[exit code 0]",
      isError: false,
    });
  });

  it("runs once per process", async () => {
    vi.resetModules();
    const { sweepOrphansOnce } = await import("../src/sandbox/reaper.js");
    const folder = join(await tempDir(), "mini-agent", "agents");
    procListings();
    sweepOrphansOnce(folder); // A folder made now: every process is read.
    expect(procListings()).toBeGreaterThan(0);
    fs.writeFileSync(join(folder, `${namespace()}-999999999-1`), "");
    sweepOrphansOnce(folder);
    expect(procListings()).toBe(0);
  });

  it("reads every process only when an agent that recorded itself is gone", async () => {
    const { sweepOrphans } = await import("../src/sandbox/reaper.js");
    const folder = join(await tempDir(), "mini-agent", "agents");
    const record = (name: string) => fs.writeFileSync(join(folder, name), "");
    const sweep = () => {
      procListings();
      sweepOrphans(folder);
      return { read: procListings() > 0, left: fs.readdirSync(folder).sort() };
    };
    const ns = namespace();
    const self = `${ns}-${process.pid}-${startTime()}`;
    const seen: Record<string, unknown> = { first: sweep() }; // Missing: made, and read.
    seen.none = sweep();
    record(self);
    seen.alive = sweep();
    record(`${ns}-999999999-1`);
    seen.gone = sweep();
    record(`${ns}-${process.pid}-1`);
    seen.reusedPid = sweep();
    record("junk");
    seen.junk = sweep();
    record(`${ns}1-999999999-1`);
    seen.otherNamespace = sweep();
    expect(seen).toEqual({
      first: { read: true, left: [] },
      none: { read: false, left: [] },
      alive: { read: false, left: [self] },
      gone: { read: true, left: [self] },
      reusedPid: { read: true, left: [self] },
      junk: { read: true, left: [self] },
      otherNamespace: { read: false, left: [`${ns}1-999999999-1`, self].sort() },
    });
  });

  it("reads every process when the records' folder is not the user's alone", async () => {
    const { sweepOrphans } = await import("../src/sandbox/reaper.js");
    const root = await tempDir();
    const folder = join(root, "mini-agent", "agents");
    const reads = () => {
      procListings();
      sweepOrphans(folder);
      return procListings() > 0;
    };
    reads();
    const seen: Record<string, boolean> = { own: reads() };
    fs.chmodSync(folder, 0o777);
    seen.writableByOthers = reads();
    fs.chmodSync(folder, 0o700);
    fs.chmodSync(join(root, "mini-agent"), 0o777);
    seen.parentWritableByOthers = reads();
    fs.chmodSync(join(root, "mini-agent"), 0o700);
    fs.renameSync(folder, join(root, "mini-agent", "real"));
    fs.symlinkSync(join(root, "mini-agent", "real"), folder);
    seen.link = reads();
    fs.rmSync(folder);
    fs.writeFileSync(folder, "");
    seen.file = reads();
    expect(seen).toEqual({
      own: false,
      writableByOthers: true,
      parentWritableByOthers: true,
      link: true,
      file: true,
    });
  });

  // Only root can give a folder to another user here.
  it.skipIf(process.getuid?.() !== 0)(
    "reads every process when another user owns the records' folder",
    async () => {
      const { sweepOrphans } = await import("../src/sandbox/reaper.js");
      const folder = join(await tempDir(), "mini-agent", "agents");
      const reads = () => {
        procListings();
        sweepOrphans(folder);
        return procListings() > 0;
      };
      reads();
      const own = reads();
      fs.chownSync(folder, 65534, 65534);
      expect({ own, another: reads() }).toEqual({ own: false, another: true });
    },
  );

  it("reads every process, and fails nothing, when the records' folder is in the way", async () => {
    const { sweepOrphans } = await import("../src/sandbox/reaper.js");
    const root = await tempDir();
    const reads = (folder: string) => {
      procListings();
      sweepOrphans(folder);
      return procListings() > 0;
    };
    // A file, or a FIFO, where the user's folder should be: lstat of the folder below it fails.
    fs.writeFileSync(join(root, "file"), "");
    spawnSync("mkfifo", [join(root, "fifo")]);
    fs.mkdirSync(join(root, "locked", "agents"), { recursive: true, mode: 0o700 });
    expect({
      file: reads(join(root, "file", "agents")),
      fifo: reads(join(root, "fifo", "agents")),
      missingParent: reads(join(root, "gone", "deeper", "agents")),
    }).toEqual({ file: true, fifo: true, missingParent: true });
  });

  it("ends what stays in a dead agent's command session without the marker, with the marked", async () => {
    const root = await tempDir();
    const unmarked = `sleep ${3000 + Math.floor(Math.random() * 6000)}`;
    const marked = `sleep ${10000 + Math.floor(Math.random() * 6000)}`;
    markers.push(unmarked, marked);
    const killed = node([
      script("bash-once.mjs"),
      root,
      `env -u MINI_AGENT_RUN ${unmarked} & touch begun; ${marked}`,
    ]);
    await until(() => fs.existsSync(join(root, "begun")));
    killed.child.kill("SIGKILL");
    await killed.exited;
    const next = node([script("bash-once.mjs"), root, "echo next"]);
    await next.exited;
    expect({
      unmarked: await survivors([unmarked]),
      marked: await survivors([marked]),
    }).toEqual({ unmarked: [], marked: [] });
  });

  it("tells a dead agent from a process that took its pid, by its start time", async () => {
    const { newMarker, sweepOrphans } = await import("../src/sandbox/reaper.js");
    const folder = join(await tempDir(), "mini-agent", "agents");
    // A marker naming this (live) process but another start time: its agent is gone.
    const [space, pid] = newMarker().split(":");
    const sleeper = `sleep ${20000 + Math.floor(Math.random() * 6000)}`;
    markers.push(sleeper);
    const child = spawn("sh", ["-c", `exec ${sleeper}`], {
      env: { ...process.env, MINI_AGENT_RUN: `${space}:${pid}:1:forged` },
      detached: true,
      stdio: "ignore",
    });
    child.unref();
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    fs.writeFileSync(join(folder, `${space}-${pid}-1`), "");
    sweepOrphans(folder);
    expect({ left: await survivors([sleeper]), records: fs.readdirSync(folder) }).toEqual({
      left: [],
      records: [],
    });
  });

  it("judges a marker of before (no start time) by its agent's pid alone", async () => {
    const { sweepOrphans } = await import("../src/sandbox/reaper.js");
    const folder = join(await tempDir(), "mini-agent", "agents");
    const ns = namespace();
    const start = (marker: string) => {
      const sleeper = `sleep ${30000 + Math.floor(Math.random() * 6000)}`;
      markers.push(sleeper);
      spawn("sh", ["-c", `exec ${sleeper}`], {
        env: { ...process.env, MINI_AGENT_RUN: marker },
        detached: true,
        stdio: "ignore",
      }).unref();
      return sleeper;
    };
    const ofDead = start(`${ns}:999999999:old-random`);
    const ofLive = start(`${ns}:${process.pid}:old-random`);
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    fs.writeFileSync(join(folder, `${ns}-999999999-1`), "");
    // Both run as `sleep` (past their `exec`) before the sweep looks at them.
    await until(
      async () => (await processesWith(ofDead)).length + (await processesWith(ofLive)).length === 2,
    );
    sweepOrphans(folder);
    // The sweep has decided when it returns: what it spared is still there once the rest is gone.
    expect({
      ofDead: await survivors([ofDead]),
      ofLive: (await processesWith(ofLive)).length,
    }).toEqual({ ofDead: [], ofLive: 1 });
  });

  it("sweeps again while a record cannot be removed", async () => {
    const { sweepOrphans } = await import("../src/sandbox/reaper.js");
    const folder = join(await tempDir(), "mini-agent", "agents");
    const stuck = `${namespace()}-999999999-1`;
    fs.mkdirSync(join(folder, stuck), { recursive: true });
    const reads = () => {
      procListings();
      sweepOrphans(folder);
      return procListings() > 0;
    };
    expect([reads(), reads(), fs.readdirSync(folder)]).toEqual([true, true, [stuck]]);
  });

  it("records an agent before its first command and forgets it when it exits", async () => {
    const root = await tempDir();
    const mine = (pid: number | undefined) =>
      fs
        .readdirSync(join("/tmp", `mini-agent-${process.getuid?.() ?? 0}`, "agents"))
        .filter((name) => name.split("-")[1] === String(pid));
    const agent = node([script("bash-once.mjs"), root, "touch begun; sleep 1"]);
    await until(() => fs.existsSync(join(root, "begun")));
    const during = mine(agent.child.pid);
    await agent.exited;
    expect({ during: during.length, after: mine(agent.child.pid) }).toEqual({
      during: 1,
      after: [],
    });
  });

  /** A setsid `sleep` left running by an agent killed with SIGKILL; returns its command line. */
  async function orphanOfKilledAgent(root: string): Promise<string> {
    const sleeper = `sleep ${3000 + Math.floor(Math.random() * 6000)}`;
    markers.push(sleeper);
    const killed = node([
      script("bash-once.mjs"),
      root,
      `setsid ${sleeper} > /dev/null 2>&1 & touch begun; wait`,
    ]);
    await until(() => fs.existsSync(join(root, "begun")));
    killed.child.kill("SIGKILL");
    await killed.exited;
    return sleeper;
  }

  it("still ends a SIGKILLed agent's setsid process, in the next agent that runs bash", async () => {
    const root = await tempDir();
    const sleeper = await orphanOfKilledAgent(root);
    const next = node([script("bash-once.mjs"), root, "echo next"]);
    expect(JSON.parse(await next.exited)).toEqual({
      content: "next\n[exit code 0]",
      isError: false,
    });
    expect(await survivors([sleeper])).toEqual([]);
  });

  it("is done by a CLI session of many turns while it awaits its first prompt", async () => {
    const root = await tempDir();
    const home = await tempDir();
    const sleeper = await orphanOfKilledAgent(root);
    const args = ["--input-format", "stream-json", "--output-format", "stream-json"];
    const session = node([bin, ...args, "--sandbox", "off"], {
      stdin: "pipe",
      cwd: root,
      env: cliEnv(home, "http://127.0.0.1:9"),
    });
    // Seen while the session still awaits its first prompt (it sweeps again at its end).
    const left = await survivors([sleeper]);
    const waiting = session.child.exitCode === null;
    session.child.stdin?.end();
    await session.exited;
    expect({ waiting, left }).toEqual({ waiting: true, left: [] });
  }, 20_000);
});
