import { mkdir, readFile, utimes, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { errorOf, invalidLines, noAnswer, withAcpAgent } from "./support/acp.js";
import { runBin, sessionFiles, useCliSetup } from "./support/cli.js";

const setup = useCliSetup();

/** Every page of `session/list` with these parameters, following `nextCursor`. */
async function allPages(agent: acp.ClientContext, params: acp.ListSessionsRequest) {
  const pages: acp.ListSessionsResponse[] = [];
  let cursor: string | undefined;
  do {
    const page = await agent.request("session/list", { ...params, ...(cursor && { cursor }) });
    pages.push(page);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && pages.length < 10);
  return pages;
}

const copies = 55;

describe("mini-agent acp session/list", () => {
  it("lists a folder's resumable sessions newest first in pages, and every folder's without cwd", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ text: "one" })),
      stream(turn({ text: "two" })),
      stream(turn({ text: "three" })),
    ]);
    const other = join(home, "other");
    await mkdir(other);
    expect((await runBin(["first\tprompt \u001b[31mred"], options)).code).toBe(0);
    expect((await runBin(["second prompt"], options)).code).toBe(0);
    expect((await runBin(["elsewhere"], { ...options, cwd: other })).code).toBe(0);
    const originals = (await sessionFiles(home)).filter((f) => f.endsWith(".jsonl"));
    const texts = await Promise.all(originals.map((f) => readFile(f, "utf8")));
    const elsewhere = originals.find((_, n) => texts[n]?.includes('"elsewhere"'));
    const first = originals.find((f) => f !== elsewhere);
    if (first === undefined || elsewhere === undefined) throw new Error("no session files");
    // More sessions of the workspace than a page holds: copies of one with ids of their own.
    const text = await readFile(first, "utf8");
    const id = basename(first, ".jsonl");
    for (let n = 0; n < copies; n++) {
      const copy = `copy-${String(n).padStart(2, "0")}`;
      await writeFile(join(dirname(first), `${copy}.jsonl`), text.replaceAll(id, copy));
    }
    // One that cannot be resumed (empty) is left out.
    await writeFile(join(dirname(first), "damaged.jsonl"), "");
    // Each session's last activity set apart, so the expected order is known.
    const files = (await sessionFiles(home)).filter((f) => f.endsWith(".jsonl"));
    const minute = (n: number) => new Date(Date.UTC(2026, 0, 1, 10, n));
    for (const [n, file] of files.entries()) await utimes(file, minute(n), minute(n));
    const newestFirst = (where: (file: string) => boolean) =>
      files
        .map((file, n) => ({ file, n }))
        .filter(({ file }) => where(file) && basename(file) !== "damaged.jsonl")
        .sort((a, b) => b.n - a.n)
        .map(({ file }) => basename(file, ".jsonl"));

    const { value, run, code } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent) => ({
        init: await agent.request("initialize", { protocolVersion: 1 }),
        here: await allPages(agent, { cwd: workspace }),
        all: await allPages(agent, {}),
        gone: await agent.request("session/list", { cwd: join(home, "no-such-folder") }),
        relative: await errorOf(agent.request("session/list", { cwd: "." })),
        badCursor: await errorOf(agent.request("session/list", { cursor: "nonsense" })),
      }),
    );
    expect(code).toBe(0);
    expect(invalidLines(run.lines)).toEqual([]);
    expect(server.rejections).toEqual([]);
    expect(value.init.agentCapabilities?.sessionCapabilities).toEqual({ list: {}, close: {} });

    const inWorkspace = newestFirst((file) => file !== elsewhere);
    expect(inWorkspace).toHaveLength(copies + 2);
    expect(value.here.map((page) => page.sessions.length)).toEqual([50, copies + 2 - 50]);
    expect(value.here.map((page) => page.nextCursor !== undefined)).toEqual([true, false]);
    const listed = value.here.flatMap((page) => page.sessions);
    expect(listed.map((s) => s.sessionId)).toEqual(inWorkspace);
    expect(listed.every((s) => s.cwd === workspace)).toBe(true);
    expect(listed.map((s) => s.updatedAt)).toEqual(
      inWorkspace.map((sessionId) => {
        const n = files.findIndex((f) => basename(f, ".jsonl") === sessionId);
        return minute(n).toISOString();
      }),
    );
    // Titles are the first prompts on one line, control characters made visible.
    const titles = new Map(listed.map((s) => [s.sessionId, s.title]));
    const titleOf = async (file: string) =>
      titles.get(basename(file, ".jsonl")) ?? `(${basename(file)} not listed)`;
    const byPrompt = await Promise.all(
      originals
        .filter((f) => f !== elsewhere)
        .map(async (f) => [(await readFile(f, "utf8")).includes("second"), await titleOf(f)]),
    );
    expect(byPrompt.sort()).toEqual([
      [false, "first prompt ␛[31mred"],
      [true, "second prompt"],
    ]);

    const everywhere = value.all.flatMap((page) => page.sessions);
    expect(everywhere.map((s) => s.sessionId)).toEqual(newestFirst(() => true));
    expect(everywhere.find((s) => s.sessionId === basename(elsewhere, ".jsonl"))).toEqual({
      sessionId: basename(elsewhere, ".jsonl"),
      cwd: other,
      title: "elsewhere",
      updatedAt: expect.any(String),
    });
    expect(value.gone).toEqual({ sessions: [] });
    expect(value.relative).toEqual({
      code: -32602,
      message: expect.stringContaining("cwd must be an absolute path: ."),
    });
    expect(value.badCursor).toEqual({
      code: -32602,
      message: expect.stringContaining("not a cursor this agent gave"),
    });
  });
});
