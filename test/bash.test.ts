import { describe, expect, it } from "vitest";
import { bashTool } from "../src/tools/bash.js";
import { processesWith } from "./support/processes.js";
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
      { command: "echo begun; sleep 314 & sleep 315" },
      controller.signal,
    );
    setTimeout(() => controller.abort(), 300);
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
