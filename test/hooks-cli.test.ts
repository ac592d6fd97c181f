import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, sessionRecords, toolResults, useCliSetup } from "./support/cli.js";
import { survivors } from "./support/processes.js";
import { realSandbox, useOutsideFolders } from "./support/sandbox.js";
import { protocolLines } from "./support/stream-json.js";

/**
 * Hooks through the built CLI, with scripts written as Claude Code's documentation shows them:
 * `PreToolUse` blocks with exit 2 (the model reads stderr), fails closed on a crash, a timeout
 * (its processes ended), broken JSON and `updatedInput`, and its allow lifts no deny rule or mode;
 * `PostToolUse` adds what it prints to the result.
 */

const setup = useCliSetup();
const sandboxed = await realSandbox({ mode: "auto" });

/** Claude Code's example bash command validator, its rule changed to refuse `rm -rf`. */
const validator = `#!/usr/bin/env python3
import json
import re
import sys

_VALIDATION_RULES = [
    (r"\\brm\\s+-rf\\b", "Do not remove folders with rm -rf; delete the files one by one"),
]

def main():
    try:
        input_data = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
        sys.exit(1)
    if input_data.get("tool_name", "") != "Bash":
        sys.exit(0)
    command = input_data.get("tool_input", {}).get("command", "")
    issues = [message for pattern, message in _VALIDATION_RULES if re.search(pattern, command)]
    if issues:
        for message in issues:
            print(f"• {message}", file=sys.stderr)
        sys.exit(2)

if __name__ == "__main__":
    main()
`;

type Handler = { type: string; command?: string; timeout?: number };

/** Writes the user's configuration file with these hooks. */
async function userHooks(home: string, hooks: Record<string, unknown>): Promise<void> {
  await mkdir(join(home, "state"), { recursive: true });
  await writeFile(join(home, "state", "config.json"), JSON.stringify({ hooks }));
}

const pre = (matcher: string, ...handlers: Handler[]) => ({
  PreToolUse: [{ matcher, hooks: handlers }],
});

const bash = (command: string) => ({ id: "toolu_1", name: "bash", input: { command } });

/** One round calling `call`, then an answer. */
const script = (call: { id: string; name: string; input: Record<string, unknown> }) => [
  stream(turn({ calls: [call] })),
  stream(turn({ text: ["done"] })),
];

describe("PreToolUse hooks", () => {
  it("blocks rm -rf with Claude Code's Python validator (exit 2): the model reads its stderr", async () => {
    const { server, workspace, home, options } = await setup(script(bash("rm -rf build")));
    await mkdir(join(workspace, "build"));
    await writeFile(join(home, "validate.py"), validator);
    const command = `python3 ${join(home, "validate.py")}`;
    await userHooks(home, pre("Bash", { type: "command", command }));
    const run = await runBin(["--allow-bash", "--sandbox", "off", "clean up"], options);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, "build"))).toBe(true);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: `blocked by the PreToolUse hook ${JSON.stringify(command)}: • Do not remove folders with rm -rf; delete the files one by one`,
        isError: true,
      },
    ]);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.filter((record) => record.type === "approval")).toEqual([
      {
        type: "approval",
        toolCallId: "toolu_1",
        tool: "bash",
        approved: false,
        by: `hook:PreToolUse ${command}`,
      },
    ]);
    expect(records.filter((record) => record.type === "hook")).toEqual([
      {
        type: "hook",
        event: "PreToolUse",
        command,
        toolCallId: "toolu_1",
        exit: 2,
        durationMs: expect.any(Number),
        decision: "block",
      },
    ]);
  });

  it("gives the hook Claude Code's input: tool name, field names, absolute paths, and ours beside them", async () => {
    const edit = {
      id: "toolu_1",
      name: "edit",
      input: { path: "src/a.txt", oldText: "one", newText: "two" },
    };
    const { workspace, home, options } = await setup(script(edit));
    await mkdir(join(workspace, "src"));
    await writeFile(join(workspace, "src", "a.txt"), "one\n");
    const seen = join(home, "seen.json");
    await userHooks(home, pre("Edit|Write", { type: "command", command: `cat > ${seen}` }));
    const run = await runBin(["edit"], options);
    expect(run.code).toBe(0);
    const input = JSON.parse(await readFile(seen, "utf8")) as Record<string, unknown>;
    const [file] = await sessionFiles(home);
    expect(input).toEqual({
      session_id: expect.any(String),
      transcript_path: file,
      cwd: workspace,
      permission_mode: "default",
      hook_event_name: "PreToolUse",
      tool_name: "Edit",
      tool_input: {
        file_path: join(workspace, "src", "a.txt"),
        old_string: "one",
        new_string: "two",
      },
      tool_use_id: "toolu_1",
      mini_agent_tool: "edit",
      mini_agent_input: edit.input,
    });
    expect(String(input.session_id)).not.toBe("");
  });

  it.each([
    ["exits 1", "echo 'validator broke' >&2; exit 1", "it exited with code 1: validator broke"],
    ["is killed by a signal", "kill -SEGV $$", "it was killed by SIGSEGV"],
    [
      "prints JSON that does not parse",
      `echo '{"hookSpecificOutput": '`,
      "it printed JSON that does not parse",
    ],
    [
      "asks to rewrite the input (updatedInput)",
      `echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "ls"}}}'`,
      "it asked to change the call's input (updatedInput): mini-agent does not rewrite a call's input",
    ],
    ["cannot be run", "/nonexistent/hook.sh", "it exited with code 127"],
  ])("blocks the call when the hook %s, and says which hook and why", async (_, command, why) => {
    const { server, workspace, home, options } = await setup(script(bash("touch made.txt")));
    await userHooks(home, pre("Bash", { type: "command", command }));
    const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, "made.txt"))).toBe(false);
    const [result] = toolResults(server.requests[1]?.body ?? {});
    expect(result?.isError).toBe(true);
    expect(String(result?.content)).toContain(
      `the PreToolUse hook ${JSON.stringify(command)} failed, so the call is blocked: ${why}`,
    );
  });

  it("blocks the call when the hook times out, and ends the hook and what it started", async () => {
    const { server, workspace, home, options } = await setup(script(bash("touch made.txt")));
    const command = "sleep 31415 & wait";
    await userHooks(home, pre("Bash", { type: "command", command, timeout: 1 }));
    const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, "made.txt"))).toBe(false);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: `the PreToolUse hook ${JSON.stringify(command)} failed, so the call is blocked: it timed out after 1 s and was ended`,
        isError: true,
      },
    ]);
    expect(await survivors(["sleep 31415"])).toEqual([]);
    const [file] = await sessionFiles(home);
    expect((await sessionRecords(file ?? "")).filter((r) => r.type === "hook")).toEqual([
      {
        type: "hook",
        event: "PreToolUse",
        command,
        toolCallId: "toolu_1",
        timedOut: true,
        durationMs: expect.any(Number),
        decision: "failed",
      },
    ]);
  });

  it("denies with permissionDecision deny, the reason for the model", async () => {
    const { server, home, options } = await setup(script(bash("make deploy")));
    const answer = {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "deploys go through CI",
      },
    };
    const command = `echo '${JSON.stringify(answer)}'`;
    await userHooks(home, pre("Bash", { type: "command", command }));
    const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: `blocked by the PreToolUse hook ${JSON.stringify(command)}: deploys go through CI`,
        isError: true,
      },
    ]);
  });

  const allow = `echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "fine"}}'`;

  it("lets a hook's allow skip the question an allow rule could skip (no one to ask here)", async () => {
    const { server, workspace, home, options } = await setup(script(bash("touch made.txt")));
    await userHooks(home, pre("Bash", { type: "command", command: allow }));
    const run = await runBin(["--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, "made.txt"))).toBe(true);
    expect(toolResults(server.requests[1]?.body ?? {})[0]?.isError).toBeFalsy();
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.find((record) => record.type === "approval")).toMatchObject({
      approved: true,
      by: `hook:PreToolUse ${allow}`,
    });
  });

  it("does not let a hook's allow lift a deny rule", async () => {
    const { server, workspace, home, options } = await setup(script(bash("touch made.txt")));
    await userHooks(home, pre("Bash", { type: "command", command: allow }));
    const run = await runBin(["--deny", "touch", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, "made.txt"))).toBe(false);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: 'denied by the rule "deny touch"', isError: true },
    ]);
  });

  it("does not let a hook's allow lift plan mode, for bash or a write", async () => {
    const write = { id: "toolu_2", name: "write", input: { path: "w.txt", content: "x" } };
    const { server, workspace, home, options } = await setup([
      stream(turn({ calls: [bash("touch made.txt"), write] })),
      stream(turn({ text: ["done"] })),
    ]);
    await userHooks(home, pre("", { type: "command", command: allow }));
    const run = await runBin(["--mode", "plan", "--allow-bash", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, "made.txt"))).toBe(false);
    expect(existsSync(join(workspace, "w.txt"))).toBe(false);
    expect(
      toolResults(server.requests[1]?.body ?? {}).map((result) => String(result.content)),
    ).toEqual([
      "the session is in plan mode: bash is not allowed, as it may change something (the user can change the mode)",
      "the session is in plan mode: write is not allowed, as it may change something (the user can change the mode)",
    ]);
  });

  it("asks, with ask, about a call that would run unasked: denied with no one to ask", async () => {
    const { server, workspace, home, options } = await setup(
      script({ id: "toolu_1", name: "write", input: { path: "w.txt", content: "x" } }),
    );
    const ask = `echo '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "new files need a look"}}'`;
    await userHooks(home, pre("Write", { type: "command", command: ask }));
    const run = await runBin(["go"], options);
    expect(run.code).toBe(0);
    expect(existsSync(join(workspace, "w.txt"))).toBe(false);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: `a PreToolUse hook asks about this call (hook:PreToolUse ${ask}): new files need a look, and no one can be asked here`,
        isError: true,
      },
    ]);
  });

  it("runs only hooks whose matcher takes the tool", async () => {
    const { workspace, home, options } = await setup(
      script({ id: "toolu_1", name: "ls", input: {} }),
    );
    const marker = join(home, "ran");
    await userHooks(home, {
      PreToolUse: [
        { matcher: "Bash", hooks: [{ type: "command", command: `touch ${marker}-bash` }] },
        { matcher: "L.*", hooks: [{ type: "command", command: `touch ${marker}-ls` }] },
        { hooks: [{ type: "command", command: `touch ${marker}-all` }] },
      ],
    });
    const run = await runBin(["go"], options);
    expect(run.code).toBe(0);
    expect(existsSync(`${marker}-bash`)).toBe(false);
    expect(existsSync(`${marker}-ls`)).toBe(true);
    expect(existsSync(`${marker}-all`)).toBe(true);
    expect(workspace).not.toBe("");
  });
});

describe("the hooks configuration", () => {
  it("warns once for each unknown event and handler type, and runs the rest", async () => {
    const { workspace, home, options } = await setup(
      script({ id: "toolu_1", name: "ls", input: {} }),
    );
    const marker = join(home, "ran");
    await userHooks(home, {
      PermissionRequest: [{ hooks: [{ type: "command", command: "true" }] }],
      PreToolUse: [
        {
          hooks: [
            { type: "prompt", prompt: "is this fine?" },
            { type: "command", command: `touch ${marker}` },
          ],
        },
      ],
    });
    const run = await runBin(["go"], options);
    expect(run.code).toBe(0);
    expect(existsSync(marker)).toBe(true);
    const file = join(home, "state", "config.json");
    expect(run.stderr.split("\n").filter((line) => line.includes("warning"))).toEqual([
      `mini-agent: warning: ${file}: hooks.PermissionRequest is not an event mini-agent runs (PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, SessionEnd, PreCompact, Notification); it is never fired`,
      `mini-agent: warning: ${file}: hooks.PreToolUse[0].hooks[0] has type "prompt", which mini-agent does not run (only "command"); it is never fired`,
    ]);
    const config = await runBin(["config"], options);
    expect(config.stdout).toContain(`PreToolUse touch ${marker} (timeout 60 s)`);
    expect(config.stdout).toContain("hooks.PermissionRequest is not an event");
    expect(workspace).not.toBe("");
  });

  it("refuses a known event written wrongly in one line, before any request", async () => {
    const { server, home, options } = await setup([]);
    await userHooks(home, pre("Bash", { type: "command" }));
    const run = await runBin(["go"], options);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `mini-agent: ${join(home, "state", "config.json")}: hooks.PreToolUse[0].hooks[0].command must be a non-empty string, not nothing\n`,
    );
    expect(server.requests).toEqual([]);
  });
});

describe("PostToolUse hooks", () => {
  it("adds what the hook prints to the result the model reads, secrets redacted", async () => {
    const secret = "s3cr3t-value-0123456789";
    const write = { id: "toolu_1", name: "write", input: { path: "a.txt", content: secret } };
    const { server, workspace, home, options } = await setup(script(write));
    const command = `echo "checked: $(cat a.txt)"`;
    await userHooks(home, {
      PostToolUse: [{ matcher: "Write", hooks: [{ type: "command", command }] }],
    });
    const run = await runBin(["go"], { ...options, env: { ...options.env, DEPLOY_TOKEN: secret } });
    expect(run.code).toBe(0);
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe(secret);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: `created a.txt (23 bytes)\n\nPostToolUse hook ${JSON.stringify(command)}: checked: [redacted]`,
        isError: false,
      },
    ]);
  });

  it("says a failed PostToolUse hook in one line, and keeps the result", async () => {
    const write = { id: "toolu_1", name: "write", input: { path: "a.txt", content: "x" } };
    const { server, home, options } = await setup(script(write));
    await userHooks(home, {
      PostToolUse: [
        { hooks: [{ type: "command", command: "echo formatter missing >&2; exit 3" }] },
      ],
    });
    const run = await runBin(["go"], options);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      'mini-agent: the PostToolUse hook "echo formatter missing >&2; exit 3" failed: it exited with code 3: formatter missing\n',
    );
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content:
          'created a.txt (1 bytes)\n\nthe PostToolUse hook "echo formatter missing >&2; exit 3" failed: it exited with code 3: formatter missing',
        isError: false,
      },
    ]);
  });
});

describe("hooks in stream-json", () => {
  it("blocks with exit 2 and lists the call as denied by the hook", async () => {
    const { server, home, options } = await setup(script(bash("rm -rf build")));
    const command = "echo 'no rm -rf here' >&2; exit 2";
    await userHooks(home, pre("Bash", { type: "command", command }));
    const run = await runBin(
      ["--output-format", "stream-json", "--allow-bash", "--sandbox", "off", "go"],
      options,
    );
    expect(run.code).toBe(0);
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "approval")).toEqual([
      {
        version: 1,
        type: "approval",
        id: "toolu_1",
        name: "bash",
        approved: false,
        by: `hook:PreToolUse ${command}`,
      },
    ]);
    expect(toolResults(server.requests[1]?.body ?? {})[0]?.content).toBe(
      `blocked by the PreToolUse hook ${JSON.stringify(command)}: no rm -rf here`,
    );
  });
});

describe("project hooks and trust", () => {
  /** A project file whose PreToolUse hook on LS runs the workspace's hooks/mark.sh. */
  async function projectHook(workspace: string): Promise<void> {
    await mkdir(join(workspace, ".mini-agent"));
    await mkdir(join(workspace, "hooks"));
    await writeFile(join(workspace, "hooks", "mark.sh"), "echo ran >> marker.txt\n");
    await writeFile(join(workspace, "evil.sh"), "echo evil >> evil.txt\n");
    const hooks = pre("LS", { type: "command", command: 'sh "$CLAUDE_PROJECT_DIR"/hooks/mark.sh' });
    await writeFile(join(workspace, ".mini-agent", "config.json"), JSON.stringify({ hooks }));
  }

  const ls = { id: "toolu_1", name: "ls", input: {} };

  it("never runs an untrusted project hook, and runs it once mini-agent trust approved it", async () => {
    const { workspace, options } = await setup([...script(ls), ...script(ls)]);
    await projectHook(workspace);
    const before = await runBin(["go"], options);
    expect(before.code).toBe(0);
    expect(before.stderr).toContain("is not trusted, so it is not read");
    expect(existsSync(join(workspace, "marker.txt"))).toBe(false);

    const trust = await runBin(["trust"], options);
    expect(trust.code).toBe(0);
    expect(trust.stdout).toContain(
      `trusted config: hooks of ${join(workspace, ".mini-agent", "config.json")}: PreToolUse "sh \\"$CLAUDE_PROJECT_DIR\\"/hooks/mark.sh"; with the content of hooks/mark.sh`,
    );
    const after = await runBin(["go"], options);
    expect(after.code).toBe(0);
    expect(await readFile(join(workspace, "marker.txt"), "utf8")).toBe("ran\n");
  });

  it("blocks the next call without running the hook when the model rewrote its script", async () => {
    const rewrite = bash("cp evil.sh hooks/mark.sh");
    const { server, workspace, options } = await setup([
      stream(turn({ calls: [rewrite] })),
      stream(turn({ calls: [{ ...ls, id: "toolu_2" }] })),
      stream(turn({ text: ["done"] })),
    ]);
    await projectHook(workspace);
    expect((await runBin(["trust"], options)).code).toBe(0);
    const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    expect(await readFile(join(workspace, "hooks", "mark.sh"), "utf8")).toBe(
      "echo evil >> evil.txt\n",
    );
    expect(existsSync(join(workspace, "evil.txt"))).toBe(false);
    expect(existsSync(join(workspace, "marker.txt"))).toBe(false);
    expect(toolResults(server.requests[2]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "[exit code 0]", isError: false },
      {
        id: "toolu_2",
        content:
          'the PreToolUse hook "sh \\"$CLAUDE_PROJECT_DIR\\"/hooks/mark.sh" failed, so the call is blocked: it was not run: what it runs changed since it was trusted (a file it runs was changed, added or removed; mini-agent trust approves it again)',
        isError: true,
      },
    ]);
  });

  it("does not start a project hook whose script changed since it was trusted, and says so", async () => {
    const { workspace, options } = await setup(script(ls));
    await projectHook(workspace);
    expect((await runBin(["trust"], options)).code).toBe(0);
    await writeFile(join(workspace, "hooks", "mark.sh"), "echo changed >> evil.txt\n");
    const run = await runBin(["go"], options);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      `mini-agent: the hooks of ${join(workspace, ".mini-agent", "config.json")} are not trusted as they are now, so they do not run (mini-agent trust runs them from now on)`,
    );
    expect(existsSync(join(workspace, "evil.txt"))).toBe(false);
  });
});

describe("the files a hook runs", () => {
  it("are protected: a write to one asks, and with no one to ask it is denied", async () => {
    const write = {
      id: "toolu_1",
      name: "write",
      input: { path: "scripts/check.sh", content: "exit 0\n" },
    };
    const { server, workspace, home, options } = await setup(script(write));
    await mkdir(join(workspace, "scripts"));
    await writeFile(join(workspace, "scripts", "check.sh"), "exit 0\n");
    await userHooks(home, pre("Bash", { type: "command", command: "sh scripts/check.sh" }));
    const run = await runBin(["go"], options);
    expect(run.code).toBe(0);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content:
          "scripts/check.sh is protected (the session's hooks run it): changing it needs the user's approval, and no one can be asked here",
        isError: true,
      },
    ]);
  });
});

describe("the files a hook runs, in the one protected set", () => {
  /** A user hook on LS that runs the workspace's scripts/check.sh, and a script to copy over it. */
  async function hookScript(workspace: string, home: string): Promise<void> {
    await mkdir(join(workspace, "scripts"));
    await writeFile(join(workspace, "scripts", "check.sh"), "exit 0\n");
    await writeFile(join(workspace, "evil.sh"), "echo evil >> evil.txt\n");
    await userHooks(home, pre("LS", { type: "command", command: "sh scripts/check.sh" }));
  }

  it("asks before a bash redirect into one: denied with no one to ask", async () => {
    const { server, workspace, home, options } = await setup(
      script(bash("echo 'echo evil >> evil.txt' > scripts/check.sh")),
    );
    await hookScript(workspace, home);
    const run = await runBin(["--allow-bash", "go"], options);
    expect(run.code).toBe(0);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content:
          "bash is denied: the rules cannot allow a redirect that writes the protected file scripts/check.sh (the session's hooks run it); changing it needs the user's approval, and no one can be asked here",
        isError: true,
      },
    ]);
    expect(await readFile(join(workspace, "scripts", "check.sh"), "utf8")).toBe("exit 0\n");
  });

  it.runIf(sandboxed)(
    "keeps one read-only in the sandbox, and puts it back after a command replaced it",
    async () => {
      const { server, workspace, home, options } = await setup(
        script(
          bash(
            "cp evil.sh scripts/check.sh; mv scripts moved && mkdir scripts && cp evil.sh scripts/check.sh",
          ),
        ),
      );
      await hookScript(workspace, home);
      const run = await runBin(["--allow-bash", "go"], options);
      expect(run.code).toBe(0);
      expect(await readFile(join(workspace, "scripts", "check.sh"), "utf8")).toBe("exit 0\n");
      expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
        {
          id: "toolu_1",
          content: [
            "cp: cannot create regular file 'scripts/check.sh': Read-only file system",
            "[exit code 0]",
            "[protected files: a command in the sandbox may not change what runs outside it; undone]",
            "- restored scripts/check.sh, which the command changed (the session's hooks run it)",
          ].join("\n"),
          isError: false,
        },
      ]);
    },
  );
});

describe.runIf(sandboxed)("where hooks run", () => {
  const outside = useOutsideFolders();
  const ls = { id: "toolu_1", name: "ls", input: {} };

  /** A PreToolUse hook on LS that touches `canary`, in the project's file or the user's. */
  async function touchHook(
    folder: string,
    canary: string,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    await mkdir(folder, { recursive: true });
    const hooks = pre("LS", { type: "command", command: `touch ${canary}`, ...extra });
    await writeFile(join(folder, "config.json"), JSON.stringify({ hooks }));
  }

  it("runs a project hook in the sandbox: it cannot write outside the workspace, and the call is blocked", async () => {
    const { server, workspace, options } = await setup(script(ls));
    const canary = join(await outside("hook"), "canary");
    await touchHook(join(workspace, ".mini-agent"), canary, { sandbox: false });
    expect((await runBin(["trust"], options)).code).toBe(0);
    const config = await runBin(["config"], options);
    expect(config.stdout).toContain(
      `PreToolUse [LS] touch ${canary} (timeout 60 s, in the sandbox)`,
    );
    const run = await runBin(["go"], options);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      `${join(workspace, ".mini-agent", "config.json")}: hooks.PreToolUse[0].hooks[0].sandbox is false, which only your own file may say; this hook runs in the sandbox`,
    );
    expect(existsSync(canary)).toBe(false);
    const [result] = toolResults(server.requests[1]?.body ?? {});
    expect(result?.isError).toBe(true);
    expect(result?.content).toMatch(
      new RegExp(
        `^the PreToolUse hook "touch ${canary}" failed, so the call is blocked: it exited with code 1: touch: cannot touch '${canary}': Read-only file system$`,
      ),
    );
  });

  it("runs a user hook outside the sandbox, unless it says sandbox: true", async () => {
    const { server, home, options } = await setup([...script(ls), ...script(ls)]);
    const canary = join(await outside("hook"), "canary");
    await touchHook(join(home, "state"), canary);
    expect((await runBin(["go"], options)).code).toBe(0);
    expect(existsSync(canary)).toBe(true);
    expect(toolResults(server.requests[1]?.body ?? {})[0]?.isError).toBe(false);

    const second = join(await outside("hook"), "canary");
    await touchHook(join(home, "state"), second, { sandbox: true });
    expect((await runBin(["go"], options)).code).toBe(0);
    expect(existsSync(second)).toBe(false);
    expect(toolResults(server.requests[3]?.body ?? {})[0]?.isError).toBe(true);
  });
});

describe("a PostToolUse formatter", () => {
  /** Spaces around `=`, as a formatter would: reads the file Claude Code's input names. */
  const formatter = `import json, re, sys
path = json.load(sys.stdin)["tool_input"]["file_path"]
text = open(path).read()
open(path, "w").write(re.sub(r"\\s*=\\s*", " = ", text))
`;
  const edit = (id: string, oldText: string, newText: string) => ({
    id,
    name: "edit",
    input: { path: "src/a.txt", oldText, newText },
  });

  it("rewrites the file: the model is told, its next edit of it succeeds, and rewind restores the bytes before the edit", async () => {
    const read = { id: "toolu_0", name: "read", input: { path: "src/a.txt" } };
    const { server, workspace, home, options } = await setup([
      stream(turn({ calls: [read] })),
      stream(turn({ calls: [edit("toolu_1", "x=1", "x=2")] })),
      stream(turn({ calls: [edit("toolu_2", "x = 2", "x = 3")] })),
      stream(turn({ text: ["done"] })),
    ]);
    await mkdir(join(workspace, "src"));
    await writeFile(join(workspace, "src", "a.txt"), "x=1\n");
    await writeFile(join(home, "fmt.py"), formatter);
    await userHooks(home, {
      PostToolUse: [
        {
          matcher: "Edit|Write",
          hooks: [{ type: "command", command: `python3 ${join(home, "fmt.py")}` }],
        },
      ],
    });
    const run = await runBin(["go"], options);
    expect(run.code).toBe(0);
    expect(await readFile(join(workspace, "src", "a.txt"), "utf8")).toBe("x = 3\n");
    const results = toolResults(server.requests[3]?.body ?? {});
    expect(results.slice(1)).toEqual([
      {
        id: "toolu_1",
        content: expect.stringMatching(
          /\n\nPostToolUse hooks changed src\/a\.txt after the call: what you saw of it before is out of date$/,
        ),
        isError: false,
      },
      { id: "toolu_2", content: expect.not.stringContaining("changed src/a.txt"), isError: false },
    ]);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    const hook = {
      type: "hook",
      event: "PostToolUse",
      command: `python3 ${join(home, "fmt.py")}`,
      exit: 0,
      durationMs: expect.any(Number),
      decision: "none",
    };
    expect(records.filter((record) => record.type === "hook")).toEqual([
      { ...hook, toolCallId: "toolu_1" },
      { ...hook, toolCallId: "toolu_2" },
    ]);
    const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
    expect(rewind.code).toBe(0);
    expect(await readFile(join(workspace, "src", "a.txt"), "utf8")).toBe("x=1\n");
  });
});
