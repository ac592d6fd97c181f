import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { bin, type CliRun, runBin, useCliSetup } from "./support/cli.js";

/** How mini-agent is configured: flags, environment and folders, and what it says when they are wrong. */

const setup = useCliSetup();

describe("configuration errors", () => {
  it("are one line with a hint, exit 2, and happen before anything is created", async () => {
    const { server, workspace, home, options } = await setup([stream(turn({ text: ["no"] }))]);
    const file = join(workspace, "notes.txt");
    await writeFile(file, "a file, not a folder\n");
    const cases: [string[], string][] = [
      [["--cwd", file, "task"], `not a folder: ${file} (--cwd needs a folder)`],
      [
        ["--cwd", join(workspace, "gone"), "task"],
        `no such folder: ${join(workspace, "gone")} (check --cwd)`,
      ],
      [
        ["--base-url", "notaurl", "task"],
        '--base-url must be an http(s) address such as http://127.0.0.1:11434/v1, not "notaurl"',
      ],
      [["-m", "", "task"], "--model is empty: name a model, or leave the flag out"],
      [
        ["--max-turns", "-1", "task"],
        '--max-turns must be a whole number from 1 to 100000000, not "-1"',
      ],
      [
        ["--frobnicate", "task"],
        "unknown option --frobnicate (mini-agent --help lists the options)",
      ],
    ];
    for (const [argv, message] of cases) {
      const run = await runBin(argv, options);
      expect({ argv, ...run }).toEqual({
        argv,
        code: 2,
        stdout: "",
        stderr: `mini-agent: ${message}\n`,
      });
    }
    expect(existsSync(join(home, "state"))).toBe(false);
    expect(server.requests).toEqual([]);
  });

  // A wrapper that runs `mini-agent -- "$TASK"` must never run a command because of the task's
  // word: `trust` would trust the project's configuration and servers.
  it("takes the words after -- as the task, never as a command", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ text: ["done"] })),
      stream(turn({ text: ["done"] })),
    ]);
    await mkdir(join(workspace, ".mini-agent"));
    await writeFile(join(workspace, ".mini-agent", "config.json"), '{"maxTurns": 3}');
    const runs = [
      await runBin(["--", "trust"], options),
      await runBin(["--max-turns", "2", "--", "export", "--force"], options),
    ];
    const tasks = server.requests.map((request) =>
      (request.body as { messages: { content: { text: string }[] }[] }).messages[0]?.content
        .map((block) => block.text)
        .join(""),
    );
    expect({ runs: runs.map((run) => run.stdout), tasks }).toEqual({
      runs: ["done\n", "done\n"],
      tasks: ["trust", "export --force"],
    });
    expect(existsSync(join(home, "state", "trust"))).toBe(false);
  });

  it("refuses a relative MINI_AGENT_HOME, which would put the state inside the workspace", async () => {
    const { server, workspace, options } = await setup([stream(turn({ text: ["no"] }))]);
    const run = await runBin(["task"], {
      ...options,
      env: { ...options.env, MINI_AGENT_HOME: "rel" },
    });
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: 'mini-agent: MINI_AGENT_HOME must be an absolute path, not "rel"\n',
    });
    expect(existsSync(join(workspace, "rel"))).toBe(false);
    expect(server.requests).toEqual([]);
  });

  it("refuses a workspace whose path is not UTF-8 with that reason, not as missing", async () => {
    const { workspace, home, options } = await setup([]);
    mkdirSync(Buffer.concat([Buffer.from(`${workspace}/caf`), Buffer.from([0xe9])]));
    const run = await new Promise<CliRun>((resolve) => {
      const child = spawn(
        "sh",
        ["-c", 'cd "$(printf "caf\\351")" && exec "$0" "$1" task', process.execPath, bin],
        {
          cwd: workspace,
          env: options.env,
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: the folder's path is not valid UTF-8: ${workspace}/caf\uFFFD (mini-agent needs a UTF-8 path: rename the folder)\n`,
    });
    expect(existsSync(join(home, "state"))).toBe(false);
  });

  it("lists every environment variable it reads in --help", async () => {
    const { options } = await setup([]);
    const help = await runBin(["--help"], { ...options, env: { PATH: process.env.PATH } });
    expect(help.code).toBe(0);
    const variables = [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_BASE_URL",
      "OPENAI_API_KEY",
      "OPENAI_BASE_URL",
      "MINI_AGENT_MODEL",
      "MINI_AGENT_HOME",
      "MINI_AGENT_SEARCH",
    ];
    const environment = help.stdout.slice(help.stdout.indexOf("\nEnvironment:"));
    expect(variables.filter((name) => !environment.includes(`  ${name} `))).toEqual([]);
  });
});

describe("errors during a turn", () => {
  it("prints a mid-stream provider error on its own line, in the same form as the others", async () => {
    // A type that does not pass with time: the round is not run again (see retry.test.ts).
    const { options } = await setup([
      stream(turn({ text: ["Partial answer"] }), {
        errorAfter: 4,
        errorType: "invalid_request_error",
      }),
    ]);
    const run = await runBin(["task"], options);
    expect(run).toEqual({
      code: 1,
      stdout: "Partial answer\n",
      stderr:
        "mini-agent: provider error invalid_request_error: error (the provider rejected the request)\n",
    });
  });

  it("never prints the credentials of the base URL, on stderr or in the JSON result", async () => {
    const { options } = await setup([]);
    const secrets = ["hunter2-pass", "sk-query-secret-99", "alice"];
    const runs = [
      await runBin(
        ["--output-format", "json", "--base-url", "http://alice:hunter2-pass@127.0.0.1:1/", "x"],
        options,
      ),
      await runBin(["--output-format", "json", "x"], {
        ...options,
        env: { ...options.env, ANTHROPIC_BASE_URL: "http://127.0.0.1:1/?key=sk-query-secret-99" },
      }),
      await runBin(["--base-url", "http://127.0.0.1:1/?api_key=sk-query-secret-99", "x"], options),
    ];
    expect(runs.map((run) => run.code)).toEqual([1, 1, 1]);
    for (const run of runs) {
      expect(secrets.filter((secret) => `${run.stdout}${run.stderr}`.includes(secret))).toEqual([]);
    }
    expect(JSON.parse(runs[1]?.stdout ?? "")).toMatchObject({
      status: "error",
      error:
        "could not reach http://127.0.0.1:1/?key=*** (Connection error): check --base-url and the network",
    });
    expect(runs[2]?.stderr).toBe(
      "mini-agent: could not reach http://127.0.0.1:1/?api_key=*** (Connection error): check --base-url and the network\n",
    );
  });
});
