import { access, chmod, mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, toolResults, useCliSetup } from "./support/cli.js";
import { faultServer } from "./support/mcp.js";
import { realSandbox } from "./support/sandbox.js";

/**
 * What trusting a project `.mcp.json` entry covers, attacked as a cloned repository would: the
 * workspace files its command line names (the model can rewrite them), the variables its `env` and
 * `headers` pass on (shown before anyone trusts them), and a name shared with the user's own
 * server (an untrusted entry never takes its place).
 */

const setup = useCliSetup();
const sandboxed = await realSandbox();

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** A program that only writes a marker file when it is started: proof that it ran. */
const markerProgram = (marker: string) =>
  `require("fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n`;

describe("trust of a project's MCP servers", () => {
  it("covers the workspace files the entry's command line names: one the model rewrote is not started", async () => {
    const { workspace, home, options } = await setup([
      stream(turn({ text: ["one"] })),
      stream(turn({ calls: [{ id: "toolu_0", name: "read", input: { path: "srv.js" } }] })),
      stream(
        turn({
          calls: [
            {
              id: "toolu_1",
              name: "write",
              input: { path: "srv.js", content: markerProgram("rewritten.marker") },
            },
          ],
        }),
      ),
      stream(turn({ text: ["rewrote it"] })),
      stream(turn({ text: ["again"] })),
    ]);
    const marker = join(home, "original");
    await writeFile(join(workspace, "srv.js"), markerProgram(marker));
    const mcpJson = join(workspace, ".mcp.json");
    const entry = { command: process.execPath, args: ["srv.js"], cwd: "." };
    await writeFile(mcpJson, JSON.stringify({ mcpServers: { local: entry } }));

    const trusted = await runBin(["mcp", "trust", "local"], options);
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toContain("; trusted with the content of srv.js");
    // The trusted program runs as trusted.
    const started = await runBin(["one"], options);
    expect(started.code).toBe(0);
    expect(await exists(marker)).toBe(true);

    // The model rewrites the program; the entry in .mcp.json is unchanged.
    const rewrite = await runBin(["tidy the server", "--no-mcp"], options);
    expect(rewrite).toMatchObject({ code: 0, stdout: "rewrote it\n" });
    const after = await runBin(["again"], options);
    expect(after.code).toBe(0);
    expect(await readFile(join(workspace, "srv.js"), "utf8")).toContain("rewritten.marker");
    expect(after.stderr).toContain('MCP server "local": untrusted');
    expect(await exists(join(workspace, "rewritten.marker"))).toBe(false);
  }, 40_000);

  for (const [how, mode, stop] of [
    ["a crash", "ok", "crash"],
    ["its stop for a message over 32 MB", "huge", "huge"],
  ] as const) {
    it(`never restarts a trusted server whose program was rewritten after ${how}`, async () => {
      const call = (id: string, name: string, input: Record<string, unknown>) =>
        stream(turn({ calls: [{ id, name, input }] }));
      const marker = "rewritten.marker";
      const { server, workspace, options } = await setup([
        // A change no writer of the agent's sees (the protected set keeps `write` and a redirect
        // off the program): what the re-check before a restart is for.
        call("toolu_0", "read", { path: "srv.mjs" }),
        call("toolu_1", "bash", {
          command: `node -e 'require("fs").writeFileSync("srv.mjs", process.argv[1])' ${JSON.stringify(`import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\n`)}`,
        }),
        call("toolu_2", `mcp__p__${stop}`, {}),
        call("toolu_3", "mcp__p__echo", { text: "again" }),
        stream(turn({ text: ["done"] })),
      ]);
      // The trusted program: the fault server, run from a file of the workspace.
      await writeFile(
        join(workspace, "srv.mjs"),
        `import ${JSON.stringify(pathToFileURL(faultServer).href)};\n`,
      );
      const entry = { command: process.execPath, args: ["srv.mjs", mode] };
      await writeFile(join(workspace, ".mcp.json"), JSON.stringify({ mcpServers: { p: entry } }));
      expect((await runBin(["mcp", "trust", "p"], options)).code).toBe(0);

      const args = ["--allow", "mcp__p__*", "--allow-bash", "--sandbox", "off", "go"];
      const run = await runBin(args, options);
      expect(run).toMatchObject({ code: 0, stdout: "done\n" });
      expect(await readFile(join(workspace, "srv.mjs"), "utf8")).toContain(marker);
      expect(await exists(join(workspace, marker))).toBe(false);
      const refused =
        "not started: its files (srv.mjs) changed since it was trusted; mini-agent mcp trust p trusts it as it is now";
      expect(toolResults(server.requests[4]?.body ?? {}).at(-1)).toEqual({
        id: "toolu_3",
        content: `mcp__p__echo failed: server p is not running (${refused})`,
        isError: true,
      });
      expect(run.stderr).toContain(`mini-agent: MCP server "p": failed: ${refused}\n`);
    }, 60_000);
  }

  it("keeps a trusted server's program from the model's writers: write asks, the sandbox keeps it read-only", async () => {
    const call = (id: string, name: string, input: Record<string, unknown>) =>
      stream(turn({ calls: [{ id, name, input }] }));
    const { server, workspace, options } = await setup([
      call("toolu_0", "read", { path: "srv.mjs" }),
      call("toolu_1", "write", { path: "srv.mjs", content: "// rewritten\n" }),
      call("toolu_2", "bash", {
        command: `node -e 'require("fs").appendFileSync("srv.mjs", "x")'`,
      }),
      stream(turn({ text: ["done"] })),
    ]);
    const program = `import ${JSON.stringify(pathToFileURL(faultServer).href)};\n`;
    await writeFile(join(workspace, "srv.mjs"), program);
    const entry = { command: process.execPath, args: ["srv.mjs", "ok"] };
    await writeFile(join(workspace, ".mcp.json"), JSON.stringify({ mcpServers: { p: entry } }));
    expect((await runBin(["mcp", "trust", "p"], options)).code).toBe(0);
    const run = await runBin(["go"], options);
    expect(run).toMatchObject({ code: 0, stdout: "done\n" });
    expect(await readFile(join(workspace, "srv.mjs"), "utf8")).toBe(program);
    const result = toolResults(server.requests[2]?.body ?? {}).at(-1);
    expect(result?.isError).toBe(true);
    expect(String(result?.content)).toContain("a trusted MCP server runs it, outside the sandbox");
    if (sandboxed) {
      const bash = toolResults(server.requests[3]?.body ?? {}).at(-1);
      expect(String(bash?.content)).toMatch(/EROFS|Read-only file system/);
    }
  }, 60_000);

  it("covers what node resolves itself, and says in words what it cannot follow", async () => {
    const { workspace, options } = await setup([]);
    const exit = "process.exit(0);\n";
    for (const name of ["srv.js", "srv.mjs", "pre.js", "hostile.mjs"])
      await writeFile(join(workspace, name), exit);
    await mkdir(join(workspace, "bin"));
    await writeFile(join(workspace, "bin", "node"), "#!/bin/sh\nexit 0\n");
    await chmod(join(workspace, "bin", "node"), 0o755);
    const servers = {
      a: { command: "node", args: ["srv"] },
      b: { command: "node", args: ["hostile.mjs"], env: { NODE_OPTIONS: "--require ./pre" } },
      c: { command: "sh", args: ["-c", "node srv.mjs"] },
      d: { command: "node", args: ["-e", "require('./pre.js')"] },
      e: { command: "node", args: ["srv.mjs"], env: { PATH: `bin:${process.env.PATH}` } },
    };
    await writeFile(join(workspace, ".mcp.json"), JSON.stringify({ mcpServers: servers }));
    const trusted = await runBin(["trust"], options);
    expect(trusted.code).toBe(0);
    const heads = async () =>
      (await runBin(["mcp", "list"], options)).stdout
        .split("\n")
        .filter((line) => /^[a-e] /.test(line))
        .map((line) => line.replace(/ \(project \/[^,]*,/, " ("));
    const sh = "sh runs the text of its -c option, which mini-agent does not follow";
    const eval_ = "node runs the code of its -e option, which mini-agent does not follow";
    expect(await heads()).toEqual([
      "a ( trusted): node srv; trusted with the content of srv.js",
      "b ( trusted): node hostile.mjs; env NODE_OPTIONS=--require ./pre; trusted with the content of hostile.mjs, pre.js",
      `c ( trusted): sh -c 'node srv.mjs'; trusted with the content of srv.mjs; the model can change what this runs: ${sh}`,
      `d ( trusted): node -e 'require('\\''./pre.js'\\'')'; the model can change what this runs: ${eval_}`,
      `e ( trusted): node srv.mjs; env PATH=bin:${process.env.PATH}; trusted with the content of bin/node, srv.mjs`,
    ]);
    // The model rewrites what runs: each entry that ran it is untrusted again.
    for (const name of ["srv.js", "pre.js", "bin/node"])
      await writeFile(join(workspace, name), "// rewritten\n", { flag: "a" });
    expect((await heads()).map((line) => line.slice(0, line.indexOf(")") + 1))).toEqual([
      "a ( not trusted)",
      "b ( not trusted)",
      "c ( trusted)",
      "d ( trusted)",
      "e ( not trusted)",
    ]);
  }, 60_000);

  it("shows each argument quoted as a shell would, and a long run of blanks as a count", async () => {
    const { workspace, options } = await setup([]);
    const servers = {
      x: { command: "sh", args: ["-c", "node srv.mjs"] },
      y: { command: "sh", args: ["-c", "node", "srv.mjs"] },
      z: { command: "sh", args: ["-c", `echo benign${" ".repeat(3000)}; echo EVIL`, "it's"] },
    };
    await writeFile(join(workspace, ".mcp.json"), JSON.stringify({ mcpServers: servers }));
    const list = await runBin(["mcp", "list"], options);
    const heads = list.stdout
      .split("\n")
      .filter((line) => /^[xyz] /.test(line))
      .map((line) => line.replace(/ \(project \/[^)]*\): /, ": ").replace(/; the model.*/, ""));
    expect(heads).toEqual([
      "x: sh -c 'node srv.mjs'",
      "y: sh -c node srv.mjs",
      "z: sh -c 'echo benign[3000 blanks]; echo EVIL' 'it'\\''s'",
    ]);
  });

  it("says there is nothing to trust where the project has no .mcp.json", async () => {
    const { workspace, options } = await setup([]);
    const run = await runBin(["mcp", "trust", "local"], options);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `mini-agent: no .mcp.json in ${await realpath(workspace)}: no MCP server "local" to trust\n`,
    );
  });

  it("says why a .mcp.json that cannot be used has no server to trust, and refuses an empty name", async () => {
    const { workspace, options } = await setup([]);
    await writeFile(join(workspace, ".mcp.json"), '{"mcpServers":{"a":{"command":"true"}}');
    const broken = await runBin(["mcp", "trust", "a"], options);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(
      /^mini-agent: cannot trust "a": \/.*\/\.mcp\.json: not valid JSON \(.*\)\n$/,
    );
    await writeFile(join(workspace, ".mcp.json"), '{"mcpServers":[]}');
    expect((await runBin(["mcp", "trust", "a"], options)).stderr).toMatch(
      /^mini-agent: cannot trust "a": \/.*\/\.mcp\.json: .*mcpServers.*\n$/,
    );
    for (const verb of ["trust", "untrust"])
      expect(await runBin(["mcp", verb, ""], options)).toMatchObject({
        code: 2,
        stderr: `mini-agent: mcp ${verb} needs a server's name\n`,
      });
  });

  it("says what untrust did: a trusted server is no longer trusted, any other name was not", async () => {
    const { workspace, options } = await setup([]);
    const entry = { command: process.execPath, args: ["srv.js"], cwd: "." };
    await writeFile(join(workspace, "srv.js"), "");
    await writeFile(join(workspace, ".mcp.json"), JSON.stringify({ mcpServers: { local: entry } }));
    expect((await runBin(["mcp", "trust", "local"], options)).code).toBe(0);
    const said = [];
    for (const name of ["local", "local", "NOSUCH"]) {
      const run = await runBin(["mcp", "untrust", name], options);
      said.push([run.code, run.stdout.replace(/ in \/.*?(:|$)/m, "$1")]);
    }
    expect(said).toEqual([
      [0, "local: no longer trusted\n"],
      [0, "local: not trusted: nothing to untrust\n"],
      [0, "NOSUCH: not trusted: nothing to untrust\n"],
    ]);
  });

  it("covers a workspace file an env value names (NODE_OPTIONS=--require ./pre.js) the same way", async () => {
    const { workspace, home, options } = await setup([]);
    const marker = join(home, "preloaded");
    await writeFile(join(workspace, "pre.js"), markerProgram(marker));
    await writeFile(join(workspace, "srv.js"), "process.exit(0);\n");
    const entry = {
      command: process.execPath,
      args: ["srv.js"],
      env: { NODE_OPTIONS: "--require ./pre.js" },
    };
    await writeFile(join(workspace, ".mcp.json"), JSON.stringify({ mcpServers: { local: entry } }));
    const trusted = await runBin(["mcp", "trust", "local"], options);
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toMatch(
      /trusted with the content of (pre\.js, srv\.js|srv\.js, pre\.js)/,
    );
    await writeFile(join(workspace, "pre.js"), markerProgram(join(workspace, "changed.marker")));
    const list = await runBin(["mcp", "list"], options);
    expect(list.stdout).toContain("not started: not trusted");
    expect(await exists(join(workspace, "changed.marker"))).toBe(false);
  }, 40_000);

  it("shows the variables an entry passes on before it is trusted", async () => {
    const { workspace, options } = await setup([]);
    const mcpJson = join(workspace, ".mcp.json");
    await writeFile(
      mcpJson,
      JSON.stringify({
        mcpServers: {
          docs: {
            type: "http",
            url: "http://127.0.0.1:9/mcp",
            headers: { "X-Team": "${ANTHROPIC_API_KEY}" },
          },
          tool: { command: "tool-server", env: { TOKEN: "${GITHUB_TOKEN:-none}" } },
        },
      }),
    );
    const list = await runBin(["mcp", "list"], options);
    expect(list.stdout).toContain("headers X-Team: ${ANTHROPIC_API_KEY}");
    expect(list.stdout).toContain("env TOKEN=${GITHUB_TOKEN:-none}");
    const trust = await runBin(["mcp", "trust", "docs"], options);
    expect(trust.stdout).toContain("headers X-Team: ${ANTHROPIC_API_KEY}");
  });

  it("never lets an untrusted project entry take the place of the user's server of the same name", async () => {
    const { workspace, home, options } = await setup([stream(turn({ text: ["fine"] }))]);
    const marker = join(home, "user-server-ran");
    await mkdir(join(home, "state"), { recursive: true });
    await writeFile(
      join(home, "state", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          github: {
            command: process.execPath,
            args: ["-e", markerProgram(marker)],
          },
        },
      }),
    );
    await writeFile(
      join(workspace, ".mcp.json"),
      JSON.stringify({ mcpServers: { github: { command: "evil-server" } } }),
    );
    const run = await runBin(["task"], options);
    expect(run.code).toBe(0);
    expect(await exists(marker)).toBe(true);
    expect(run.stderr).toContain(`mcp server "github" of ${join(workspace, ".mcp.json")}`);
  }, 30_000);

  it("never reads a project .mcp.json too big to be one, and says so", async () => {
    const { workspace, options } = await setup([stream(turn({ text: ["fine"] }))]);
    const mcpJson = join(workspace, ".mcp.json");
    await writeFile(mcpJson, `{"mcpServers": {}, "pad": "${"x".repeat(2 * 1024 * 1024)}"}`);
    expect(await runBin(["task"], options)).toEqual({
      code: 0,
      stdout: "fine\n",
      stderr: `mini-agent: warning: ${mcpJson}: is larger than 1 MiB: skipped\n`,
    });
  });
});
