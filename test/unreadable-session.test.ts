import { chmod, chown, readdir, utimes } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { type CliOptions, runBin, sessionFiles, useCliSetup } from "./support/cli.js";

/**
 * A session file the CLI cannot read: as root (where mode 000 is still readable) the file stays
 * root's with mode 0600 and the CLI runs as `nobody`, who owns everything else; as another user
 * the file gets mode 000. Either way it is listed, and `--continue` never takes an older session.
 */

const setup = useCliSetup();
const asRoot = process.getuid?.() === 0;

/** Two sessions, the newer one unreadable to the CLI the returned options run. */
async function newestUnreadable() {
  const { server, workspace, home, options } = await setup([
    stream(turn({ text: ["first answer"] })),
    stream(turn({ text: ["second answer"] })),
  ]);
  expect((await runBin(["the older task"], options)).code).toBe(0);
  const [older = ""] = await sessionFiles(home);
  expect((await runBin(["the newer task"], options)).code).toBe(0);
  const newer = (await sessionFiles(home)).find((file) => file !== older) ?? "";
  await utimes(older, new Date("2026-01-01T00:00:00Z"), new Date("2026-01-01T00:00:00Z"));
  await utimes(newer, new Date("2026-01-02T00:00:00Z"), new Date("2026-01-02T00:00:00Z"));
  let run: CliOptions = options;
  if (asRoot) {
    for (const dir of [workspace, home]) {
      await chown(dir, 65534, 65534);
      for (const entry of await readdir(dir, { recursive: true })) {
        await chown(`${dir}/${entry}`, 65534, 65534);
      }
    }
    await chown(newer, 0, 0);
    await chmod(newer, 0o600);
    run = { ...options, asNobody: true };
  } else {
    await chmod(newer, 0o000);
  }
  return { server, older, newer, options: run };
}

describe("a newest session file the CLI cannot read", () => {
  it("is listed by --sessions as unreadable, above the older one", async () => {
    const { older, newer, options } = await newestUnreadable();
    const listing = await runBin(["--sessions"], options);
    expect(listing).toMatchObject({ code: 0, stderr: "" });
    const [first, second, ...rest] = listing.stdout.split("\n");
    expect(first).toBe(
      `${basename(newer, ".jsonl")}  2026-01-02 00:00  unreadable: cannot be resumed (permission denied)`,
    );
    expect(second).toMatch(
      new RegExp(
        `^${basename(older, ".jsonl")} {2}2026-01-01 00:00 +[\\d.]+ [KMG]?B {2}the older task$`,
      ),
    );
    expect(rest).toEqual([""]);
  });

  it("makes --continue refuse in one line naming it, without touching the older session", async () => {
    const { server, newer, older, options } = await newestUnreadable();
    const before = await readdir(dirname(newer));
    const run = await runBin(["--continue", "go on"], options);
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr: `mini-agent: cannot continue the newest session ${basename(newer, ".jsonl")}: its file ${newer} cannot be read (permission denied); fix its owner or mode, or choose one with --resume ID (mini-agent --sessions lists them)\n`,
    });
    expect(server.requests).toHaveLength(2);
    expect(await readdir(dirname(newer))).toEqual(before);
    expect(before.sort()).toEqual([basename(newer), basename(older)].sort());
  });

  it("makes rewind refuse in one line that names rewind's own way to choose", async () => {
    const { newer, options } = await newestUnreadable();
    expect(await runBin(["rewind", "--to", "1", "--dry-run"], options)).toEqual({
      code: 1,
      stdout: "",
      stderr: `mini-agent: cannot rewind the newest session ${basename(newer, ".jsonl")}: its file ${newer} cannot be read (permission denied); fix its owner or mode, or choose one with mini-agent rewind ID --to N (mini-agent --sessions lists them)\n`,
    });
  });

  it("makes --resume and export of it refuse in one line", async () => {
    const { server, newer, options } = await newestUnreadable();
    const line = `mini-agent: session file ${newer} cannot be read (permission denied): fix its owner or mode\n`;
    const run = await runBin(["--resume", basename(newer, ".jsonl"), "go on"], options);
    expect(run).toEqual({ code: 1, stdout: "", stderr: line });
    expect(server.requests).toHaveLength(2);
    const exported = await runBin(["export", "--format", "md"], options);
    expect(exported).toEqual({ code: 2, stdout: "", stderr: line });
  });
});

describe("a newest session file the CLI can read but not write", () => {
  it("makes --continue refuse in one line naming the file, before any request", async () => {
    const { server, newer, options } = await newestUnreadable();
    await chmod(newer, asRoot ? 0o644 : 0o400);
    const run = await runBin(["--continue", "go on"], options);
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toMatch(
      new RegExp(`^mini-agent: cannot write to session file ${newer}: EACCES \\([^)\\n]+\\)\\n$`),
    );
    expect(server.requests).toHaveLength(2);
  });
});
