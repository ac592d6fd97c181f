import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rulesFile } from "../src/app/rules.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, sessionRecords, toolResults, useCliSetup } from "./support/cli.js";
import { converse, hasScript } from "./support/pty.js";

/** The rules through the real bin: flags, `mini-agent rules`, and "always" on a terminal. */

const setup = useCliSetup();
const hasBwrap = existsSync("/usr/bin/bwrap");

const approvals = async (home: string) => {
  const [file] = await sessionFiles(home);
  return (await sessionRecords(file ?? "")).filter((record) => record.type === "approval");
};

describe("mini-agent rules explain", () => {
  it("prints the decision and the rule or reason behind it", async () => {
    const { options } = await setup([]);
    const flags = ["--sandbox", "off", "--allow", "npm test", "--deny", "git push"];
    const explain = (command: string, extra: string[] = []) =>
      runBin(["rules", "explain", ...flags, ...extra, command], options);
    const without =
      "(code mode; bash runs without the sandbox: the read-only set applies to reads inside the workspace";
    expect(await explain("npm test -- --watch")).toEqual({
      code: 0,
      stdout: `allow: rule:allow npm test\nwhy: allowed by the rule allow npm test (from --allow)\n${without})\n`,
      stderr: "",
    });
    expect(await explain("timeout 9 sudo /usr/bin/git -c a=b push")).toEqual({
      code: 0,
      stdout: `deny: rule:deny git push\nwhy: denied by the rule "deny git push" (from --deny)\n${without})\n`,
      stderr: "",
    });
    expect(await explain("npm test && cargo check")).toEqual({
      code: 0,
      stdout: `ask: no-rule\nwhy: no rule allows cargo check\n"always" would save: allow cargo check (exactly)\n${without}; with no terminal, ask means deny)\n`,
      stderr: "",
    });
    expect(await explain("npm test > ~/.zshrc")).toEqual({
      code: 0,
      stdout: `ask: rules\nwhy: the rules cannot allow a redirect that writes outside the workspace (~/.zshrc)\n"always" would save no rule: the rules cannot allow a redirect that writes outside the workspace (~/.zshrc)\n${without}; with no terminal, ask means deny)\n`,
      stderr: "",
    });
    expect(await explain("make", ["--allow-bash"])).toEqual({
      code: 0,
      stdout: `allow: allow-bash-flag\nwhy: --allow-bash allows every command no deny rule matches\n${without})\n`,
      stderr: "",
    });
  });

  it("adds a rule from the command line, and lists it", async () => {
    const { options } = await setup([]);
    expect(await runBin(["rules", "add", "allow", "npm test"], options)).toEqual({
      code: 0,
      stdout: "added: allow npm test\n",
      stderr: "",
    });
    expect((await runBin(["rules", "list"], options)).stdout).toBe("1  allow npm test\n");
    expect((await runBin(["rules", "add", "maybe", "npm test"], options)).code).toBe(2);
  });

  it.skipIf(!hasBwrap)("applies the read-only set when bash runs in the sandbox", async () => {
    const { options } = await setup([]);
    expect(await runBin(["rules", "explain", "git log | head -5"], options)).toEqual({
      code: 0,
      stdout:
        "allow: read-only set: git log, head\nwhy: allowed by the read-only set (git log, head)\n" +
        'outside the sandbox (outside_sandbox: true): ask, every time (with no one to ask: deny); "always" would save: allow-unsandboxed git log (exactly); allow-unsandboxed head -5 (exactly)\n' +
        "(code mode; bash runs in the sandbox, the boundary: what no deny rule matches runs)\n",
      stderr: "",
    });
  });

  it("refuses an empty rule and an unknown action with exit 2", async () => {
    const { options } = await setup([]);
    expect(await runBin(["rules", "explain", "--deny", "", "ls"], options)).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'mini-agent: --deny: a rule is empty: name the command words it matches, e.g. "npm test"\n',
    });
    expect(await runBin(["rules", "drop", "1"], options)).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'mini-agent: usage: mini-agent rules [list | add allow|deny|allow-unsandboxed "WORDS" | remove N | explain "COMMAND" | explain --stdin]\n',
    });
  });
});

describe("rules in a run", () => {
  it("denies by a --deny rule under --allow-bash, tells the model which rule, records it", async () => {
    const { server, home, options } = await setup([
      stream(
        turn({
          calls: [
            { id: "toolu_1", name: "bash", input: { command: "env GIT_TRACE=1 git push origin" } },
            { id: "toolu_2", name: "bash", input: { command: "touch made" } },
          ],
        }),
      ),
      stream(turn({ text: ["Done."] })),
    ]);
    const run = await runBin(
      ["--allow-bash", "--sandbox", "off", "--deny", "git push", "task"],
      options,
    );
    expect(run.code).toBe(0);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: 'denied by the rule "deny git push"', isError: true },
      { id: "toolu_2", content: "[exit code 0]", isError: false },
    ]);
    expect(await approvals(home)).toEqual([
      {
        type: "approval",
        toolCallId: "toolu_1",
        tool: "bash",
        approved: false,
        by: "rule:deny git push",
      },
      {
        type: "approval",
        toolCallId: "toolu_2",
        tool: "bash",
        approved: true,
        by: "allow-bash-flag",
      },
    ]);
  });

  it("allows by an --allow rule with no terminal, and denies what it does not cover", async () => {
    const { server, workspace, home, options } = await setup([
      stream(
        turn({
          calls: [
            { id: "toolu_1", name: "bash", input: { command: "touch made" } },
            { id: "toolu_2", name: "bash", input: { command: "touch made; touch other" } },
          ],
        }),
      ),
      stream(turn({ text: ["Done."] })),
    ]);
    const run = await runBin(["--sandbox", "off", "--allow", "touch made", "task"], options);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, "made"))).toBe(true);
    expect(existsSync(join(workspace, "other"))).toBe(false);
    expect(toolResults(server.requests[1]?.body ?? {})[1]).toEqual({
      id: "toolu_2",
      content:
        'bash is denied by default: run mini-agent with --allow "touch other" to let the agent run this command (--allow-bash allows every command)',
      isError: true,
    });
    expect((await approvals(home)).map((r) => `${r.toolCallId} ${r.approved} ${r.by}`)).toEqual([
      "toolu_1 true rule:allow touch made",
      "toolu_2 false no-terminal",
    ]);
  });

  it.skipIf(!hasBwrap)("runs a read-only command with no terminal in the sandbox", async () => {
    const { server, home, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "pwd | wc -l" } }] })),
      stream(turn({ text: ["Done."] })),
    ]);
    expect((await runBin(["task"], options)).code).toBe(0);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "1\n[exit code 0]", isError: false },
    ]);
    expect(await approvals(home)).toEqual([
      {
        type: "approval",
        toolCallId: "toolu_1",
        tool: "bash",
        approved: true,
        by: "read-only set: pwd, wc",
      },
    ]);
  });
});

describe.skipIf(!hasScript)("always on a terminal, and mini-agent rules", () => {
  it("saves the narrowest rule, says so, stops asking, and the rule can be listed and removed", async () => {
    const call = (id: string) => ({ id, name: "bash", input: { command: "touch a" } });
    const { workspace, home, options } = await setup([
      stream(turn({ calls: [call("toolu_1")] })),
      stream(turn({ calls: [call("toolu_2")] })),
      stream(turn({ text: ["Twice."] })),
    ]);
    const { code, screen } = await converse(
      options.env,
      workspace,
      [
        ["› ", "touch it twice\r"],
        ["[y/N/a] (a = always, saves allow touch a (exactly))? ", "a\r"],
        ["Twice.", ""],
        ["› ", "/exit\r"],
      ],
      ["--sandbox", "off"],
    );
    expect(code).toBe(0);
    expect(screen).toContain("Allow bash: touch a\r\n  (no rule allows touch a)\r\n");
    expect(screen).toContain(
      "mini-agent: saved rule: allow touch a (exactly) (mini-agent rules lists and removes rules)",
    );
    expect(screen.split("[y/N/a]").length).toBe(2);
    expect((await approvals(home)).map((r) => `${r.toolCallId} ${r.approved} ${r.by}`)).toEqual([
      "toolu_1 true user-always (saved: allow touch a (exactly))",
      "toolu_2 true rule:allow touch a (exactly)",
    ]);
    const file = rulesFile(options.env, workspace);
    expect(file.startsWith(join(home, "state", "workspaces"))).toBe(true);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      version: 2,
      rules: [{ effect: "allow", words: ["touch", "a"], exact: true }],
    });
    expect((await readdir(workspace)).sort()).toEqual(["a"]);
    expect(await runBin(["rules"], options)).toEqual({
      code: 0,
      stdout: "1  allow touch a (exactly)\n",
      stderr: "",
    });
    // Only a rule's number removes it: "0x1", "1.0" or "1e0" would read as 1 to Number.
    for (const loose of ["0x1", "1.0", "1e0", "abc", "", "01x"])
      expect(await runBin(["rules", "remove", loose], options)).toEqual({
        code: 2,
        stdout: "",
        stderr: `mini-agent: rules remove needs a rule's number, as mini-agent rules lists them, not ${JSON.stringify(loose)}\n`,
      });
    expect(await runBin(["rules", "remove", "1"], options)).toEqual({
      code: 0,
      stdout: "removed: allow touch a (exactly)\n",
      stderr: "",
    });
    expect(await runBin(["rules", "list"], options)).toEqual({
      code: 0,
      stdout: `no saved rules for this folder (${file})\n`,
      stderr: "",
    });
  });
});
