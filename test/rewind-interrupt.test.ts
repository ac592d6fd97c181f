import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session/read.js";
import { call, done, text } from "../src/testing/fake-client.js";
import { recordsOf, trackedRunner } from "./support/changes.js";
import { runBin } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A rewind tells each file as it is put back, and Ctrl-C stops it before the next file: it says
 * how many files it did not reach and the command that finishes it, exits 130, and leaves the
 * conversation as it was; running that command puts back the rest.
 */

const tempDir = useTempDirs();
const COUNT = 150;
const names = Array.from({ length: COUNT }, (_, i) => `f${String(i).padStart(3, "0")}.dat`);

async function manyEdits(home: string) {
  const session = await trackedRunner(home, [
    [...names.map((name, i) => call(`r${i}`, "read", { path: name, limit: 1 })), done],
    [...names.map((name, i) => call(`w${i}`, "write", { path: name, content: "edited\n" })), done],
    [text("done"), done],
  ]);
  const original = `original\n${"x".repeat(128 * 1024)}\n`;
  for (const name of names) await writeFile(join(session.workspace, name), original);
  await session.runner.runTurn("edit them all");
  await session.journal.close();
  const env = { PATH: process.env.PATH, HOME: home, MINI_AGENT_HOME: session.state };
  return { ...session, env, original };
}

describe("a rewind interrupted", () => {
  it("tells each file put back, stops at Ctrl-C with how to finish, and the same command finishes it", async () => {
    const home = await tempDir();
    const { workspace, env, original, path } = await manyEdits(home);
    const run = await runBin(["rewind", "--to", "1"], {
      cwd: workspace,
      env,
      started: (child) => {
        let sent = false;
        child.stdout?.on("data", (chunk: Buffer) => {
          if (sent || !chunk.toString().includes("restored")) return;
          sent = true;
          child.kill("SIGINT");
        });
      },
    });
    const lines = run.stdout.split("\n");
    const restored = lines.filter((line) => line.startsWith("restored "));
    const k = restored.length;
    expect(k).toBeGreaterThan(0);
    expect(k).toBeLessThan(COUNT);
    expect(run).toEqual({
      code: 130,
      stdout: [
        'rewinding the files and the conversation of session s1 to just before prompt 1 ("edit them all"):',
        ...names.slice(0, k).map((name) => `restored ${name}`),
        "",
      ].join("\n"),
      stderr: [
        "",
        "mini-agent: interrupting (Ctrl-C again to quit)",
        `mini-agent: rewind interrupted: ${COUNT - k} files not reached; \`mini-agent rewind s1 --to 1\` finishes it`,
        "",
      ].join("\n"),
    });
    const held = names.map((name) => readFileSync(join(workspace, name), "utf8") === original);
    expect(held).toEqual(names.map((_, i) => i < k));
    expect(recordsOf(path).filter((r) => r.type.startsWith("rewind"))).toEqual([
      { type: "rewind_start", to: 1, files: true, conversation: true },
    ]);
    // The next load tells it (--continue says so, with the command that finishes it).
    expect((await readSession(path)).openRewind).toEqual({ to: 1, conversation: true });

    const again = await runBin(["rewind", "--to", "1"], { cwd: workspace, env });
    expect(again).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        'rewinding the files and the conversation of session s1 to just before prompt 1 ("edit them all"):',
        ...names.slice(k).map((name) => `restored ${name}`),
        "the conversation goes on from just before prompt 1 (mini-agent --continue); prompt 1 stays in the session file as a branch",
        "",
      ].join("\n"),
    });
    expect((await readSession(path)).openRewind).toBeUndefined();
    expect(recordsOf(path).filter((r) => r.type.startsWith("rewind"))).toEqual([
      { type: "rewind_start", to: 1, files: true, conversation: true },
      { type: "rewind_start", to: 1, files: true, conversation: true },
      { type: "rewind", to: 1 },
      { type: "rewind_end", to: 1 },
    ]);
  }, 60_000);
});
