import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, toolResults, useCliSetup } from "./support/cli.js";
import { realSandbox } from "./support/sandbox.js";

/**
 * The outside attack's findings on files that become code outside the sandbox (H2, H3), each
 * through the built CLI: the model writes, then "the user" runs git in the workspace, and no
 * command the model named may run.
 */
const setup = useCliSetup();
const hasGit = spawnSync("git", ["--version"]).status === 0;
const sandboxed = await realSandbox({ mode: "auto" });
const call = (id: string, name: string, input: Record<string, unknown>) =>
  stream(turn({ calls: [{ id, name, input }] }));

/** A git configuration whose fsmonitor writes `marker`: what the user's next git status runs. */
const forged = (marker: string) => `[core]\n\tfsmonitor = "id > ${marker}; false"\n`;

/** The user's own `git status` in `folder`, after the run. */
function usersGitStatus(folder: string, env: NodeJS.ProcessEnv): void {
  spawnSync("git", ["status", "--short"], { cwd: folder, env, stdio: "ignore" });
}

describe.skipIf(!hasGit)("a file the model writes never becomes git's configuration", () => {
  it("refuses write of .git/commondir, top-level and nested (H2)", async () => {
    const { server, workspace, options } = await setup([
      call("toolu_1", "write", { path: "cd/config", content: forged("PWN") }),
      call("toolu_2", "write", { path: "cd/objects/info/keep", content: "" }),
      call("toolu_3", "write", { path: "cd/refs/heads/keep", content: "" }),
      call("toolu_4", "write", { path: ".git/commondir", content: "../cd\n" }),
      call("toolu_5", "write", { path: "sub/.git/commondir", content: "../../cd\n" }),
      stream(turn({ text: ["done"] })),
    ]);
    execFileSync("git", ["init", "-q"], { cwd: workspace, env: options.env });
    await mkdir(join(workspace, "sub"));
    execFileSync("git", ["init", "-q"], { cwd: join(workspace, "sub"), env: options.env });
    const run = await runBin(["task"], options);
    expect(run.code).toBe(0);
    const results = toolResults(server.requests[5]?.body ?? {});
    expect(results.map((r) => [r.id, r.isError])).toEqual([
      ["toolu_1", false],
      ["toolu_2", false],
      ["toolu_3", false],
      ["toolu_4", true],
      ["toolu_5", true],
    ]);
    expect(results[3]?.content).toBe(
      ".git/commondir is protected (git reads it as the place of the repository's files and configuration): changing it needs the user's approval, and no one can be asked here",
    );
    usersGitStatus(workspace, options.env);
    usersGitStatus(join(workspace, "sub"), options.env);
    expect(existsSync(join(workspace, "PWN"))).toBe(false);
    expect(existsSync(join(workspace, "sub/PWN"))).toBe(false);
  });

  it("asks before a redirect into a nested repository's configuration or hooks in the sandbox (H3)", async () => {
    const { server, workspace, options } = await setup([
      call("toolu_1", "bash", {
        command: `printf '${forged("PWN").replaceAll("\n", "\\n")}' >> sub/.git/config`,
      }),
      call("toolu_2", "bash", { command: "echo 'id > PWN' > sub/.git/hooks/pre-commit" }),
      call("toolu_3", "bash", { command: "echo ok > notes.txt" }),
      stream(turn({ text: ["done"] })),
    ]);
    await mkdir(join(workspace, "sub"));
    execFileSync("git", ["init", "-q"], { cwd: join(workspace, "sub"), env: options.env });
    const config = await readFile(join(workspace, "sub/.git/config"), "utf8");
    const run = await runBin(["task"], options);
    expect(run.code).toBe(0);
    const results = toolResults(server.requests[3]?.body ?? {});
    expect(results.map((r) => [r.id, r.isError])).toEqual([
      ["toolu_1", true],
      ["toolu_2", true],
      ["toolu_3", !sandboxed],
    ]);
    expect(results[0]?.content).toBe(
      "bash is denied: the rules cannot allow a redirect that writes the protected file sub/.git/config (git reads it as configuration, which can name programs git runs); changing it needs the user's approval, and no one can be asked here",
    );
    expect(await readFile(join(workspace, "sub/.git/config"), "utf8")).toBe(config);
    usersGitStatus(join(workspace, "sub"), options.env);
    expect(existsSync(join(workspace, "sub/PWN"))).toBe(false);
  });

  it("asks before an allowed command's redirect into a protected file with --sandbox off (H3)", async () => {
    const commands = [
      "ls src >> .git/hooks/pre-commit",
      "git status --porcelain > .git/config",
      "git status > .mcp.json",
      "ls > .agents/skills/x/SKILL.md",
    ];
    const { server, workspace, options } = await setup([
      ...commands.map((command, at) => call(`toolu_${at + 1}`, "bash", { command })),
      stream(turn({ text: ["done"] })),
    ]);
    execFileSync("git", ["init", "-q"], { cwd: workspace, env: options.env });
    await mkdir(join(workspace, "src"));
    await mkdir(join(workspace, ".agents/skills/x"), { recursive: true });
    const hook = join(workspace, ".git/hooks/pre-commit");
    await writeFile(hook, "#!/bin/sh\n", { mode: 0o755 });
    const config = await readFile(join(workspace, ".git/config"), "utf8");
    const run = await runBin(
      ["--sandbox", "off", "--allow", "ls", "--allow", "git status", "task"],
      options,
    );
    expect(run.code).toBe(0);
    const results = toolResults(server.requests[commands.length]?.body ?? {});
    expect(results.map((r) => r.isError)).toEqual(commands.map(() => true));
    expect(results.every((r) => /protected file/.test(String(r.content)))).toBe(true);
    expect(await readFile(hook, "utf8")).toBe("#!/bin/sh\n");
    expect(await readFile(join(workspace, ".git/config"), "utf8")).toBe(config);
    expect(existsSync(join(workspace, ".mcp.json"))).toBe(false);
    expect(existsSync(join(workspace, ".agents/skills/x/SKILL.md"))).toBe(false);
  });

  it.skipIf(!sandboxed)(
    "undoes, after a sandboxed command, the protected files it made or changed below the read-only mounts",
    async () => {
      const commands = [
        // the outside attack's one command: a new repository and its configuration at once
        `git init -q sub2 && git -C sub2 config core.fsmonitor 'id > ${"$PWD"}/PWN2; false'`,
        // a nested repository's configuration, through a program the rules cannot see into
        `sh -c 'printf "[core]\\n\\tfsmonitor = \\"id > $PWD/PWN; false\\"\\n" >> sub/.git/config'`,
        // the top-level repository's location
        "mkdir -p cd && cp sub/.git/config cd/config && cp -r sub/.git/objects sub/.git/refs cd/ && sh -c 'echo ../cd > .git/commondir'",
      ];
      const { server, workspace, options } = await setup([
        ...commands.map((command, at) => call(`toolu_${at + 1}`, "bash", { command })),
        stream(turn({ text: ["done"] })),
      ]);
      execFileSync("git", ["init", "-q"], { cwd: workspace, env: options.env });
      await mkdir(join(workspace, "sub"));
      execFileSync("git", ["init", "-q"], { cwd: join(workspace, "sub"), env: options.env });
      const config = await readFile(join(workspace, "sub/.git/config"), "utf8");
      const run = await runBin(["--allow-bash", "task"], options);
      expect(run.code).toBe(0);
      const results = toolResults(server.requests[commands.length]?.body ?? {});
      const notes = results.map((r) =>
        String(r.content)
          .split("\n")
          .filter((line) => line.startsWith("- ")),
      );
      expect(notes[0]).toContain(
        "- moved aside sub2/.git/config, which the command created (git reads it as configuration, which can name programs git runs): now config.mini-agent-removed",
      );
      expect(notes[1]).toEqual([
        "- restored sub/.git/config, which the command changed (git reads it as configuration, which can name programs git runs)",
      ]);
      expect(notes[2]).toEqual([
        "- moved aside .git/commondir, which the command created (git reads it as the place of the repository's files and configuration): now commondir.mini-agent-removed",
      ]);
      expect(await readFile(join(workspace, "sub/.git/config"), "utf8")).toBe(config);
      for (const folder of [workspace, join(workspace, "sub"), join(workspace, "sub2")])
        usersGitStatus(folder, options.env);
      expect(existsSync(join(workspace, "PWN"))).toBe(false);
      expect(existsSync(join(workspace, "sub/PWN"))).toBe(false);
      expect(existsSync(join(workspace, "PWN2"))).toBe(false);
      expect(existsSync(join(workspace, "sub2/PWN2"))).toBe(false);
    },
  );
});
