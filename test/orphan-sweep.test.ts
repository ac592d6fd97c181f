import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { killProcessesWith, processesWith } from "./support/processes.js";
import { useTempDirs } from "./support/temp.js";

/**
 * The sweep for what a killed mini-agent left running reads every process's environment in
 * `/proc`, so it is not part of making the bash tool: it runs once per process, before the
 * first command, and a run that used no bash still sweeps before it exits (the CLI; see the
 * crash matrix's resume).
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

const script = (name: string) => fileURLToPath(new URL(`./support/${name}`, import.meta.url));

function node(args: string[]): { child: ReturnType<typeof spawn>; exited: Promise<string> } {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "ignore"] });
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
    const { sweepOrphansOnce } = await import("../src/tools/command-reaper.js");
    procListings();
    sweepOrphansOnce();
    expect(procListings()).toBeGreaterThan(0);
    sweepOrphansOnce();
    expect(procListings()).toBe(0);
  });

  it("still ends a SIGKILLed agent's setsid process, in the next agent that runs bash", async () => {
    const root = await tempDir();
    const sleeper = `sleep ${3000 + Math.floor(Math.random() * 6000)}`;
    markers.push(sleeper);
    const killed = node([
      script("bash-once.mjs"),
      root,
      `setsid ${sleeper} > /dev/null 2>&1 & touch begun; wait`,
    ]);
    while (!fs.existsSync(join(root, "begun"))) await new Promise((r) => setTimeout(r, 20));
    killed.child.kill("SIGKILL");
    await killed.exited;
    const next = node([script("bash-once.mjs"), root, "echo next"]);
    expect(JSON.parse(await next.exited)).toEqual({
      content: "next\n[exit code 0]",
      isError: false,
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(await processesWith(sleeper)).toEqual([]);
  });
});
