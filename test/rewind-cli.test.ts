import { readFileSync, statSync } from "node:fs";
import { unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { readSession, Session } from "../src/session/session.js";
import { startAnthropicServer, stream, turn } from "../src/testing/anthropic-server.js";
import { fourKinds, latin1 } from "./support/changes.js";
import { useCleanup } from "./support/cleanup.js";
import { cliEnv, runBin } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/**
 * `mini-agent rewind [ID] --to N --files-only [--dry-run]`, the built command, over a session the
 * runner wrote: what it prints, what it changes, and one line for every bad input.
 */

const tempDir = useTempDirs();
const track = useCleanup();
const files = ["bom.txt", "crlf.txt", "latin1.txt", "made/new.txt", "run.sh"];

async function setUp() {
  const home = await tempDir();
  const session = await fourKinds(home);
  const env = { PATH: process.env.PATH, HOME: home, MINI_AGENT_HOME: session.state };
  const rewind = (...args: string[]) =>
    runBin(["rewind", ...args], { cwd: session.workspace, env });
  const snapshot = () =>
    files.map((file) => {
      const path = join(session.workspace, file);
      return [file, readFileSync(path), statSync(path).mode];
    });
  return { ...session, rewind, snapshot };
}

describe("mini-agent rewind", () => {
  it("says what it would do with --dry-run and changes nothing, then does it, one prompt back and then further", async () => {
    const { rewind, snapshot, workspace } = await setUp();
    const before = snapshot();
    const dry = await rewind("--to", "1", "--files-only", "--dry-run");
    expect(dry).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        'would rewind the files of session s1 to just before prompt 1 ("first"):',
        "would restore bom.txt",
        "would restore crlf.txt",
        "would restore latin1.txt",
        "would delete made/new.txt (the agent created it)",
        "would restore run.sh",
        "would remove made/ (the agent made the folder)",
        "dry run: nothing was changed",
        "",
      ].join("\n"),
    });
    expect(snapshot()).toEqual(before);

    const second = await rewind("s1", "--to", "2", "--files-only");
    expect(second).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        'rewinding the files of session s1 to just before prompt 2 ("second"):',
        "restored crlf.txt",
        "",
      ].join("\n"),
    });
    expect(readFileSync(join(workspace, "crlf.txt"), "utf8")).toBe("one\r\n2\r\n");

    // The first rewind is recorded: the next one goes on from what it put back.
    const real = await rewind("s1", "--to", "1", "--files-only");
    expect(real.stdout).toBe(
      [
        'rewinding the files of session s1 to just before prompt 1 ("first"):',
        "restored bom.txt",
        "restored crlf.txt",
        "restored latin1.txt",
        "deleted made/new.txt (the agent created it)",
        "restored run.sh",
        "removed made/ (the agent made the folder)",
        "",
      ].join("\n"),
    );
    expect(real.code).toBe(0);
    expect(readFileSync(join(workspace, "latin1.txt"))).toEqual(latin1);
    expect(readFileSync(join(workspace, "crlf.txt"), "utf8")).toBe("one\r\ntwo\r\n");

    const again = await rewind("--to", "1", "--files-only");
    expect(again.stdout).toBe(
      [
        'rewinding the files of session s1 to just before prompt 1 ("first"):',
        "nothing to rewind: every file the agent changed from prompt 1 on is as it was then",
        "",
      ].join("\n"),
    );
  });

  it("refuses a file changed since with a short diff, changes it not, and exits 1", async () => {
    const { rewind, workspace } = await setUp();
    await writeFile(join(workspace, "crlf.txt"), "1\r\n2\r\nthree\r\n");
    const run = await rewind("--to", "2", "--files-only");
    expect(run).toEqual({
      code: 1,
      stderr: "",
      stdout: [
        'rewinding the files of session s1 to just before prompt 2 ("second"):',
        "not restored crlf.txt: it changed since the agent's last change",
        "    --- crlf.txt before prompt 2",
        "    +++ crlf.txt now",
        "    -one␍",
        "    +1␍",
        "     2␍",
        "    +three␍",
        "",
      ].join("\n"),
    });
    expect(readFileSync(join(workspace, "crlf.txt"), "utf8")).toBe("1\r\n2\r\nthree\r\n");
  });

  it("refuses every bad input in one line, and changes nothing", async () => {
    const { rewind, snapshot, path, blobs } = await setUp();
    const before = snapshot();
    const refusals: [string[], number, string][] = [
      [
        ["--to", "x", "--files-only"],
        2,
        'mini-agent: --to needs a prompt number, 1 for the first, not "x"',
      ],
      [
        ["--to", "0", "--files-only"],
        2,
        'mini-agent: --to needs a prompt number, 1 for the first, not "0"',
      ],
      [
        ["--to", "3", "--files-only"],
        2,
        "mini-agent: session s1: the session has 2 prompts: --to must be from 1 to 2",
      ],
      [
        ["--files-only"],
        2,
        "mini-agent: rewind needs --to N: the prompt to go back to just before, 1 for the first (usage: mini-agent rewind [ID] --to N [--files-only | --conversation-only] [--dry-run])",
      ],
      [
        ["--to", "1", "--files-only", "--conversation-only"],
        2,
        "mini-agent: --files-only and --conversation-only exclude each other: give one, or neither for both",
      ],
      [
        ["nope", "--to", "1", "--files-only"],
        2,
        'mini-agent: no session "nope" for this folder (mini-agent --sessions lists them)',
      ],
    ];
    for (const [args, code, line] of refusals) {
      const run = await rewind(...args);
      expect({ args, code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
        args,
        code,
        stdout: "",
        stderr: `${line}\n`,
      });
    }
    const open = await Session.open(path);
    try {
      const locked = await rewind("--to", "1", "--files-only");
      expect(locked).toEqual({
        code: 1,
        stdout: "",
        stderr: `mini-agent: session s1 is in use by another mini-agent (pid ${process.pid})\n`,
      });
    } finally {
      await open.session.close();
    }
    expect(snapshot()).toEqual(before);

    await unlink(join(blobs, contentHash("#!/bin/sh\necho hi\n")));
    const missing = await rewind("--to", "1", "--files-only", "--dry-run");
    expect(missing.code).toBe(1);
    expect(missing.stdout.split("\n")).toContain(
      `would not restore run.sh: its bytes before prompt 1 are missing from the session's blob store (${contentHash("#!/bin/sh\necho hi\n")})`,
    );
  });

  it("rewinds the files and the conversation by default; --continue goes on from just before prompt N", async () => {
    const { rewind, workspace, path, state } = await setUp();
    const dry = await rewind("--to", "2", "--dry-run");
    expect(dry.stdout).toBe(
      [
        'would rewind the files and the conversation of session s1 to just before prompt 2 ("second"):',
        "would restore crlf.txt",
        "would take the conversation back to just before prompt 2; prompt 2 would stay in the session file as a branch",
        "dry run: nothing was changed",
        "",
      ].join("\n"),
    );
    expect((await readSession(path)).messages.filter((m) => m.role === "user")).toHaveLength(2);

    const run = await rewind("--to", "2");
    expect(run).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        'rewinding the files and the conversation of session s1 to just before prompt 2 ("second"):',
        "restored crlf.txt",
        "the conversation goes on from just before prompt 2 (mini-agent --continue); prompt 2 stays in the session file as a branch",
        "",
      ].join("\n"),
    });
    const server = await startAnthropicServer([stream(turn({ text: ["on the branch"] }))]);
    track(server);
    const env = { ...cliEnv(join(state, ".."), server.url), MINI_AGENT_HOME: state };
    const next = await runBin(["--continue", "second, again"], { cwd: workspace, env });
    expect(next.stdout).toBe("on the branch\n");
    expect(server.rejections).toEqual([]);
    const prompts = (await readSession(path)).messages.flatMap((m) =>
      m.role === "user" ? [m.content] : [],
    );
    expect(prompts).toEqual(["first", "second, again"]);
    expect(readFileSync(path, "utf8")).toContain('"content":"second"');

    const only = await rewind("--to", "2", "--conversation-only");
    expect(only.stdout).toBe(
      [
        'rewinding the conversation of session s1 to just before prompt 2 ("second, again"):',
        "the conversation goes on from just before prompt 2 (mini-agent --continue); prompt 2 stays in the session file as a branch",
        "",
      ].join("\n"),
    );
    expect(
      (await readSession(path)).messages.flatMap((m) => (m.role === "user" ? [m.content] : [])),
    ).toEqual(["first"]);
  });
});
