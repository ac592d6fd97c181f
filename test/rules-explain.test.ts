import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rulesFile } from "../src/app/rules.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, sessionRecords, useCliSetup } from "./support/cli.js";
import { realSandbox } from "./support/sandbox.js";

/**
 * `mini-agent rules explain` in any configuration a run can have, and `--stdin`, through the
 * built bin: what it answers is what a run decides and records, call for call.
 */

const setup = useCliSetup();
const sandboxed = await realSandbox();

interface Answer {
  command: string;
  decision: "allow" | "ask" | "deny";
  by: string;
  why: string;
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * Commands a model issues, each harmless if a configuration lets it run: reads, writes inside the
 * workspace, a redirect outside it, a push, program text, syntax the rules do not read.
 */
const sample = [
  "ls -la",
  "cat README.md | head -3",
  "git status",
  "grep -rn hello . | wc -l",
  "find . -name '*.md'",
  "sed -n 1,2p README.md",
  "echo hi > out.txt",
  "echo hi 2>/dev/null",
  "touch made",
  "touch made other",
  "rm -f out.txt",
  "git push origin main",
  "timeout 9 git push",
  "python3 -c 'print(1)'",
  "cat < ~/.ssh/id_rsa",
  "echo x > ~/outside.txt",
  "ls $(pwd)",
  "cd . && ls",
  "echo 'unclosed",
];

/** Configurations as flags (the rules file holds `allow touch made` in each). */
const configurations: [string, string[]][] = [
  ["code, no sandbox, rules", ["--sandbox", "off", "--allow", "ls", "--deny", "git push"]],
  ["code, --allow-bash with a deny rule", ["--sandbox", "off", "--allow-bash", "--deny", "git"]],
  ["ask mode, no sandbox", ["--mode", "ask", "--sandbox", "off", "--deny", "rm"]],
  ["plan mode, no sandbox", ["--mode", "plan", "--sandbox", "off"]],
  ...(sandboxed
    ? ([
        ["code, sandbox", ["--deny", "git push"]],
        ["ask mode, sandbox", ["--mode", "ask"]],
        ["plan mode, sandbox", ["--mode", "plan", "--deny", "cat"]],
      ] as [string, string[]][])
    : []),
];

describe("rules explain agrees with a run", () => {
  it.each(configurations)(
    "%s: --stdin, single calls and a real run decide each command alike",
    async (_name, flags) => {
      const calls = sample.map((command, i) => ({
        id: `toolu_${i}`,
        name: "bash",
        input: { command },
      }));
      const { workspace, home, options } = await setup([
        stream(turn({ calls })),
        stream(turn({ text: ["Done."] })),
      ]);
      await writeFile(join(workspace, "README.md"), "hello\n");
      expect((await runBin(["rules", "add", "allow", "touch made"], options)).code).toBe(0);

      const explained = await runBin(["rules", "explain", "--stdin", ...flags], {
        ...options,
        input: `${sample.join("\n")}\n`,
      });
      expect(explained.stderr).toBe("");
      const answers = lines(explained.stdout) as unknown as Answer[];
      expect(answers.map((answer) => answer.command)).toEqual(sample);

      // Single calls: every third command, a different third in each configuration.
      const offset = configurations.findIndex(([, given]) => given === flags) % 3;
      for (const [i, command] of sample.entries()) {
        if (i % 3 !== offset) continue;
        const single = await runBin(["rules", "explain", ...flags, command], options);
        const [first = "", second = ""] = single.stdout.split("\n");
        expect({ command, first, second }).toEqual({
          command,
          first: `${answers[i]?.decision}: ${answers[i]?.by}`,
          second: `why: ${answers[i]?.why}`,
        });
      }

      const run = await runBin([...flags, "task"], options);
      expect(run.code).toBe(0);
      const [file] = await sessionFiles(home);
      const recorded = (await sessionRecords(file ?? "")).filter((r) => r.type === "approval");
      const byCall = new Map(recorded.map((r) => [r.toolCallId, r]));
      const ran = calls.map((call) => {
        const record = byCall.get(call.id);
        return { command: call.input.command, approved: record?.approved, by: record?.by };
      });
      expect(ran).toEqual(
        answers.map(({ command, decision, by }) => ({
          command,
          approved: decision === "allow",
          by: decision === "ask" ? "no-terminal" : by,
        })),
      );
    },
    60_000,
  );
});

describe("rules explain names the part that decided", () => {
  it("names each rule's file: the rules file, a configuration file, a flag", async () => {
    const { workspace, home, options } = await setup([]);
    const config = join(home, "state", "config.json");
    await mkdir(join(home, "state"), { recursive: true });
    await writeFile(config, JSON.stringify({ rules: { allow: ["git diff"] } }));
    await runBin(["rules", "add", "deny", "npm publish"], options);
    const saved = rulesFile(options.env, workspace);
    const explain = (command: string) =>
      runBin(["rules", "explain", "--stdin", "--sandbox", "off", "--allow", "npm test"], {
        ...options,
        input: `${command}\n`,
      }).then((result) => lines(result.stdout)[0]);
    expect(await explain("npm test && git diff")).toEqual({
      command: "npm test && git diff",
      decision: "allow",
      by: "rule:allow npm test; rule:allow git diff",
      why: `allowed by the rule allow npm test (from --allow) and the rule allow git diff (from the configuration file ${config}; it covers git diff with the options known to be inert; "allow git diff ..." covers every option)`,
    });
    expect(await explain("npm publish --tag x")).toEqual({
      command: "npm publish --tag x",
      decision: "deny",
      by: "rule:deny npm publish",
      why: `denied by the rule "deny npm publish" (from the rules file ${saved})`,
    });
  });

  it("names the mode, the sandbox, and no rule, in words and on a terminal", async () => {
    const { options } = await setup([]);
    const explain = (args: string[]) => runBin(["rules", "explain", ...args], options);
    expect(await explain(["--mode", "plan", "--sandbox", "off", "touch x"])).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "deny: mode:plan",
        "why: the session is in plan mode: bash is not allowed, as it may change something (the user can change the mode)",
        "(plan mode; bash runs without the sandbox: the read-only set applies to reads inside the workspace)",
        "",
      ].join("\n"),
    });
    expect(await explain(["--sandbox", "off", "ls /"])).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "ask: sandbox:off",
        "why: no rule allows ls /; without the sandbox the read-only set allows only reads whose every path is inside the workspace (in the sandbox: allow, by read-only set: ls)",
        '"always" would save: allow ls / (exactly)',
        "(code mode; bash runs without the sandbox: the read-only set applies to reads inside the workspace; with no terminal, ask means deny)",
        "",
      ].join("\n"),
    });
    expect(await explain(["--mode", "ask", "--sandbox", "off", "--deny", "rm", "make"])).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "ask: mode:ask",
        "why: the session is in ask mode: no rule allows make",
        '"always" would save no rule: the session is in ask mode, which asks before every change',
        "(ask mode; bash runs without the sandbox: the read-only set applies to reads inside the workspace; with no terminal, ask means deny)",
        "",
      ].join("\n"),
    });
    expect((await explain(["--mode", "plan", "mcp__srv__tool"])).stdout).toBe(
      [
        "deny: mode:plan",
        "why: the session is in plan mode: mcp__srv__tool is not allowed, as it may change something (the user can change the mode)",
        "(plan mode; an MCP tool: tool rules decide it, deny wins)",
        "",
      ].join("\n"),
    );
  });
  it("says when bash runs nothing at all: --sandbox required and no sandbox here", async () => {
    const { options } = await setup([]);
    const noBwrap = { ...options, env: { ...options.env, PATH: "/nonexistent" } };
    const refused =
      "--sandbox required, but bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)";
    expect(
      await runBin(["rules", "explain", "--sandbox", "required", "--allow", "ls", "ls"], noBwrap),
    ).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "allow: rule:allow ls",
        `why: allowed by the rule allow ls (from --allow; it covers ls with the options known to be inert; "allow ls ..." covers every option); but bash runs nothing here: ${refused}`,
        `(code mode; bash is refused here: ${refused})`,
        "",
      ].join("\n"),
    });
    const input = '{"command": "ls", "sandbox": "off"}\n';
    const line = await runBin(
      ["rules", "explain", "--stdin", "--sandbox", "required", "--allow", "ls"],
      { ...noBwrap, input },
    );
    expect(lines(line.stdout)).toEqual([
      {
        command: "ls",
        decision: "allow",
        by: "rule:allow ls",
        why: 'allowed by the rule allow ls (from --allow; it covers ls with the options known to be inert; "allow ls ..." covers every option)',
      },
    ]);
  });
});

describe("rules explain --stdin", () => {
  it("answers each line in order, a bad one with an error line, and goes on", async () => {
    const { workspace, options } = await setup([]);
    const input = [
      "ls",
      '{"command": "git push -f", "rules": [{"deny": "git push"}], "sandbox": "off"}',
      '{"command": 5}',
      "{not json",
      "",
      '{"command": "ls", "mode": "yolo"}',
      '{"command": "ls", "sandbox": "on"}',
      '{"command": "ls", "rules": "allow ls"}',
      '{"command": "ls", "rules": [{"allow": "ls", "deny": "rm"}]}',
      '{"command": "ls", "rules": [{"allow": ""}]}',
      '{"command": "ls", "mode": "plan", "rules": [{"allow": "ls"}]}',
      '{"command": "ls", "cwd": "/no/such/folder"}',
      '{"command": "ls", "colour": "red"}',
      '{"command": "ls", "command": "rm -rf x"}',
      '{"command": "ls", "comm\\u0061nd": "rm -rf x"}',
      '{"command": "ls", "rules": [{"deny": "rm", "deny": "git"}]}',
      '{"command": "ls"}}',
      '{"command": "mcp__srv__tool", "sandbox": "off"}',
      `{"command": "npm test", "cwd": ${JSON.stringify(workspace)}, "mode": "code", "sandbox": "off", "rules": [{"allow": "npm test"}]}`,
      "{ ls; }",
      '{"command": "{ ls; }", "sandbox": "bwrap"}',
    ].join("\n");
    const result = await runBin(["rules", "explain", "--stdin"], { ...options, input });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const answers = lines(result.stdout);
    const readOnly = sandboxed
      ? { decision: "allow", by: "read-only set: ls" }
      : { decision: "ask", by: "sandbox:off" };
    expect(answers.map((answer) => ("error" in answer ? answer : { ...answer, why: "…" }))).toEqual(
      [
        { command: "ls", ...readOnly, why: "…" },
        { command: "git push -f", decision: "deny", by: "rule:deny git push", why: "…" },
        { line: 3, error: '"command" must be a command in a string, not 5' },
        { line: 4, error: expect.stringMatching(/^a line that starts with \{ is a JSON object/) },
        { line: 5, error: "the line is empty: give a command or a JSON object" },
        { line: 6, error: '"mode" must be "code", "ask" or "plan", not "yolo"' },
        { line: 7, error: '"sandbox" must be "bwrap" or "off", not "on"' },
        {
          line: 8,
          error: '"rules" must be a list such as [{"allow": "npm test"}, {"deny": "git push"}]',
        },
        { line: 9, error: '"rules"[0] must be {"allow": "WORDS"} or {"deny": "WORDS"}' },
        {
          line: 10,
          error: '"rules"[0]: a rule is empty: name the command words it matches, e.g. "npm test"',
        },
        {
          line: 11,
          error:
            '"rules"[0]: an allow rule has no use in plan mode: allow rules count only in code mode',
        },
        { line: 12, error: '"cwd": no such folder: /no/such/folder' },
        {
          line: 13,
          error: 'unknown field "colour" (command, cwd, mode, sandbox and rules are read)',
        },
        { line: 14, error: "the line gives command twice" },
        { line: 15, error: "the line gives command twice" },
        { line: 16, error: "the line gives rules[0].deny twice" },
        { line: 17, error: expect.stringMatching(/^a line that starts with/) },
        {
          line: 18,
          error: '"sandbox" has no use with an MCP tool: tool rules and the mode decide it',
        },
        { command: "npm test", decision: "allow", by: "rule:allow npm test", why: "…" },
        { line: 20, error: expect.stringMatching(/^a line that starts with/) },
        { command: "{ ls; }", decision: "allow", by: "read-only set: ls", why: "…" },
      ],
    );
  });

  it("answers a line as soon as it is decided, before the input ends", async () => {
    const { options } = await setup([]);
    let answered: (text: string) => void = () => {};
    const first = new Promise<string>((resolve) => {
      answered = resolve;
    });
    let out = "";
    const done = runBin(["rules", "explain", "--stdin", "--sandbox", "off"], {
      ...options,
      openStdin: true,
      started: (child) => {
        child.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes("\n")) answered(out);
        });
        child.stdin?.write("cat /etc/hostname\n");
        void first.then(() => child.stdin?.end("ls\n"));
      },
    });
    expect(JSON.parse(await first)).toMatchObject({
      command: "cat /etc/hostname",
      decision: "ask",
    });
    expect(lines((await done).stdout).map((answer) => answer.command)).toEqual([
      "cat /etc/hostname",
      "ls",
    ]);
  });

  it("is refused with a command, and elsewhere than rules explain", async () => {
    const { options } = await setup([]);
    expect(await runBin(["rules", "explain", "--stdin", "ls"], options)).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "mini-agent: rules explain --stdin reads the commands on stdin, one a line: give none as an argument\n",
    });
    expect((await runBin(["--stdin", "task"], options)).stderr).toBe(
      "mini-agent: --stdin is for mini-agent rules explain --stdin (one command a line)\n",
    );
  });
});
