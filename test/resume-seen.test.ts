import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { type ScriptedCall, stream, turn } from "../src/testing/anthropic-server.js";
import { noAnswer, withAcpAgent } from "./support/acp.js";
import { runBin, sessionFiles, sessionRecords, toolResults, useCliSetup } from "./support/cli.js";

/**
 * A resumed session keeps what the file tools had seen (newcomer report F1): `--continue`,
 * `--resume` and an editor's `session/load` rebuild it from the session file, so a file the
 * agent read or wrote and that is unchanged since can be edited at once, and a changed one is
 * still refused. Every refusal says what is true.
 */

const setup = useCliSetup();

const calls = (...list: [string, Record<string, unknown>][]): ScriptedCall[] =>
  list.map(([name, input], at) => ({
    id: `toolu_${name}_${at}`,
    name,
    input,
  }));

const round = (...list: [string, Record<string, unknown>][]) =>
  stream(turn({ calls: calls(...list) }));
const answer = (text: string) => stream(turn({ text }));

const edit = (path: string, oldText: string, newText: string) =>
  ["edit", { path, oldText, newText }] as [string, Record<string, unknown>];

describe("a resumed session keeps what its tools had seen", () => {
  it("edits at once after --continue what it wrote or read, and refuses a file changed since", async () => {
    const { server, workspace, options } = await setup([
      round(
        ["write", { path: "a.txt", content: "a1\n" }],
        ["write", { path: "sub/b.txt", content: "b1\n" }],
        ["read", { path: "c.txt", offset: 2, limit: 1 }],
        ["read", { path: "d.txt" }],
      ),
      answer("made"),
      round(
        edit("a.txt", "a1", "a2"),
        edit("sub/b.txt", "b1", "b2"),
        edit("c.txt", "c1", "C1"),
        edit("d.txt", "d1", "D1"),
        edit("e.txt", "e1", "E1"),
      ),
      answer("edited"),
    ]);
    await writeFile(join(workspace, "c.txt"), "c1\nc2\nc3\n");
    await writeFile(join(workspace, "d.txt"), "d1\n");
    await writeFile(join(workspace, "e.txt"), "e1\n");
    const first = await runBin(["--sandbox", "off", "make the files"], options);
    expect(first.stdout).toBe("made\n");
    // Someone changes d.txt between the two runs.
    await writeFile(join(workspace, "d.txt"), "d1\nmore\n");

    const next = await runBin(["--sandbox", "off", "--continue", "edit them"], options);
    expect(next.stdout).toBe("edited\n");
    expect(next.code).toBe(0);
    expect(toolResults(server.requests[3]?.body ?? {}).slice(-5)).toEqual([
      {
        id: "toolu_edit_0",
        content: "edited a.txt: replaced 1 occurrence at line 1",
        isError: false,
      },
      {
        id: "toolu_edit_1",
        content: "edited sub/b.txt: replaced 1 occurrence at line 1",
        isError: false,
      },
      {
        id: "toolu_edit_2",
        content: "edited c.txt: replaced 1 occurrence at line 1",
        isError: false,
      },
      {
        id: "toolu_edit_3",
        content: "d.txt has changed since you last read or wrote it: read it again, then edit",
        isError: true,
      },
      {
        id: "toolu_edit_4",
        content: "e.txt exists and has not been read in this session: read it first, then edit",
        isError: true,
      },
    ]);
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("a2\n");
    expect(await readFile(join(workspace, "sub/b.txt"), "utf8")).toBe("b2\n");
    expect(await readFile(join(workspace, "c.txt"), "utf8")).toBe("C1\nc2\nc3\n");
    expect(await readFile(join(workspace, "d.txt"), "utf8")).toBe("d1\nmore\n");
    expect(server.rejections).toEqual([]);
  });

  it("keeps what a call saw with its result in the session file: the path and the sha256", async () => {
    const { workspace, home, options } = await setup([
      round(["write", { path: "a.txt", content: "a1\n" }], ["read", { path: "a.txt" }]),
      answer("done"),
    ]);
    await runBin(["--sandbox", "off", "write and read"], options);
    const [file] = await sessionFiles(home);
    const results = (await sessionRecords(file ?? ""))
      .map((record) => record.message as Record<string, unknown> | undefined)
      .filter((message) => message?.role === "tool");
    const sha256 = createHash("sha256").update("a1\n").digest("hex");
    expect(results.map((message) => message?.seen)).toEqual([
      { path: "a.txt", sha256 },
      { path: "a.txt", sha256 },
    ]);
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("a1\n");
  });

  it("edits at once after --resume ID", async () => {
    const { server, workspace, home, options } = await setup([
      round(["write", { path: "a.txt", content: "a1\n" }]),
      answer("made"),
      round(edit("a.txt", "a1", "a2")),
      answer("edited"),
    ]);
    await runBin(["--sandbox", "off", "make it"], options);
    const [file] = await sessionFiles(home);
    const id = basename(file ?? "", ".jsonl");
    const next = await runBin(["--sandbox", "off", "--resume", id, "edit it"], options);
    expect(next.stdout).toBe("edited\n");
    expect(toolResults(server.requests[3]?.body ?? {}).at(-1)).toEqual({
      id: "toolu_edit_0",
      content: "edited a.txt: replaced 1 occurrence at line 1",
      isError: false,
    });
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("a2\n");
  });

  it("tells a session written by an older version (no hashes kept) to read again", async () => {
    const { server, workspace, home, options } = await setup([
      round(["write", { path: "a.txt", content: "a1\n" }], ["read", { path: "c.txt" }]),
      answer("made"),
      round(edit("a.txt", "a1", "a2"), edit("c.txt", "c1", "C1")),
      answer("refused"),
    ]);
    await writeFile(join(workspace, "c.txt"), "c1\n");
    await runBin(["--sandbox", "off", "make it"], options);
    // What an older version wrote: the same records without what each call saw.
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    const older = records.map((record) => {
      const message = record.message as Record<string, unknown> | undefined;
      if (message?.role !== "tool") return record;
      const { seen: _seen, ...rest } = message;
      return { ...record, message: rest };
    });
    expect(older).not.toEqual(records);
    await writeFile(file ?? "", `${older.map((record) => JSON.stringify(record)).join("\n")}\n`);

    const next = await runBin(["--sandbox", "off", "--continue", "edit it"], options);
    expect(next.stdout).toBe("refused\n");
    const olderRefusal = (path: string) =>
      `${path} exists and has not been read since this session was resumed, and this session was written by an older version, which kept no record of what was read: read it again, then edit`;
    expect(toolResults(server.requests[3]?.body ?? {}).slice(-2)).toEqual([
      { id: "toolu_edit_0", content: olderRefusal("a.txt"), isError: true },
      { id: "toolu_edit_1", content: olderRefusal("c.txt"), isError: true },
    ]);
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("a1\n");
  });

  it("edits at once after an editor's session/load", async () => {
    const { server, workspace, options } = await setup([
      round(["write", { path: "a.txt", content: "a1\n" }]),
      answer("made"),
      round(edit("a.txt", "a1", "a2")),
      answer("edited"),
    ]);
    const prompt = (agent: acp.ClientContext, sessionId: string, text: string) =>
      agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    const first = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      const session = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
      await prompt(agent, session.sessionId, "make it");
      return session.sessionId;
    });
    const second = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      const sessionId = first.value;
      await agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
      return await prompt(agent, sessionId, "edit it");
    });
    expect(second.value).toEqual({ stopReason: "end_turn" });
    expect(toolResults(server.requests[3]?.body ?? {}).at(-1)).toEqual({
      id: "toolu_edit_0",
      content: "edited a.txt: replaced 1 occurrence at line 1",
      isError: false,
    });
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("a2\n");
  });
});
