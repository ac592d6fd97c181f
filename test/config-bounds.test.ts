import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, useCliSetup } from "./support/cli.js";

/**
 * Configuration files built to hurt, as a hostile repository or an unlucky user would write them:
 * nested past any use, control characters, bytes that are not UTF-8, a file too big to be a
 * configuration. Each is one line naming the file and what is wrong, exit 2, nothing created and
 * no request; a project file of that kind is only skipped. And a user file's base URL belongs to
 * the provider it was written for: a run with another provider never sends that provider's key
 * there.
 */

const setup = useCliSetup();

const deep = (levels: number) => `{"model":${"[".repeat(levels)}${"]".repeat(levels)}}`;

async function userFile(home: string, content: string | Buffer): Promise<string> {
  await mkdir(join(home, "state"), { recursive: true });
  const file = join(home, "state", "config.json");
  await writeFile(file, content);
  return file;
}

async function expectRefused(content: string | Buffer, reason: string | RegExp) {
  const { home, server, options } = await setup([]);
  const file = await userFile(home, content);
  const run = await runBin(["hello"], options);
  expect(run.code).toBe(2);
  expect(run.stdout).toBe("");
  const lines = run.stderr.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(file);
  expect(lines[0]).toMatch(reason);
  expect(server.requests).toEqual([]);
  expect(await readdir(join(home, "state"))).toEqual(["config.json"]);
}

describe("configuration files built to hurt", () => {
  it("refuses a user file nested deeper than any configuration needs", async () => {
    await expectRefused(deep(100_000), /nested deeper than \d+ levels/);
  });

  it("refuses control characters in a value or a name", async () => {
    await expectRefused(JSON.stringify({ model: "claude\u001b[2J" }), /model .*control character/);
    await expectRefused(JSON.stringify({ model: "a\u0000b" }), /model .*control character/);
    await expectRefused('{"mo\\u0007del": "x"}', /control character/);
  });

  it("refuses bytes that are not UTF-8", async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"model": "cl'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    await expectRefused(bytes, /not UTF-8 text/);
  });

  it("refuses a file too big to be a configuration without reading it", async () => {
    await expectRefused(`{"model": "${"x".repeat(2 * 1024 * 1024)}"}`, /larger than 1 MiB/);
  });

  it("skips such a project file with one line, and mini-agent trust refuses it in one line", async () => {
    const { workspace, options } = await setup([stream(turn({ text: ["fine"] }))]);
    await mkdir(join(workspace, ".mini-agent"));
    const file = join(workspace, ".mini-agent", "config.json");
    await writeFile(file, deep(100_000));
    const trust = await runBin(["trust"], options);
    expect(trust.code).toBe(2);
    expect(trust.stderr.trim().split("\n")).toHaveLength(1);
    expect(trust.stderr).toContain(file);
    expect(trust.stderr).toMatch(/nested deeper than \d+ levels/);
    await writeFile(file, `{"model": "${"x".repeat(2 * 1024 * 1024)}"}`);
    const run = await runBin(["hello"], options);
    expect(run).toEqual({
      code: 0,
      stdout: "fine\n",
      stderr: `mini-agent: ${file}: is larger than 1 MiB: skipped\n`,
    });
  });

  it("keeps a user file's base URL for the provider it names, never another provider's key", async () => {
    const { home, options } = await setup([]);
    await userFile(
      home,
      JSON.stringify({ provider: "openai", model: "gpt-test", baseURL: "http://127.0.0.1:9/v1" }),
    );
    const env = { ...options.env, ANTHROPIC_BASE_URL: undefined };
    const same = await runBin(["config"], { ...options, env });
    expect(same.stdout).toMatch(/^baseURL +http:\/\/127\.0\.0\.1:9\/v1 /m);
    const other = await runBin(["config", "--provider", "anthropic", "--model", "m"], {
      ...options,
      env,
    });
    expect(other.code).toBe(0);
    expect(other.stdout).toMatch(/^baseURL +\(the provider's\) +\(default\)$/m);
  });
});
