import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session/session.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import {
  failingSessionWrites,
  runBin,
  sessionFiles,
  toolResults,
  useCliSetup,
} from "./support/cli.js";
import { converse, hasScript } from "./support/pty.js";

/** The state folder cannot be written: a path through a file, a full disk. */

const setup = useCliSetup();
const noSpace = (state: string) =>
  `mini-agent: cannot write the session in ${state}: no space left on device (free space, or set MINI_AGENT_HOME to another folder)`;

describe("a state folder that cannot be written", () => {
  it("is one line with a hint and exit 1, before the provider is asked anything", async () => {
    const { server, home, options } = await setup([stream(turn({ text: ["no"] }))]);
    const file = join(home, "a-file");
    await writeFile(file, "");
    const state = join(file, "state");
    const run = await runBin(["task"], {
      ...options,
      env: { ...options.env, MINI_AGENT_HOME: state },
    });
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr: `mini-agent: cannot write the session in ${state}: a part of the path is not a folder (set MINI_AGENT_HOME to a folder you can write)\n`,
    });
    expect(server.requests).toEqual([]);
  });

  it("leaves no empty session file when even the first record cannot be written", async () => {
    const { server, home, options } = await setup([stream(turn({ text: ["no"] }))]);
    const run = await runBin(["task"], {
      ...options,
      env: { ...options.env, ...failingSessionWrites(1) },
    });
    expect(run).toEqual({ code: 1, stdout: "", stderr: `${noSpace(join(home, "state"))}\n` });
    expect(await sessionFiles(home)).toEqual([]);
    expect(server.requests).toEqual([]);
  });

  it("fails the injected write it is told to, and only that one", async () => {
    const { home, options } = await setup([stream(turn({ text: ["fine"] }))]);
    const run = await runBin(["task"], {
      ...options,
      env: { ...options.env, ...failingSessionWrites(3) },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`${noSpace(join(home, "state"))}\n`);
    const [file] = await sessionFiles(home);
    expect((await readSession(file ?? "")).messages).toEqual([{ role: "user", content: "task" }]);
  });
});

describe.skipIf(!hasScript)("a session write that fails in an interactive session", () => {
  it.each([
    [4, "the round's assistant message", []],
    [
      6,
      "a call's result",
      [
        {
          id: "toolu_1",
          content:
            "outcome unknown: the session ended before this call reported a result; it may or may not have run",
          isError: true,
        },
      ],
    ],
  ])(
    "(write %d, %s) ends the turn with one line, and the next turn sends a valid history",
    async (write, _what, results) => {
      const { server, workspace, home, options } = await setup([
        stream(turn({ calls: [{ id: "toolu_1", name: "ls", input: {} }] })),
        stream(turn({ text: ["Second answer."] })),
      ]);
      const env = { ...options.env, ...failingSessionWrites(write) };
      const { code, screen } = await converse(env, workspace, [
        ["› ", "first\r"],
        [noSpace(join(home, "state")), ""],
        ["› ", "second\r"],
        ["Second answer.", ""],
        ["› ", "/exit\r"],
      ]);
      expect(code).toBe(0);
      expect(screen).not.toContain("    at ");
      expect(server.rejections).toEqual([]);
      expect(toolResults(server.requests[1]?.body ?? {})).toEqual(results);
      const sent = server.requests[1]?.body.messages as { role: string }[];
      expect(sent.map((message) => message.role)).toEqual(
        results.length > 0 ? ["user", "assistant", "user"] : ["user"],
      );
      expect(existsSync(join(home, "state"))).toBe(true);
    },
  );
});
