import { access, mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { rulesFile } from "../src/app/rules.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, toolResults, useCliSetup } from "./support/cli.js";
import { everythingServer } from "./support/mcp.js";
import { protocolLines } from "./support/stream-json.js";

/**
 * The CLI with MCP servers, driven by a scripted model through the strict local server: the
 * reference server over stdio from `--mcp-config`, approval of `mcp__` tools, a bad file, and a
 * project `.mcp.json` that never runs before it is trusted.
 */

const setup = useCliSetup();

const everything = { command: process.execPath, args: [everythingServer(), "stdio"] };

async function configFile(dir: string, servers: Record<string, unknown>): Promise<string> {
  const file = join(dir, "mcp-test.json");
  await writeFile(file, JSON.stringify({ mcpServers: servers }));
  return file;
}

const echoCall = { id: "toolu_1", name: "mcp__everything__echo", input: { message: "hi there" } };

/** A server that only writes a marker file when it is started: proof that it ran. */
function markerServer(marker: string) {
  return {
    command: process.execPath,
    args: ["-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "ran")`],
  };
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

describe("the CLI with MCP servers", () => {
  it("calls a server tool allowed by --allow, and the model sees the server's tools", async () => {
    const { server, home, options } = await setup([
      stream(turn({ calls: [echoCall] })),
      stream(turn({ text: ["done"] })),
    ]);
    const file = await configFile(home, { everything });
    const run = await runBin(
      ["--mcp-config", file, "--allow", "mcp__everything__echo", "say hi"],
      options,
    );
    expect(run).toMatchObject({ code: 0, stdout: "done\n" });
    const tools =
      (server.requests[0]?.body as { tools?: { name: string }[] } | undefined)?.tools ?? [];
    expect(tools.map((tool) => tool.name).filter((name) => name.startsWith("mcp__"))).toContain(
      "mcp__everything__get-sum",
    );
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "Echo: hi there", isError: false },
    ]);
  }, 30_000);

  it("denies an MCP call no rule allows when no one can be asked, and says how to allow it", async () => {
    const { server, home, options } = await setup([
      stream(turn({ calls: [echoCall] })),
      stream(turn({ text: ["done"] })),
    ]);
    const file = await configFile(home, { everything });
    const run = await runBin(["--mcp-config", file, "say hi"], options);
    expect(run).toMatchObject({ code: 0, stdout: "done\n" });
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content:
          "mcp__everything__echo is a tool of an MCP server (the server says: read-only, not destructive, idempotent): MCP calls need approval and no one can be asked here (--allow mcp__everything__echo, or --allow 'mcp__everything__*')",
        isError: true,
      },
    ]);
  }, 30_000);

  it("allows every tool of a server with mcp__server__*, and a deny rule wins", async () => {
    const { server, home, options } = await setup([
      stream(turn({ calls: [echoCall] })),
      stream(turn({ text: ["done"] })),
    ]);
    const file = await configFile(home, { everything });
    const flags = [
      "--mcp-config",
      file,
      "--allow",
      "mcp__everything__*",
      "--deny",
      "mcp__everything__echo",
    ];
    expect(await runBin([...flags, "say hi"], options)).toMatchObject({ code: 0 });
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: "the rule deny mcp__everything__echo denies mcp__everything__echo",
        isError: true,
      },
    ]);
  }, 30_000);

  it("stops with one line and exit 2 on a bad --mcp-config, before anything starts", async () => {
    const { server, home, options } = await setup([]);
    const marker = join(home, "marker");
    const file = await configFile(home, { good: markerServer(marker), bad: { command: 7 } });
    const run = await runBin(["--mcp-config", file, "task"], options);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: ${file}: server "bad": command must be a non-empty string\n`,
    });
    expect(server.requests).toEqual([]);
    expect(await exists(marker)).toBe(false);
    expect(await sessionFiles(home)).toEqual([]);
  });

  it("never starts a project server before it is trusted, and asks again after an edit", async () => {
    const { workspace, home, options } = await setup([
      stream(turn({ text: ["one"] })),
      stream(turn({ text: ["two"] })),
      stream(turn({ text: ["three"] })),
    ]);
    const marker = join(home, "marker");
    const mcpJson = join(workspace, ".mcp.json");
    await writeFile(mcpJson, JSON.stringify({ mcpServers: { local: markerServer(marker) } }));
    const first = await runBin(["task"], options);
    expect(first).toEqual({
      code: 0,
      stdout: "one\n",
      stderr: `mini-agent: MCP server "local": untrusted: skipped, not trusted: ${mcpJson} (mini-agent mcp trust local)\n`,
    });
    expect(await exists(marker)).toBe(false);

    const trusted = await runBin(["mcp", "trust", "local"], options);
    expect(trusted).toMatchObject({ code: 0, stderr: "" });
    await runBin(["task"], options);
    expect(await exists(marker)).toBe(true);

    const edited = markerServer(`${marker}-edited`);
    await writeFile(mcpJson, JSON.stringify({ mcpServers: { local: edited } }));
    const third = await runBin(["task"], options);
    expect(third.stderr).toBe(
      `mini-agent: MCP server "local": untrusted: skipped, not trusted: ${mcpJson} (mini-agent mcp trust local)\n`,
    );
    expect(await exists(`${marker}-edited`)).toBe(false);
  }, 30_000);

  it("lists a broken project .mcp.json without stopping the run", async () => {
    const { workspace, options } = await setup([stream(turn({ text: ["fine"] }))]);
    const mcpJson = join(workspace, ".mcp.json");
    await writeFile(mcpJson, JSON.stringify({ mcpServers: { x: { command: 1 } } }));
    expect(await runBin(["task"], options)).toEqual({
      code: 0,
      stdout: "fine\n",
      stderr: `mini-agent: warning: ${mcpJson}: server "x": command must be a non-empty string\n`,
    });
  });

  it("mcp list shows source, trust, status and the model-visible tool names", async () => {
    const { workspace, home, options } = await setup([]);
    await mkdir(join(workspace, "sub"));
    const file = await configFile(home, { everything });
    const mcpJson = join(workspace, ".mcp.json");
    await writeFile(
      mcpJson,
      JSON.stringify({ mcpServers: { local: { type: "http", url: "http://127.0.0.1:9/mcp" } } }),
    );
    const run = await runBin(["mcp", "list", "--mcp-config", file], options);
    const names = [
      "echo",
      "get-annotated-message",
      "get-env",
      "get-resource-links",
      "get-resource-reference",
      "get-structured-content",
      "get-sum",
      "get-tiny-image",
      "gzip-file-as-resource",
      "simulate-research-query",
      "toggle-simulated-logging",
      "toggle-subscriber-updates",
      "trigger-long-running-operation",
    ];
    expect(run).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        `everything (--mcp-config ${file}, yours): ${process.execPath} ${everythingServer()} stdio`,
        "  ready, 13 tool(s)",
        ...names.map((name) => `  mcp__everything__${name}`),
        `local (project ${mcpJson}, not trusted): http://127.0.0.1:9/mcp`,
        "  not started: not trusted (mini-agent mcp trust local)",
        "",
      ].join("\n"),
    });
  }, 30_000);

  it("tells each server's state as an mcp_status event: a stream-json line and one stderr line", async () => {
    const { workspace, home, options } = await setup([stream(turn({ text: ["done"] }))]);
    const broken = {
      command: process.execPath,
      args: ["-e", "console.error('no database at db:5432'); process.exit(3)"],
    };
    const file = await configFile(home, { everything, broken });
    const mcpJson = join(workspace, ".mcp.json");
    await writeFile(mcpJson, JSON.stringify({ mcpServers: { local: markerServer("x") } }));
    const run = await runBin(
      ["--mcp-config", file, "--output-format", "stream-json", "task"],
      options,
    );
    expect(run.code).toBe(0);
    const statuses = protocolLines(run.stdout).filter((line) => line.type === "mcp_status");
    const skipped = `skipped, not trusted: ${mcpJson} (mini-agent mcp trust local)`;
    const failed = "the server closed the connection (exit code 3)";
    expect(statuses).toEqual([
      { version: 1, type: "mcp_status", server: "local", state: "untrusted", reason: skipped },
      {
        version: 1,
        type: "mcp_status",
        server: "broken",
        state: "failed",
        reason: failed,
        stderr: ["no database at db:5432"],
      },
      { version: 1, type: "mcp_status", server: "everything", state: "ready", tools: 13 },
    ]);
    expect(run.stderr).toBe(
      [
        `mini-agent: MCP server "local": untrusted: ${skipped}`,
        `mini-agent: MCP server "broken": failed: ${failed} (stderr: no database at db:5432)`,
        'mini-agent: MCP server "everything": ready, 13 tool(s)',
        "",
      ].join("\n"),
    );
  }, 30_000);

  it("saves an MCP tool rule as {effect, tool}, still reads one saved as words, and the rule decides the call", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ calls: [echoCall] })),
      stream(turn({ text: ["done"] })),
    ]);
    const added = await runBin(["rules", "add", "allow", "mcp__everything__echo"], options);
    expect(added).toEqual({ code: 0, stdout: "added: allow mcp__everything__echo\n", stderr: "" });
    const file = rulesFile(options.env, await realpath(workspace));
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      version: 2,
      rules: [{ effect: "allow", tool: "mcp__everything__echo" }],
    });
    await runBin(["rules", "add", "deny", "git push"], options);
    const saved = JSON.parse(await readFile(file, "utf8")) as { rules: unknown[] };
    expect(saved.rules).toEqual([
      { effect: "allow", tool: "mcp__everything__echo" },
      { effect: "deny", words: ["git", "push"] },
    ]);
    const config = await configFile(home, { everything });
    const run = await runBin(["--mcp-config", config, "say hi"], options);
    expect(run).toMatchObject({ code: 0, stdout: "done\n" });
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "Echo: hi there", isError: false },
    ]);
    // A file written before tool rules had their own shape: the same rule, by its one word.
    await writeFile(
      file,
      JSON.stringify({ version: 1, rules: [{ effect: "deny", words: ["mcp__everything__*"] }] }),
    );
    expect(await runBin(["rules", "list"], options)).toMatchObject({
      code: 0,
      stdout: "1  deny 'mcp__everything__*'\n",
    });
  }, 30_000);

  it("refuses a tool rule in the file that names no MCP tool, in one line", async () => {
    const { workspace, options } = await setup([]);
    const file = rulesFile(options.env, await realpath(workspace));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(
      file,
      JSON.stringify({ version: 1, rules: [{ effect: "allow", tool: "bash" }] }),
    );
    expect(await runBin(["rules", "list"], options)).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: ${file}, rule 1: an MCP tool rule is {"effect": "allow" or "deny", "tool": "mcp__server__tool" or "mcp__server__*"}\n`,
    });
  });

  it("rules explain says which tool rule decides an MCP tool, and what is asked without one", async () => {
    const { options } = await setup([]);
    const explain = (flags: string[]) =>
      runBin(["rules", "explain", "mcp__everything__echo", ...flags], options);
    expect(
      await explain(["--allow", "mcp__everything__*", "--deny", "mcp__everything__echo"]),
    ).toEqual({
      code: 0,
      stderr: "",
      stdout:
        "deny: rule:deny mcp__everything__echo\nwhy: the rule deny mcp__everything__echo denies mcp__everything__echo (from --deny)\n(code mode; an MCP tool: tool rules decide it, deny wins)\n",
    });
    expect(await explain(["--allow", "mcp__everything__*"])).toMatchObject({
      stdout:
        "allow: rule:allow 'mcp__everything__*'\nwhy: allowed by the rule allow 'mcp__everything__*' (from --allow)\n(code mode; an MCP tool: tool rules decide it, deny wins)\n",
    });
    expect(await explain([])).toMatchObject({
      code: 0,
      stdout: [
        "ask: no-rule",
        "why: mcp__everything__echo is a tool of an MCP server and no tool rule names it",
        `"always" would save: allow mcp__everything__echo (or allow 'mcp__everything__*' for every tool of the server)`,
        "(code mode; an MCP tool: tool rules decide it, deny wins; with no terminal, ask means deny)",
        "",
      ].join("\n"),
    });
  });
});
