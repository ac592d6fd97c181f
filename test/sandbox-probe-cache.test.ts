import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { probeCacheFile, probeKey } from "../src/sandbox/probe-cache.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, sessionRecords, toolResults, useCliSetup } from "./support/cli.js";

const setup = useCliSetup();

/**
 * A bwrap on `PATH` that notes each start in `log` and then exits 0 (`works`) or fails as a bwrap
 * that cannot make its namespaces does. It never runs a command: what matters is how often it
 * is started and what the CLI makes of its answers.
 */
async function fakeBwrap(home: string, env: NodeJS.ProcessEnv, works: boolean) {
  const fakeBin = join(home, "fake-bin");
  const file = join(fakeBin, "bwrap");
  const log = join(home, "bwrap.log");
  await mkdir(fakeBin, { recursive: true });
  await writeFile(
    file,
    works
      ? `#!/bin/sh\necho started >> '${log}'\nexit 0\n`
      : `#!/bin/sh\necho started >> '${log}'\necho 'no user namespaces' >&2\nexit 1\n`,
  );
  await chmod(file, 0o755);
  const PATH = `${fakeBin}:${process.env.PATH}`;
  const starts = async () => (await readFile(log, "utf8").catch(() => "")).split("\n").length - 1;
  return { file, log, starts, PATH, env: { ...env, PATH } };
}

const stateOf = (env: NodeJS.ProcessEnv) => env.MINI_AGENT_HOME ?? "";

/** Writes the state folder's answer "bwrap works under `key`", as another run would have. */
async function keepAnswer(state: string, key: string, mode = 0o600) {
  await mkdir(join(state, "cache"), { recursive: true });
  const file = probeCacheFile(state);
  await writeFile(file, JSON.stringify({ version: 1, works: key }), { mode });
  await chmod(file, mode);
}

const readTask = () => [
  stream(turn({ calls: [{ id: "toolu_1", name: "read", input: { path: "notes.txt" } }] })),
  stream(turn({ text: ["hello"] })),
];

describe("bwrap's answer kept in the state folder", () => {
  it("keeps a positive answer: the next run starts no bwrap, a changed bwrap is probed again", async () => {
    const { workspace, home, options } = await setup([...readTask(), ...readTask(), ...readTask()]);
    await writeFile(join(workspace, "notes.txt"), "hello\n");
    const bwrap = await fakeBwrap(home, options.env, true);
    const run = () => runBin(["--allow-bash", "what do the notes say?"], { ...options, ...bwrap });

    expect(await run()).toMatchObject({
      code: 0,
      stdout: "hello\n",
      stderr: "  ✓ read notes.txt\n",
    });
    expect(await bwrap.starts()).toBe(1);
    expect(await run()).toMatchObject({
      code: 0,
      stdout: "hello\n",
      stderr: "  ✓ read notes.txt\n",
    });
    expect(await bwrap.starts()).toBe(1);
    const headers = await Promise.all(
      (await sessionFiles(home)).map(async (file) => (await sessionRecords(file))[0]?.sandbox),
    );
    expect(headers).toEqual(["bwrap", "bwrap"]);

    // Another bwrap at the same path (an upgrade): its answer is not the old one's.
    await writeFile(bwrap.file, `#!/bin/sh\necho started >> '${bwrap.log}'\nexit 0\n\n`);
    expect(await run()).toMatchObject({ code: 0, stdout: "hello\n" });
    expect(await bwrap.starts()).toBe(2);
  });

  it("probes again when the kept answer is stale or not the user's own file", async () => {
    const { workspace, home, options } = await setup([...readTask(), ...readTask()]);
    await writeFile(join(workspace, "notes.txt"), "hello\n");
    const bwrap = await fakeBwrap(home, options.env, false);
    const key = probeKey(bwrap.file, bwrap.PATH) ?? "";
    const fields = JSON.parse(key) as string[];
    // The same bwrap under another kernel release.
    await keepAnswer(
      stateOf(options.env),
      JSON.stringify(fields.map((field, i) => (i === 2 ? "0.0.0-other" : field))),
    );
    const warned = {
      code: 0,
      stdout: "hello\n",
      stderr:
        "mini-agent: warning: bash runs without a sandbox: bwrap cannot create the sandbox here: no user namespaces\n  ✓ read notes.txt\n",
    };
    const run = () => runBin(["--allow-bash", "what do the notes say?"], { ...options, ...bwrap });
    expect(await run()).toEqual(warned);
    expect(await bwrap.starts()).toBe(1);
    // The right key in a file others may write: not an answer to take.
    await keepAnswer(stateOf(options.env), key, 0o666);
    expect(await run()).toEqual(warned);
    expect(await bwrap.starts()).toBe(2);
  });

  it("a forged answer makes commands fail, never run outside the sandbox, and is dropped", async () => {
    const { workspace, home, server, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "touch made" } }] })),
      stream(turn({ calls: [{ id: "toolu_2", name: "bash", input: { command: "touch made" } }] })),
      stream(turn({ text: ["done"] })),
    ]);
    const bwrap = await fakeBwrap(home, options.env, false);
    const state = stateOf(options.env);
    await keepAnswer(state, probeKey(bwrap.file, bwrap.PATH) ?? "");
    const run = await runBin(["--allow-bash", "make a file"], { ...options, ...bwrap });

    const broken =
      "the sandbox cannot be created here any more (bwrap cannot create the sandbox here: no user namespaces), though bwrap worked here before: the kept answer is dropped and bash will not run in this process; start mini-agent again to decide afresh";
    const failed = {
      id: "toolu_1",
      content: `no user namespaces\n[exit code 1]\nbash failed: ${broken}`,
      isError: true,
    };
    const refused = { id: "toolu_2", content: `bash refused: ${broken}`, isError: true };
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([failed]);
    expect(toolResults(server.requests[2]?.body ?? {})).toEqual([failed, refused]);
    expect(run).toMatchObject({ code: 0, stdout: "done\n" });
    // bwrap started for the first command and for the probe after it fails; not for the second.
    expect(await bwrap.starts()).toBe(2);
    expect(existsSync(join(workspace, "made"))).toBe(false);
    expect(existsSync(probeCacheFile(state))).toBe(false);
  });
});
