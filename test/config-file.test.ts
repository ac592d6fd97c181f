import { existsSync, readdirSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { loadTrust } from "../src/trust/trust.js";
import { type CliOptions, runBin, useCliSetup } from "./support/cli.js";

/** The configuration files: the user's config.json and a project's .mini-agent/config.json. */

const setup = useCliSetup();

const userFile = (home: string) => join(home, "state", "config.json");
const projectFile = (workspace: string) => join(workspace, ".mini-agent", "config.json");

async function writeUser(home: string, value: unknown): Promise<void> {
  await mkdir(join(home, "state"), { recursive: true });
  await writeFile(userFile(home), typeof value === "string" ? value : JSON.stringify(value));
}

async function writeProject(workspace: string, value: unknown): Promise<string> {
  await mkdir(join(workspace, ".mini-agent"), { recursive: true });
  const text = typeof value === "string" ? value : JSON.stringify(value);
  await writeFile(projectFile(workspace), text);
  return text;
}

/** Trusts the project file's current text in the record, as `mini-agent trust` would. */
async function trustProject(home: string, workspace: string, text: string): Promise<void> {
  const trust = await loadTrust(join(home, "state"), workspace);
  await trust.trust([{ kind: "config", name: "config.json", hash: contentHash(text) }]);
}

/** The value and source `mini-agent config` prints for one field. */
async function shown(field: string, argv: string[], options: CliOptions): Promise<string[]> {
  const run = await runBin(["config", ...argv], options);
  expect(run.code, run.stderr).toBe(0);
  return run.stdout
    .split("\n")
    .filter((line) => line.startsWith(`${field} `))
    .map((line) => line.slice(26));
}

describe("precedence: flags > environment > project > user > defaults", () => {
  const kinds: {
    field: string;
    user: unknown;
    project: unknown;
    flag: string[];
    env?: [string, string];
    expected: { none: string; user: string; project: string; env?: string; flag: string };
  }[] = [
    {
      field: "model",
      user: { model: "user-model" },
      project: { model: "project-model" },
      env: ["MINI_AGENT_MODEL", "env-model"],
      flag: ["--model", "flag-model"],
      expected: {
        none: "claude-sonnet-5-5  (default)",
        user: "user-model  (USER)",
        project: "project-model  (PROJECT)",
        env: "env-model  (MINI_AGENT_MODEL)",
        flag: "flag-model  (--model)",
      },
    },
    {
      field: "thinking",
      user: { thinking: "low" },
      project: { thinking: "high" },
      flag: ["--thinking", "medium"],
      expected: {
        none: "(the model's default)  (default)",
        user: "low  (USER)",
        project: "high  (PROJECT)",
        flag: "medium  (--thinking)",
      },
    },
    {
      field: "maxTurns",
      user: { maxTurns: 20 },
      project: { maxTurns: 10 },
      flag: ["--max-turns", "5"],
      expected: {
        none: "50  (default)",
        user: "20  (USER)",
        project: "10  (PROJECT)",
        flag: "5  (--max-turns)",
      },
    },
    {
      field: "sandbox.limits.processes",
      user: { sandbox: { limits: { processes: 100 } } },
      project: { sandbox: { limits: { processes: 50 } } },
      flag: ["--sandbox-processes", "7"],
      expected: {
        none: "4096  (default)",
        user: "100  (USER)",
        project: "50  (PROJECT)",
        flag: "7  (--sandbox-processes)",
      },
    },
    {
      field: "sandbox.mode",
      user: { sandbox: { mode: "off" } },
      project: { sandbox: { mode: "required" } },
      flag: ["--sandbox", "auto"],
      expected: {
        none: "auto  (default)",
        user: "off  (USER)",
        project: "required  (PROJECT)",
        flag: "auto  (--sandbox)",
      },
    },
  ];

  for (const kind of kinds) {
    it(`takes ${kind.field} from the highest layer that sets it`, async () => {
      const { home, workspace, options } = await setup([]);
      const label = (text: string) =>
        text.replace("USER", userFile(home)).replace("PROJECT", projectFile(workspace));
      expect(await shown(kind.field, [], options)).toEqual([kind.expected.none]);
      await writeUser(home, kind.user);
      expect(await shown(kind.field, [], options)).toEqual([label(kind.expected.user)]);
      await trustProject(home, workspace, await writeProject(workspace, kind.project));
      expect(await shown(kind.field, [], options)).toEqual([label(kind.expected.project)]);
      if (kind.env && kind.expected.env) {
        const env = { ...options.env, [kind.env[0]]: kind.env[1] };
        expect(await shown(kind.field, [], { ...options, env })).toEqual([kind.expected.env]);
      }
      expect(await shown(kind.field, kind.flag, options)).toEqual([kind.expected.flag]);
    });
  }

  it("adds up lists (deny rules, hidden paths): user, project, then flags", async () => {
    const { home, workspace, options } = await setup([]);
    await writeUser(home, { rules: { deny: ["rm -rf"] }, sandbox: { hide: ["~/keys"] } });
    const text = await writeProject(workspace, {
      rules: { deny: ["git push"] },
      sandbox: { hide: ["private"] },
    });
    await trustProject(home, workspace, text);
    const argv = ["--deny", "curl", "--sandbox-hide", "notes"];
    expect(await shown("rules", argv, options)).toEqual([
      `deny rm -rf  (${userFile(home)})`,
      `deny git push  (${projectFile(workspace)})`,
      "deny curl  (--deny)",
    ]);
    expect(await shown("sandbox.hide", argv, options)).toEqual([
      `${join(home, "keys")}  (${userFile(home)})`,
      `${join(workspace, "private")}  (${projectFile(workspace)})`,
      `${join(workspace, "notes")}  (--sandbox-hide)`,
    ]);
  });

  it("sends the model of the user file, under the one of the environment", async () => {
    const { server, home, options } = await setup([
      stream(turn({ text: ["one"] })),
      stream(turn({ text: ["two"] })),
    ]);
    await writeUser(home, { model: "user-model", maxTurns: 3 });
    expect((await runBin(["task"], options)).code).toBe(0);
    const env = { ...options.env, MINI_AGENT_MODEL: "env-model" };
    expect((await runBin(["task"], { ...options, env })).code).toBe(0);
    expect(server.requests.map((request) => request.body.model)).toEqual([
      "user-model",
      "env-model",
    ]);
  });
});

describe("mini-agent config", () => {
  it("prints every effective value with its source (golden)", async () => {
    const { home, workspace, options } = await setup([]);
    await writeUser(home, {
      model: "user-model",
      thinking: "low",
      maxTurns: 20,
      sandbox: { mode: "auto", hide: ["~/secrets"], limits: { processes: 100, memory: "1G" } },
      rules: { allow: ["git status"], deny: ["rm -rf"] },
      mcpServers: { docs: { command: "docs-server" } },
      skills: { paths: ["~/skills"] },
    });
    const text = await writeProject(workspace, {
      model: "project-model",
      contextWindow: 64000,
      sandbox: { mode: "required", hide: ["private"], limits: { processes: 50 } },
      rules: { deny: ["git push"] },
      skills: { paths: ["skills"] },
    });
    await trustProject(home, workspace, text);
    const run = await runBin(["config", "--max-turns", "7", "--deny", "curl"], options);
    const golden = `\
user file                 read  (HOME/state/config.json)
project file              trusted, read  (WS/.mini-agent/config.json)
provider                  anthropic  (default)
model                     project-model  (WS/.mini-agent/config.json)
baseURL                   URL  (ANTHROPIC_BASE_URL)
thinking                  low  (HOME/state/config.json)
contextWindow             64000  (WS/.mini-agent/config.json)
maxTurns                  7  (--max-turns)
sandbox.mode              required  (WS/.mini-agent/config.json)
sandbox.limits.processes  50  (WS/.mini-agent/config.json)
sandbox.limits.memory     1073741824  (HOME/state/config.json)
sandbox.limits.fileSize   4294967296  (default)
sandbox.hide              HOME/secrets  (HOME/state/config.json)
sandbox.hide              WS/private  (WS/.mini-agent/config.json)
rules                     allow git status  (HOME/state/config.json)
rules                     deny rm -rf  (HOME/state/config.json)
rules                     deny git push  (WS/.mini-agent/config.json)
rules                     deny curl  (--deny)
mcpServers                docs  (HOME/state/config.json)
skills.paths              HOME/skills  (HOME/state/config.json)
skills.paths              WS/skills  (WS/.mini-agent/config.json)
`;
    const url = options.env.ANTHROPIC_BASE_URL ?? "";
    expect({ ...run, stdout: run.stdout.replaceAll(url, "URL") }).toEqual({
      code: 0,
      stdout: golden.replaceAll("HOME", home).replaceAll("WS", workspace),
      stderr: "",
    });
  });

  it("prints the user file's path with config path, and creates nothing", async () => {
    const { home, options } = await setup([]);
    expect(await runBin(["config", "path"], options)).toEqual({
      code: 0,
      stdout: `${userFile(home)}\n`,
      stderr: "",
    });
    expect(existsSync(join(home, "state"))).toBe(false);
  });
});

describe("a bad user file", () => {
  const cases: [unknown, string][] = [
    ["{ not json", "not valid JSON"],
    [[1], "must be a JSON object"],
    [{ modle: "x" }, "modle is not a known field (docs/configuration.md lists them)"],
    [{ maxTurns: 0 }, "maxTurns must be a whole number from 1 to 100000000, not 0"],
    [{ maxTurns: "5" }, 'maxTurns must be a whole number from 1 to 100000000, not "5"'],
    [
      { provider: "gemini" },
      'provider must be "anthropic", "openai" or "openai-responses", not "gemini"',
    ],
    [
      { thinking: "extreme" },
      'thinking must be "off", "low", "medium", "high", "xhigh" or "max", not "extreme"',
    ],
    [
      { contextWindow: 10 },
      "contextWindow must be a whole number of tokens from 4096 to 100000000, not 10",
    ],
    [
      { baseURL: "ftp://x" },
      'baseURL must be an http(s) address such as http://127.0.0.1:11434/v1, not "ftp://x"',
    ],
    [{ sandbox: { mode: "on" } }, 'sandbox.mode must be "auto", "required" or "off", not "on"'],
    [
      { sandbox: { limits: { memory: "lots" } } },
      'sandbox.limits.memory must be a size such as 512M, 16G or a number of bytes, not "lots"',
    ],
    [
      { sandbox: { hide: ["relative"] } },
      'sandbox.hide must hold absolute paths or paths starting with ~/, not "relative"',
    ],
    [{ rules: { deny: ["'unclosed"] } }, "rules.deny[0]: "],
    [{ rules: { allow: [3] } }, "rules.allow[0] must be a rule (command words), not 3"],
    [{ mcpServers: { docs: { url: "http://x" } } }, 'server "docs": '],
    [{ skills: { paths: "~/skills" } }, 'skills.paths must be an array of folders, not "~/skills"'],
    [
      { model: "sk-ant-api03-abcdefghijklmnop" },
      "model looks like an API key: keys belong in the environment",
    ],
    [
      {
        mcpServers: { gh: { command: "gh", env: { GH_TOKEN: "ghp_abcdefghijklmnopqrstuvwxyz" } } },
      },
      "mcpServers.gh.env.GH_TOKEN looks like an API key",
    ],
    [{ baseURL: "https://user:secret@example.com/v1" }, "baseURL looks like an API key"],
  ];

  it("is one line naming the file and the field, exit 2, nothing created, no request", async () => {
    const { server, home, options } = await setup([stream(turn({ text: ["no"] }))]);
    for (const [value, message] of cases) {
      await writeUser(home, value);
      const run = await runBin(["task"], options);
      const lines = run.stderr.split("\n");
      expect({ value, code: run.code, stdout: run.stdout, lines: lines.length }).toEqual({
        value,
        code: 2,
        stdout: "",
        lines: 2,
      });
      expect(lines[0]).toContain(`mini-agent: ${userFile(home)}: ${message}`);
      expect(readdirSync(join(home, "state"))).toEqual(["config.json"]);
    }
    expect(server.requests).toEqual([]);
  });
});

describe("a project file", () => {
  const forbidden: [unknown, string][] = [
    [{ provider: "openai" }, "provider"],
    [{ baseURL: "http://127.0.0.1:9/v1" }, "baseURL"],
    [{ rules: { allow: ["git push"] } }, "rules.allow"],
    [{ sandbox: { mode: "off" } }, "sandbox.mode"],
    [{ sandbox: { limits: { processes: 5000 } } }, "sandbox.limits.processes"],
    [{ mcpServers: { docs: { command: "docs" } } }, "mcpServers"],
  ];

  it("refuses each field that would widen what the user allowed, once trusted: exit 2, no request", async () => {
    const { server, home, workspace, options } = await setup([stream(turn({ text: ["no"] }))]);
    for (const [value, field] of forbidden) {
      await trustProject(home, workspace, await writeProject(workspace, value));
      const run = await runBin(["task"], options);
      expect({ value, code: run.code, stdout: run.stdout }).toEqual({ value, code: 2, stdout: "" });
      expect(run.stderr).toMatch(
        new RegExp(
          `^mini-agent: ${projectFile(workspace)}: ${field.replace(".", "\\.")} [^\n]+\n$`,
        ),
      );
    }
    expect(server.requests).toEqual([]);
  });

  it("refuses a limit above the user's, which is a raise too", async () => {
    const { home, workspace, options } = await setup([]);
    await writeUser(home, { sandbox: { limits: { processes: 100 } } });
    await trustProject(
      home,
      workspace,
      await writeProject(workspace, { sandbox: { limits: { processes: 200 } } }),
    );
    expect(await runBin(["config"], options)).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: ${projectFile(workspace)}: sandbox.limits.processes cannot be raised by a project file (200 is above 100)\n`,
    });
  });

  it("lowers the file size limit from a project file, and refuses a raise of it", async () => {
    const { home, workspace, options } = await setup([]);
    await writeUser(home, { sandbox: { limits: { fileSize: "2G" } } });
    const file = await writeProject(workspace, { sandbox: { limits: { fileSize: "3G" } } });
    await trustProject(home, workspace, file);
    expect(await runBin(["config"], options)).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: ${projectFile(workspace)}: sandbox.limits.fileSize cannot be raised by a project file (${3 * 2 ** 30} is above ${2 * 2 ** 30})\n`,
    });
    await trustProject(
      home,
      workspace,
      await writeProject(workspace, { sandbox: { limits: { fileSize: "1G" } } }),
    );
    const run = await runBin(["config"], options);
    expect(run.stdout).toContain(
      `sandbox.limits.fileSize   ${2 ** 30}  (${projectFile(workspace)})`,
    );
  });

  it("is skipped with one line until trusted, then read; changed, it is skipped again", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: ["one"] })),
      stream(turn({ text: ["two"] })),
      stream(turn({ text: ["three"] })),
    ]);
    await writeProject(workspace, { model: "project-model" });
    const skipped = `mini-agent: ${projectFile(workspace)} is not trusted, so it is not read (mini-agent trust reads it from now on)\n`;
    expect(await runBin(["task"], options)).toMatchObject({ code: 0, stderr: skipped });
    expect(await runBin(["trust"], options)).toEqual({
      code: 0,
      stdout: `trusted config: ${projectFile(workspace)}\n`,
      stderr: "",
    });
    expect(await runBin(["task"], options)).toMatchObject({ code: 0, stderr: "" });
    // The model (or anyone) changes the file: its hash is another, so it is not read.
    await writeProject(workspace, { model: "changed-model" });
    expect(await runBin(["task"], options)).toMatchObject({ code: 0, stderr: skipped });
    expect(server.requests.map((request) => request.body.model)).toEqual([
      "claude-sonnet-5-5",
      "project-model",
      "claude-sonnet-5-5",
    ]);
  });

  it("is never validated into an exit 2 while untrusted, and trust refuses to approve it", async () => {
    const { server, home, workspace, options } = await setup([stream(turn({ text: ["one"] }))]);
    await writeProject(workspace, { baseURL: "http://evil.example/v1" });
    const run = await runBin(["task"], options);
    expect(run.code).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(await runBin(["trust"], options)).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: ${projectFile(workspace)}: baseURL cannot be set by a project file, only narrowed: set it in your own config.json or with a flag (not trusted)\n`,
    });
    const trust = await loadTrust(join(home, "state"), workspace);
    expect(trust.entries()).toEqual([]);
  });

  it("loses its trust with trust --revoke", async () => {
    const { home, workspace, options } = await setup([]);
    await writeProject(workspace, { model: "project-model" });
    expect((await runBin(["trust"], options)).code).toBe(0);
    expect(await shown("model", [], options)).toEqual([
      `project-model  (${projectFile(workspace)})`,
    ]);
    expect(await runBin(["trust", "--revoke"], options)).toEqual({
      code: 0,
      stdout: `revoked 1 trusted entry of ${workspace}\n`,
      stderr: "",
    });
    expect(await shown("model", [], options)).toEqual(["claude-sonnet-5-5  (default)"]);
    expect((await loadTrust(join(home, "state"), workspace)).entries()).toEqual([]);
  });
});
