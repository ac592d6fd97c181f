import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bashTool } from "../src/tools/bash.js";
import { processesWith } from "./support/processes.js";
import { sampleEvery, until } from "./support/until.js";
import { useWorkspace } from "./support/workspace.js";

const workspace = useWorkspace();

async function timed<T>(work: Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await work;
  return [value, (performance.now() - start) / 1000];
}

describe("bash", () => {
  it("runs in the workspace and reports the exit code", async () => {
    const ws = await workspace();
    expect(await ws.run("bash", { command: "pwd" })).toEqual({
      content: `${ws.root}\n[exit code 0]`,
      isError: false,
    });
    expect(await ws.run("bash", { command: "echo out; echo err >&2; exit 3" })).toEqual({
      content: "out\nerr\n[exit code 3]",
      isError: true,
    });
  });

  it("returns at once when a background process keeps the pipes open, and ends it", async () => {
    const ws = await workspace();
    const [result, seconds] = await timed(ws.run("bash", { command: "sleep 311 & echo started" }));
    expect(result).toEqual({ content: "started\n[exit code 0]", isError: false });
    expect(seconds).toBeLessThan(20);
    expect(await processesWith("sleep 311")).toEqual([]);
  });

  it("gives a command that reads stdin end of file at once", async () => {
    const ws = await workspace();
    const [result, seconds] = await timed(ws.run("bash", { command: "read x; echo got=$?" }));
    expect(result).toEqual({ content: "got=1\n[exit code 0]", isError: false });
    expect(seconds).toBeLessThan(20);
  });

  it("kills at the timeout a command that ignores TERM, with everything it started", async () => {
    const ws = await workspace();
    const command = "trap '' TERM; sleep 312 & sleep 313; echo never";
    const [result, seconds] = await timed(ws.run("bash", { command, timeout: 1 }));
    expect(result).toEqual({
      content: "[timed out after 1 s: the command and its processes were killed]",
      isError: true,
    });
    expect(seconds).toBeLessThan(20);
    expect(await processesWith("sleep 312")).toEqual([]);
    expect(await processesWith("sleep 313")).toEqual([]);
  });

  it("kills the command and everything it started when the signal aborts", async () => {
    const ws = await workspace();
    const controller = new AbortController();
    const running = ws.run(
      "bash",
      { command: "echo begun; touch begun; sleep 314 & sleep 315" },
      controller.signal,
    );
    // Aborted once the command has begun, however long the sandbox took to start.
    await until(() => existsSync(join(ws.root, "begun")));
    controller.abort();
    const [result, seconds] = await timed(running);
    expect(result).toEqual({
      content: "begun\n[aborted: the command and its processes were killed]",
      isError: true,
    });
    expect(seconds).toBeLessThan(20);
    expect(await processesWith("sleep 314")).toEqual([]);
    expect(await processesWith("sleep 315")).toEqual([]);
  });

  it("keeps the head and tail of a 50 MB output and says how much it cut", async () => {
    const ws = await workspace();
    const command = "echo FIRST; head -c 50000000 /dev/zero | tr '\\0' 'a'; echo; echo LAST";
    const result = await ws.run("bash", { command });
    expect(result.isError).toBe(false);
    expect(result.content.length).toBeLessThan(50_200);
    expect(result.content.startsWith("FIRST\naaaa")).toBe(true);
    expect(result.content.endsWith("aaaa\nLAST\n[exit code 0]")).toBe(true);
    const cut = Number(/\[truncated (\d+) characters\]/.exec(result.content)?.[1]);
    expect(cut + result.content.length).toBeGreaterThan(50_000_000);
  });

  it("holds 200 MB of output in bounded memory", { timeout: 60_000 }, async () => {
    const ws = await workspace();
    const before = process.memoryUsage().rss;
    let peak = before;
    const stop = sampleEvery(20, () => {
      peak = Math.max(peak, process.memoryUsage().rss);
    });
    const command = "head -c 200000000 /dev/zero | tr '\\0' 'a'";
    const result = await ws.run("bash", { command }).finally(stop);
    expect(result.content.length).toBeLessThan(50_100);
    expect(result.content).toMatch(
      /^a{25000}\n\[truncated 199950000 characters\]\na{25000}\n\[exit code 0\]$/,
    );
    // Measured: about 27 MB here; keeping the whole output makes it about 230 MB.
    expect(peak - before).toBeLessThan(100 * 2 ** 20);
  });

  it("cuts output with emoji across both cut points into well-formed text", async () => {
    const ws = await workspace();
    const emoji = `${process.execPath} -e 'process.stdout.write("😀".repeat(30000))'`;
    // 60 000 UTF-16 units of emoji; one "x" before them shifts every pair across the cuts.
    for (const lead of ["", "x"]) {
      const result = await ws.run("bash", { command: `printf '${lead}'; ${emoji}` });
      const body = result.content.replace(/\n\[exit code 0\]$/, "");
      const [head = "", marker = "", tail = ""] = body.split("\n");
      expect(marker).toMatch(/^\[truncated \d+ characters\]$/);
      // Nothing but whole pairs around the lead and the marker: no lone surrogate anywhere.
      expect(body.replace(/\uD83D\uDE00/g, "")).toBe(`${lead}\n${marker}\n`);
      expect(head.length + tail.length).toBeLessThanOrEqual(50_000);
      const cut = Number(/\d+/.exec(marker)?.[0]);
      expect(head.length + cut + tail.length).toBe(lead.length + 60_000);
    }
  });

  it("hides secret variables from the command and sets a non-interactive environment", async () => {
    const ws = await workspace();
    const env = {
      PATH: process.env.PATH,
      FAKE_API_KEY: "canary-key-0123456789",
      GH_TOKEN: "canary-token-0123456789",
      VISIBLE: "yes",
    };
    const bash = bashTool(ws.root, { env });
    const result = await bash.execute({ command: "env" });
    expect(result.content).not.toContain("canary");
    expect(result.content.split("\n")).toEqual(
      expect.arrayContaining(["VISIBLE=yes", "PAGER=cat", "GIT_TERMINAL_PROMPT=0"]),
    );
  });

  it("reports an abort that came before the command started", async () => {
    const ws = await workspace();
    expect(await ws.run("bash", { command: "echo hi" }, AbortSignal.abort())).toEqual({
      content: "bash aborted before it started",
      isError: true,
    });
  });
});
