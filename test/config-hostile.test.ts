import { execFileSync } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load.js";
import { contentHash } from "../src/crypto.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { loadTrust } from "../src/trust/trust.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/**
 * Configuration files as a hostile repository writes them, and as an unlucky user does: a path
 * that paints the terminal, a folder that is a link out of the project, a file that cannot be
 * read, duplicate keys, limits that would make every run fail, numbers past any use. Each one is
 * refused or shown in one line, never trusted into a project that cannot run.
 */

const setup = useCliSetup();
const tempDir = useTempDirs();

const projectFile = (root: string) => join(root, ".mini-agent", "config.json");

async function writeProject(root: string, value: unknown): Promise<string> {
  await mkdir(join(root, ".mini-agent"), { recursive: true });
  const text = typeof value === "string" ? value : JSON.stringify(value);
  await writeFile(projectFile(root), text);
  return text;
}

/** Whether `text` holds ESC or BEL, which would reach the terminal as they are. */
const painting = (text: string) => text.includes("\u001b") || text.includes("\u0007");

async function trustText(home: string, root: string, text: string): Promise<void> {
  const trust = await loadTrust(join(home, "state"), root);
  await trust.trust([{ kind: "config", name: "config.json", hash: contentHash(text) }]);
}

describe("the project's path on the terminal", () => {
  it("shows control characters of the path as escapes in the skip line and in the question", async () => {
    const { workspace, options } = await setup([stream(turn({ text: ["fine"] }))]);
    const painted = join(workspace, "a\u001b]0;owned\u0007b\u001b[2J");
    await mkdir(painted);
    await writeProject(painted, { model: "m" });
    const run = await runBin(["--cwd", painted, "hello"], options);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("is not trusted, so it is not read");
    expect(painting(run.stderr)).toBe(false);

    const questions: string[] = [];
    await loadConfig({
      stateHome: await tempDir(),
      workspace: painted,
      ask: async (question) => {
        questions.push(question);
        return false;
      },
    });
    expect(questions).toHaveLength(1);
    expect(questions[0]).toContain("Trust the project configuration");
    expect(painting(questions[0] ?? "")).toBe(false);
  });
});

describe("mini-agent trust", () => {
  it("refuses a project file whose limits are above the user's or the defaults, and trusts nothing", async () => {
    const { home, workspace, options } = await setup([]);
    await writeProject(workspace, { sandbox: { limits: { processes: 99999, memory: "64G" } } });
    const run = await runBin(["trust"], options);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: ${projectFile(workspace)}: sandbox.limits.processes cannot be raised by a project file (99999 is above 4096) (not trusted)\n`,
    });
    expect((await loadTrust(join(home, "state"), workspace)).entries()).toEqual([]);
  });

  it("refuses a project file whose skills folder is outside the project", async () => {
    const { workspace, options } = await setup([]);
    await writeProject(workspace, { skills: { paths: ["../elsewhere"] } });
    const run = await runBin(["trust"], options);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("skills.paths must name folders inside the project");
    expect(run.stderr).toContain("(not trusted)");
  });
});

describe("limits and numbers", () => {
  it("refuses a memory limit too small for bash to start, in a file as with the flag", async () => {
    const { home, workspace, options } = await setup([]);
    for (const memory of ["0", "0M", "1K"]) {
      await trustText(
        home,
        workspace,
        await writeProject(workspace, { sandbox: { limits: { memory } } }),
      );
      const run = await runBin(["config"], options);
      expect({ memory, code: run.code }).toEqual({ memory, code: 2 });
      expect(run.stderr).toContain("sandbox.limits.memory must be a size of at least 16M");
      const flag = await runBin(["config", "--sandbox-memory", memory], { ...options, cwd: home });
      expect({ memory, code: flag.code }).toEqual({ memory, code: 2 });
      expect(flag.stderr).toContain("--sandbox-memory must be a size of at least 16M");
    }
  });

  it("refuses a context window too small to hold the system prompt and tools", async () => {
    const { home, workspace, options } = await setup([]);
    await trustText(home, workspace, await writeProject(workspace, { contextWindow: 1000 }));
    const file = await runBin(["config"], options);
    expect(file.code).toBe(2);
    expect(file.stderr).toContain("contextWindow must be a whole number of tokens from 4096");
    const flag = await runBin(["config", "--context-window", "4095"], { ...options, cwd: home });
    expect(flag.stderr).toContain("--context-window must be a whole number of tokens from 4096");
  });

  it("refuses numbers past any use the same way in files and flags", async () => {
    const { home, workspace, options } = await setup([]);
    for (const field of ["contextWindow", "maxTurns"]) {
      await trustText(home, workspace, await writeProject(workspace, `{"${field}": 1e308}`));
      const run = await runBin(["config"], options);
      expect({ field, code: run.code }).toEqual({ field, code: 2 });
      expect(run.stderr).toContain(`${field} must be`);
    }
    for (const flag of [
      "--max-turns",
      "--context-window",
      "--token-budget",
      "--sandbox-processes",
    ]) {
      const run = await runBin(["config", flag, "1e308"], { ...options, cwd: home });
      expect({ flag, code: run.code }).toEqual({ flag, code: 2 });
      const huge = await runBin(["config", flag, "9".repeat(400)], { ...options, cwd: home });
      expect({ flag, code: huge.code }).toEqual({ flag, code: 2 });
    }
  });
});

describe("files that cannot be used", () => {
  it("never follows a .mini-agent folder that is a link out of the project", async () => {
    const { home, workspace, options } = await setup([]);
    const outside = await tempDir();
    const text = await writeProject(outside, { model: "outside-model" });
    await symlink(join(outside, ".mini-agent"), join(workspace, ".mini-agent"));
    await trustText(home, workspace, text);
    const run = await runBin(["config"], options);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("outside-model");
    expect(run.stdout).toMatch(/^project file +unusable, skipped: .*symbolic link/m);
    const trust = await runBin(["trust"], options);
    expect(trust.code).toBe(2);
    expect(trust.stderr).toContain("symbolic link");
  });

  it("names a project file it cannot read in config and trust, not as none", async () => {
    const { workspace, options } = await setup([]);
    await mkdir(join(workspace, ".mini-agent"));
    const file = projectFile(workspace);
    const cases: [string, () => Promise<void>, RegExp][] = [
      ["a link", () => symlink("/etc/hostname", file), /symbolic link/],
      ["a FIFO", async () => void execFileSync("mkfifo", [file]), /not a regular file/],
      ["a folder", () => mkdir(file), /not a regular file/],
      ["not UTF-8", () => writeFile(file, Buffer.from([0x7b, 0xff, 0x7d])), /not UTF-8/],
    ];
    for (const [what, make, reason] of cases) {
      execFileSync("rm", ["-rf", file]);
      await make();
      const config = await runBin(["config"], options);
      expect({ what, code: config.code }).toEqual({ what, code: 0 });
      expect(config.stdout).toMatch(/^project file +unusable, skipped: /m);
      expect(config.stdout).toMatch(reason);
      const trust = await runBin(["trust"], options);
      expect({ what, code: trust.code, out: trust.stdout }).toEqual({ what, code: 2, out: "" });
      expect(trust.stderr).toMatch(reason);
    }
  });

  it("names a .mcp.json it cannot read in mcp list, not as no servers", async () => {
    const { workspace, options } = await setup([]);
    const real = join(await tempDir(), "real.json");
    await writeFile(real, JSON.stringify({ mcpServers: { a: { command: "true" } } }));
    await symlink(real, join(workspace, ".mcp.json"));
    const run = await runBin(["mcp", "list"], options);
    expect(run.stdout + run.stderr).toMatch(/\.mcp\.json: is a symbolic link/);
    expect(run.stdout).not.toContain("has none");
  });

  it("refuses duplicate keys, which would hide a value from the checks", async () => {
    const { home, options } = await setup([]);
    await mkdir(join(home, "state"), { recursive: true });
    const file = join(home, "state", "config.json");
    await writeFile(file, '{"model": "sk-ant-abcdefghijklmnop", "model": "claude-x"}');
    const run = await runBin(["config"], options);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: ${file}: model is given twice\n`,
    });
    await writeFile(file, '{"sandbox": {"limits": {"memory": "1G", "memory": "2G"}}}');
    expect((await runBin(["config"], options)).stderr).toBe(
      `mini-agent: ${file}: sandbox.limits.memory is given twice\n`,
    );
    await writeFile(file, '{"rules": {"deny": ["a"]}, "x\\u0041": 1, "xA": 2}');
    expect((await runBin(["config"], options)).stderr).toBe(
      `mini-agent: ${file}: xA is given twice\n`,
    );
  });

  it("refuses duplicate keys in .mcp.json as a problem of the file", async () => {
    const { workspace, options } = await setup([]);
    await writeFile(
      join(workspace, ".mcp.json"),
      '{"mcpServers": {"a": {"command": "true"}, "a": {"command": "false"}}}',
    );
    const run = await runBin(["mcp", "list"], options);
    expect(run.stdout + run.stderr).toContain("mcpServers.a is given twice");
  });
});

describe("the one line for a wrong field", () => {
  it("says an unknown field of a project file is unknown, not that it may only narrow", async () => {
    const { home, workspace, options } = await setup([]);
    await trustText(home, workspace, await writeProject(workspace, { modle: "x" }));
    expect((await runBin(["config"], options)).stderr).toBe(
      `mini-agent: ${projectFile(workspace)}: modle is not a known field (docs/configuration.md lists them)\n`,
    );
    // A name an object has by its prototype is no field either.
    await trustText(home, workspace, await writeProject(workspace, '{"constructor": 1}'));
    expect((await runBin(["config"], options)).stderr).toBe(
      `mini-agent: ${projectFile(workspace)}: constructor is not a known field (docs/configuration.md lists them)\n`,
    );
    await trustText(home, workspace, await writeProject(workspace, { sandbox: { hidden: ["x"] } }));
    expect((await runBin(["config"], options)).stderr).toBe(
      `mini-agent: ${projectFile(workspace)}: sandbox.hidden is not a known field (docs/configuration.md lists them)\n`,
    );
  });

  it("describes one element of a list as an element, not as the list", async () => {
    const { home, options } = await setup([]);
    await mkdir(join(home, "state"), { recursive: true });
    const file = join(home, "state", "config.json");
    for (const [value, line] of [
      [{ rules: { allow: [""] } }, 'rules.allow[0] must be a rule (command words), not ""'],
      [{ skills: { paths: [3] } }, "skills.paths[0] must be a folder, not 3"],
      [{ sandbox: { hide: [""] } }, 'sandbox.hide[0] must be a path, not ""'],
    ] as const) {
      await writeFile(file, JSON.stringify(value));
      expect((await runBin(["config"], options)).stderr).toBe(`mini-agent: ${file}: ${line}\n`);
    }
  });
});

describe("skills.paths", () => {
  it("adds folders of skills: the user's as user skills, the project's as project skills, trusted", async () => {
    const { home, workspace, options } = await setup([]);
    const mine = join(await tempDir(), "my-skills");
    const write = async (folder: string, name: string) => {
      await mkdir(join(folder, name), { recursive: true });
      await writeFile(
        join(folder, name, "SKILL.md"),
        `---\nname: ${name}\ndescription: The ${name} skill.\n---\nSteps.\n`,
      );
    };
    await write(mine, "mine");
    await write(join(workspace, "tools", "skills"), "theirs");
    await mkdir(join(home, "state"), { recursive: true });
    await writeFile(
      join(home, "state", "config.json"),
      JSON.stringify({ skills: { paths: [mine] } }),
    );
    await writeProject(workspace, { skills: { paths: ["tools/skills"] } });
    const before = await runBin(["skills"], options);
    expect(before.stdout).toMatch(/^user +mine /m);
    expect(before.stdout).not.toMatch(/theirs {2}/);
    expect((await runBin(["trust"], options)).code).toBe(0);
    const after = await runBin(["skills"], options);
    expect(after.stdout).toMatch(/^user +mine /m);
    expect(after.stdout).toMatch(/^project +theirs /m);
  });
});

describe("a second hostile pass", () => {
  const userFile = (home: string) => join(home, "state", "config.json");
  const writeUser = async (home: string, text: string) => {
    await mkdir(join(home, "state"), { recursive: true });
    await writeFile(userFile(home), text);
  };

  it("says a number too large to hold is one, not null", async () => {
    const { home, options } = await setup([]);
    await writeUser(home, '{"contextWindow": 1e999}');
    expect((await runBin(["config"], options)).stderr).toBe(
      `mini-agent: ${userFile(home)}: contextWindow must be a whole number of tokens from 4096 to 100000000, not a number too large to hold\n`,
    );
  });

  it("lets config path and trust --revoke work with a broken user file, which they do not need", async () => {
    const { home, workspace, options } = await setup([]);
    await writeUser(home, '{"maxTurns": 0}');
    expect(await runBin(["config", "path"], options)).toEqual({
      code: 0,
      stdout: `${userFile(home)}\n`,
      stderr: "",
    });
    const revoke = await runBin(["trust", "--revoke"], options);
    expect(revoke).toEqual({
      code: 0,
      stdout: `revoked 0 trusted entries of ${workspace}\n`,
      stderr: "",
    });
    expect((await runBin(["config"], options)).code).toBe(2);
  });

  it("refuses a user file that is a link to nothing, or a loop, naming which", async () => {
    const { home, options } = await setup([]);
    await mkdir(join(home, "state"), { recursive: true });
    await symlink(join(home, "moved-away.json"), userFile(home));
    expect((await runBin(["config"], options)).stderr).toBe(
      `mini-agent: ${userFile(home)}: is a link to a file that does not exist\n`,
    );
    execFileSync("rm", [userFile(home)]);
    await symlink(userFile(home), userFile(home));
    expect((await runBin(["config"], options)).stderr).toBe(
      `mini-agent: ${userFile(home)}: is a link that leads back to itself\n`,
    );
  });

  it("says which folder of the state folder is a file when the sessions are listed", async () => {
    const { home, options } = await setup([]);
    const listed = (state: string, folder: string) =>
      new RegExp(
        `^mini-agent: cannot list ${folder}: a part of the path is not a folder \\(ENOTDIR\\); it is in the state folder ${state} \\(MINI_AGENT_HOME\\)\n$`,
      );
    const state = join(home, "state");
    await mkdir(state);
    await writeFile(join(state, "sessions"), "not a folder");
    const listing = await runBin(["--sessions"], options);
    expect(listing.code).toBe(1);
    expect(listing.stderr).toMatch(listed(state, `${join(state, "sessions")}/\\S+`));
    const every = await runBin(["--sessions", "--all"], options);
    expect(every.code).toBe(1);
    expect(every.stderr).toMatch(listed(state, join(state, "sessions")));
  });

  it("says in words why a user file cannot be opened (a socket there: ENXIO)", async () => {
    const { home, options } = await setup([]);
    await mkdir(join(home, "state"), { recursive: true });
    const socket = createServer();
    await new Promise<void>((listening) => socket.listen(userFile(home), listening));
    try {
      expect((await runBin(["config"], options)).stderr).toBe(
        `mini-agent: ${userFile(home)}: is not a regular file\n`,
      );
    } finally {
      socket.close();
    }
  });

  it("refuses at trust a project skills folder that is a link out of the project", async () => {
    const { home, workspace, options } = await setup([]);
    await symlink("/etc", join(workspace, "lnk"));
    await writeProject(workspace, { skills: { paths: ["lnk"] } });
    const run = await runBin(["trust"], options);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("skills.paths must name folders inside the project");
    expect(run.stderr).toContain("(a link to /etc)");
    expect((await loadTrust(join(home, "state"), workspace)).entries()).toEqual([]);
  });

  it("says at trust what of .mcp.json cannot be trusted, never that everything is", async () => {
    const { workspace, options } = await setup([]);
    await writeFile(
      join(workspace, ".mcp.json"),
      '{"mcpServers": {"a": {"command": "true"}, "a": {"command": "false"}}}',
    );
    const run = await runBin(["trust"], options);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("mcpServers.a is given twice (not trusted)");
    expect(run.stdout).not.toContain("everything it has is trusted");
  });

  it("shows the state folder's path escaped in config path", async () => {
    const { home, options } = await setup([]);
    const painted = join(home, "st\u001b[2Jate");
    const run = await runBin(["config", "path"], {
      ...options,
      env: { ...options.env, MINI_AGENT_HOME: painted },
    });
    expect(run.stdout).toBe(`${join(home, "st␛[2Jate")}/config.json\n`);
  });
});
