import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lowSpace } from "../src/rewind/free-space.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import {
  runBin,
  sessionFiles,
  sessionRecords,
  smallDisk,
  toolResults,
  useCliSetup,
} from "./support/cli.js";

/**
 * When the workspace's or the state folder's file system has under 1 GiB free, a call that would
 * run without asking asks instead, saying why: a command could fill the disk, and what it changes
 * could not all be kept for a rewind.
 */

const setup = useCliSetup();

const low = (name: string, path: string) =>
  `the file system of the ${name} (${path}) has 512 MiB free, under 1 GiB: a call could fill it, and what it changes could not all be kept for a rewind`;

describe("a nearly full disk", () => {
  it("names the first file system under 1 GiB free, and none when both have more", () => {
    const free = (bytes: Record<string, number>) => (path: string) => bytes[path];
    const watched = { workspace: "/w", stateDir: "/s" };
    expect(lowSpace(watched, free({ "/w": 2 ** 31, "/s": 2 ** 29 }))).toBe(
      low("state folder", "/s"),
    );
    expect(lowSpace(watched, free({ "/w": 2 ** 29, "/s": 2 ** 29 }))).toBe(low("workspace", "/w"));
    expect(lowSpace(watched, free({ "/w": 2 ** 30, "/s": 2 ** 30 }))).toBeUndefined();
    expect(lowSpace(watched, free({}))).toBeUndefined();
  });

  it("asks about a bash call --allow-bash would run, and with no one to ask denies it, saying why", async () => {
    const { workspace, home, options, server } = await setup([
      stream(turn({ calls: [{ id: "b1", name: "bash", input: { command: "touch made" } }] })),
      stream(
        turn({ calls: [{ id: "w1", name: "write", input: { path: "w.txt", content: "w" } }] }),
      ),
      stream(turn({ text: ["done"] })),
    ]);
    const env = { ...options.env, ...smallDisk(workspace, 512 * 2 ** 20) };
    const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], { ...options, env });
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
    const why = `${low("workspace", workspace)}, and no one can be asked here`;
    expect(toolResults(server.requests[2]?.body ?? {})).toEqual([
      { id: "b1", content: expect.stringContaining(why), isError: true },
      { id: "w1", content: expect.stringContaining(why), isError: true },
    ]);
    await expect(readFile(join(workspace, "made"))).rejects.toThrow(/ENOENT/);
    await expect(readFile(join(workspace, "w.txt"))).rejects.toThrow(/ENOENT/);
    const [file] = (await sessionFiles(home)).filter((path) => path.endsWith(".jsonl"));
    const approvals = (await sessionRecords(file ?? "")).filter((r) => r.type === "approval");
    expect(approvals.map((a) => [a.toolCallId, a.approved, a.by])).toEqual([
      ["b1", false, "no-terminal"],
      ["w1", false, "no-terminal"],
    ]);
  });

  it("asks about the state folder's file system too, and runs calls when there is room", async () => {
    const { workspace, home, options, server } = await setup([
      stream(turn({ calls: [{ id: "b1", name: "bash", input: { command: "touch made" } }] })),
      stream(turn({ text: ["done"] })),
      stream(turn({ calls: [{ id: "b2", name: "bash", input: { command: "touch made" } }] })),
      stream(turn({ text: ["done"] })),
    ]);
    const state = join(home, "state");
    const env = { ...options.env, ...smallDisk(state, 512 * 2 ** 20) };
    const first = await runBin(["--allow-bash", "--sandbox", "off", "go"], { ...options, env });
    expect(first.code).toBe(0);
    expect(toolResults(server.requests[1]?.body ?? {})[0]?.content).toContain(
      low("state folder", state),
    );
    const second = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
    expect(second.code).toBe(0);
    expect(await readFile(join(workspace, "made"), "utf8")).toBe("");
  });
});
