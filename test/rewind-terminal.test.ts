import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rewindAtPrompt } from "../src/cli/rewind-turn.js";
import { lineIntent } from "../src/cli/slash-commands.js";
import { call, done, text } from "../src/testing/fake-client.js";
import { trackedRunner } from "./support/changes.js";
import { useTempDirs } from "./support/temp.js";

/**
 * `/rewind` at the interactive prompt: the prompts of the branch with the files each turn
 * changed; `/rewind N` puts those files back and the running session goes on from just before
 * prompt N, its next request carrying the branch's history only.
 */

const tempDir = useTempDirs();

describe("/rewind at the prompt", () => {
  it("reads /rewind, /rewind N and a bad N as commands", () => {
    expect(lineIntent("/rewind")).toEqual({ kind: "rewind" });
    expect(lineIntent("/rewind 2")).toEqual({ kind: "rewind", to: 2 });
    expect(lineIntent("/rewind two")).toEqual({ kind: "rewind", invalid: "two" });
  });

  it("lists the prompts with their files, then goes back to just before prompt N", async () => {
    const session = await trackedRunner(await tempDir(), [
      [
        call("r1", "read", { path: "a.txt" }),
        call("e1", "edit", { path: "a.txt", oldText: "0", newText: "1" }),
        done,
      ],
      [text("one"), done],
      [
        call("e2", "edit", { path: "a.txt", oldText: "1", newText: "2" }),
        call("w1", "write", { path: "b.txt", content: "b" }),
        done,
      ],
      [text("two"), done],
      [text("on the branch"), done],
    ]);
    const { workspace, runner, journal, client } = session;
    await writeFile(join(workspace, "a.txt"), "0");
    await runner.runTurn("first");
    await runner.runTurn("second");
    let shown = "";
    const parts = {
      runner,
      journal,
      workspace,
      stateDir: session.state,
      write: (t: string) => (shown += t),
    };

    await rewindAtPrompt(parts, { kind: "rewind" });
    expect(shown).toBe(
      [
        "  1  first  (a.txt)",
        "  2  second  (a.txt, b.txt)",
        "/rewind N goes back to just before prompt N: the files changed since are put back, and the conversation goes on from there",
        "",
      ].join("\n"),
    );
    shown = "";
    await rewindAtPrompt(parts, { kind: "rewind", to: 2 });
    expect(shown).toBe(
      [
        "restored a.txt",
        "deleted b.txt (the agent created it)",
        "mini-agent: the conversation went back to just before prompt 2; prompt 2 stays in the session file as a branch",
        "",
      ].join("\n"),
    );
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("1");
    // Recorded as `mini-agent rewind` records it: a kill between start and end is told on --continue.
    const records = (await readFile(journal.sessionPath ?? "", "utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; path?: string; to?: number });
    const rewinding = records.slice(records.findIndex((r) => r.type === "rewind_start"));
    expect(rewinding.map(({ type, path, to }) => [type, path ?? to])).toEqual([
      ["rewind_start", 2],
      ["file_restore", "a.txt"],
      ["file_restore", "b.txt"],
      ["rewind", 2],
      ["rewind_end", 2],
    ]);

    await runner.runTurn("second, again");
    const last = client.requests.at(-1);
    expect(last?.messages.flatMap((m) => (m.role === "user" ? [m.content] : []))).toEqual([
      "first",
      "second, again",
    ]);
    shown = "";
    await rewindAtPrompt(parts, { kind: "rewind", to: 5 });
    await rewindAtPrompt(parts, { kind: "rewind", invalid: "x" });
    expect(shown).toBe(
      [
        "mini-agent: the session has 2 prompts: /rewind takes from 1 to 2",
        'mini-agent: /rewind takes a prompt number, 1 for the first, not "x"',
        "",
      ].join("\n"),
    );
  });
});
