import { utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allSessions, sessionToResume } from "../src/app/sessions.js";
import { UsageError } from "../src/cli/args.js";
import { PickerState, pickerKeys } from "../src/cli/picker.js";
import { formatSessions } from "../src/cli/session-list.js";
import { listSessions, Session } from "../src/session/session.js";
import { sessionsDir } from "../src/session/store.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/** Choosing the session to resume: by a unique prefix of its id, from a picker, across folders. */

const tempDir = useTempDirs();

async function sessionsIn(dir: string, ids: string[], workspace = "/w"): Promise<void> {
  for (const id of ids) {
    const session = await Session.create({ dir, workspace, model: "m", id });
    await session.record({
      type: "message",
      message: { role: "user", content: `prompt of ${id}` },
    });
    await session.close();
  }
}

describe("--resume with a prefix of an id", () => {
  it("takes the one session whose id starts with the prefix, and a whole id as it is", async () => {
    const dir = await tempDir();
    await sessionsIn(dir, ["20261201-203946-ab12", "20261201-203946-cd34", "20261130-101010-ef56"]);
    expect(await sessionToResume(dir, "20261130")).toBe(join(dir, "20261130-101010-ef56.jsonl"));
    expect(await sessionToResume(dir, "20261201-203946-c")).toBe(
      join(dir, "20261201-203946-cd34.jsonl"),
    );
    expect(await sessionToResume(dir, "20261201-203946-ab12")).toBe(
      join(dir, "20261201-203946-ab12.jsonl"),
    );
  });

  it("refuses an ambiguous prefix in one line naming the candidates, and an unknown one", async () => {
    const dir = await tempDir();
    await sessionsIn(dir, ["20261201-203946-ab12", "20261201-203946-cd34"]);
    const ambiguous = sessionToResume(dir, "20261201-2039");
    await expect(ambiguous).rejects.toThrow(UsageError);
    await expect(ambiguous).rejects.toThrow(
      'session prefix "20261201-2039" is ambiguous: 20261201-203946-cd34, 20261201-203946-ab12 (give more of the id; mini-agent --sessions lists them)',
    );
    await expect(sessionToResume(dir, "2025")).rejects.toThrow(
      'no session "2025" for this folder (mini-agent --sessions lists them)',
    );
    await expect(sessionToResume(dir, "")).rejects.toThrow(UsageError);
  });
});

describe("the session picker", () => {
  it("reads arrow keys, digits, Enter, Esc and Ctrl-C from what the terminal sends", () => {
    expect(pickerKeys("\x1b[A\x1b[B\x1bOA\x1bOB")).toEqual(["up", "down", "up", "down"]);
    expect(pickerKeys("12\r")).toEqual(["1", "2", "enter"]);
    expect(pickerKeys("\x1b")).toEqual(["cancel"]);
    expect(pickerKeys("\x03")).toEqual(["cancel"]);
    expect(pickerKeys("x\x1b[C")).toEqual([]);
  });

  it("moves the choice with the arrows, within the list, and to a typed number", () => {
    const state = new PickerState(12);
    expect(state.selected).toBe(0);
    state.key("up");
    expect(state.selected).toBe(0);
    state.key("down");
    state.key("down");
    expect(state.selected).toBe(2);
    state.key("1");
    expect(state.selected).toBe(0);
    state.key("2");
    expect(state.selected).toBe(11);
    // 3 after 12 would be 123: a number starts again at the digit.
    state.key("3");
    expect(state.selected).toBe(2);
    state.key("1");
    state.key("0");
    expect(state.selected).toBe(9);
    for (let i = 0; i < 5; i++) state.key("down");
    expect(state.selected).toBe(11);
    expect(state.key("enter")).toBe("chosen");
    expect(new PickerState(3).key("cancel")).toBe("cancelled");
  });
});

describe("--sessions --all", () => {
  it("lists every folder's sessions newest first, each with its folder", async () => {
    const state = await tempDir();
    const env = { MINI_AGENT_HOME: state };
    await sessionsIn(sessionsDir(env, "/one"), ["20261201-000000-aaaa"], "/one");
    await sessionsIn(sessionsDir(env, "/two"), ["20261202-000000-bbbb"], "/two");
    const older = join(sessionsDir(env, "/one"), "20261201-000000-aaaa.jsonl");
    await utimes(older, new Date("2026-12-01T00:00:00Z"), new Date("2026-12-01T00:00:00Z"));
    const all = await allSessions(state, (line) => expect.fail(line));
    expect(all.map((s) => `${s.id} ${s.workspace}`)).toEqual([
      "20261202-000000-bbbb /two",
      "20261201-000000-aaaa /one",
    ]);
    const rows = formatSessions(all, { folders: true }).split("\n");
    expect(rows[1]).toMatch(
      /^20261201-000000-aaaa {2}2026-12-01 00:00 {2}\s+\d+ B {2}\/one {2}prompt of 20261201-000000-aaaa$/,
    );
    expect(formatSessions([], { folders: true })).toBe("no sessions\n");
    expect(await listSessions(join(state, "none"))).toEqual([]);
  });
});

const setup = useCliSetup();

describe("choosing a session from the command line", () => {
  it("resumes by a prefix, refuses an ambiguous one and --resume without an id when piped, each in one line with exit 2", async () => {
    const { server, options, home } = await setup([
      stream(turn({ text: ["First."] })),
      stream(turn({ text: ["Second."] })),
    ]);
    expect((await runBin(["hello"], options)).code).toBe(0);
    const [listed] = (await runBin(["--sessions"], options)).stdout.split("  ");
    const id = listed ?? "";
    const resumed = await runBin(["--resume", id.slice(0, 10), "again"], options);
    expect(resumed.stdout).toBe("Second.\n");
    expect(resumed.code).toBe(0);
    expect(server.requests[1]?.body.messages).toHaveLength(3);
    const unknown = await runBin(["--resume", "1999", "again"], options);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'mini-agent: no session "1999" for this folder (mini-agent --sessions lists them)\n',
    );
    const bare = await runBin(["--resume"], { ...options, input: "" });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toBe(
      "mini-agent: --resume without an id needs a terminal to choose on: give the id (mini-agent --sessions lists them)\n",
    );
    const all = await runBin(["--sessions", "--all"], options);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(`${id}  `);
    expect(all.stdout).toContain(`  ${options.cwd}  hello\n`);
    const alone = await runBin(["--all"], options);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toBe("mini-agent: --all goes with --sessions\n");
    expect(home).not.toBe("");
  });
});
