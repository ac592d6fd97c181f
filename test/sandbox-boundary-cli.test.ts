import { execFileSync } from "node:child_process";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { rulesFile } from "../src/app/rules.js";
import { boundaryLine } from "../src/cli/terminal/banner.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { select, withAcpAgent } from "./support/acp.js";
import { runBin, toolResults, useCliSetup } from "./support/cli.js";
import { realSandbox, useOutsideFolders } from "./support/sandbox.js";
import { drive, protocolLines } from "./support/stream-json.js";
import { hasTmux, useTmux } from "./support/tmux.js";

/**
 * The sandbox as the boundary, through the built CLI with no terminal and default flags: bash in
 * the sandbox runs without a question; a call that asks to leave it is a person's decision, on
 * the stream-json protocol's own event, and never an answer meant for an ordinary question.
 */

const setup = useCliSetup();
const outsideFolder = useOutsideFolders();
const sandboxed = await realSandbox({ mode: "auto" });
const tmux = useTmux();

/** A loopback listener counting the connections that reach it: none may, from the sandbox. */
const listeners: Server[] = [];
afterEach(async () => {
  await Promise.all(listeners.splice(0).map((server) => new Promise((done) => server.close(done))));
});
async function listener(): Promise<{ port: number; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  listeners.push(server);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { port: address.port, connections: () => count };
}

/** Every file under `root` (the state folder aside) with its bytes, for a byte-for-byte compare. */
async function tree(root: string, dir = root): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) Object.assign(files, await tree(root, path));
    else files[relative(root, path)] = (await readFile(path)).toString("base64");
  }
  return files;
}

const bash = (id: string, command: string, more: Record<string, unknown> = {}) => ({
  id,
  name: "bash",
  input: { command, ...more },
});

describe.skipIf(!sandboxed)("in a working sandbox, in code mode, with no one to ask", () => {
  it("runs writes, tests, a network attempt and an outside write without a question; the sandbox holds and rewind restores the workspace", async () => {
    const net = await listener();
    const out = await outsideFolder("boundary");
    const marker = join(out, "fsmonitor-ran");
    const python = [
      "open('new.txt','w').write('made')",
      "open('a.txt','a').write('more')",
      "import os",
      "os.remove('b.txt')",
    ].join("; ");
    const calls = [
      bash("w", `python3 -c "${python}"`),
      bash("t", "python3 -m unittest -q test_one"),
      bash(
        "n",
        `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${net.port}), 5)"`,
      ),
      bash("o", `echo planted > ${join(out, "planted.txt")}`),
      bash("p", `git init -q sub && git -C sub config core.fsmonitor 'touch ${marker}'`),
    ];
    const { workspace, options, server } = await setup([
      stream(turn({ calls })),
      stream(turn({ text: ["done"] })),
    ]);
    await writeFile(join(workspace, "a.txt"), "one\n");
    await writeFile(join(workspace, "b.txt"), "two\n");
    await writeFile(
      join(workspace, "test_one.py"),
      "import unittest\nclass T(unittest.TestCase):\n    def test_it(self):\n        self.assertEqual(1, 1)\n",
    );
    const before = await tree(workspace);
    const run = await runBin(["--output-format", "stream-json", "go"], options);
    expect(run.code).toBe(0);
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "approval")).toEqual(
      calls.map(({ id }) => ({
        version: 1,
        type: "approval",
        id,
        name: "bash",
        approved: true,
        by: "sandbox",
      })),
    );
    const results = toolResults(server.requests[1]?.body ?? {});
    const result = (id: string) => results.find((one) => one.id === id);
    expect([result("w")?.isError, result("t")?.isError]).toEqual([false, false]);
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("one\nmore");
    expect(await stat(join(workspace, "b.txt")).catch(() => "gone")).toBe("gone");
    // The network and the outside write fail inside the sandbox; nothing outside changed.
    expect(result("n")).toMatchObject({ isError: true });
    expect(net.connections()).toBe(0);
    expect(result("o")).toMatchObject({
      isError: true,
      content: expect.stringContaining("Read-only file system"),
    });
    expect(await readdir(out)).toEqual([]);
    // With no one to ask, no line tells the model of a way out.
    expect(String(result("o")?.content)).not.toContain("outside_sandbox");
    // The protected file the command made is put right after the call.
    expect(result("p")?.content).toContain(
      "[protected files: a command in the sandbox may not change what runs outside it; undone]",
    );
    const config = await readFile(join(workspace, "sub", ".git", "config"), "utf8").catch(() => "");
    expect(config).not.toContain("fsmonitor");
    // The tool offers no way out where no one could approve it.
    const body = server.requests[0]?.body as
      | { tools: { name: string; input_schema: { properties: object } }[] }
      | undefined;
    const tools = body?.tools ?? [];
    expect(
      Object.keys(tools.find((tool) => tool.name === "bash")?.input_schema.properties ?? {}),
    ).toEqual(["command", "timeout"]);
    const rewind = await runBin(["rewind", "--to", "1"], options);
    expect(rewind.code).toBe(0);
    expect(await tree(workspace)).toEqual(before);
  });
});

/** A model that asks once to run `command` outside the sandbox, then ends. */
const leaving = (command: string) => [
  stream(
    turn({ calls: [bash("x", command, { outside_sandbox: true, reason: "it writes outside" })] }),
  ),
  stream(turn({ text: ["done"] })),
];

describe.skipIf(!sandboxed)("the way out of the sandbox", () => {
  it.skipIf(!hasTmux)(
    "is asked on a terminal, saying it runs with the user's full rights; always saves that exact command",
    async () => {
      const out = await outsideFolder("terminal");
      const canary = join(out, "ran.txt");
      const { workspace, options } = await setup(leaving(`touch ${canary}`));
      const term = tmux({ cwd: workspace, env: options.env, columns: 220 });
      const start = await term.waitFor(/^›/m);
      expect(start).toContain(`${boundaryLine}\n`);
      term.type("go");
      term.keys("Enter");
      const screen = await term.waitFor(/\(exactly\)\)\?$/m);
      expect(screen).toContain(
        `Allow bash OUTSIDE the sandbox, with your full rights (network included): touch ${canary}\n`,
      );
      expect(screen).toContain(
        `[y/N/a] (a = always, saves allow-unsandboxed touch ${canary} (exactly))?`,
      );
      term.type("a");
      term.keys("Enter");
      await term.waitFor("done");
      expect((await stat(canary)).isFile()).toBe(true);
      const rules = JSON.parse(await readFile(rulesFile(options.env, workspace), "utf8"));
      expect(rules).toEqual({
        version: 2,
        rules: [{ effect: "allow-unsandboxed", words: ["touch", canary], exact: true }],
      });
      term.type("/exit");
      term.keys("Enter");
    },
  );

  it("is a question of its own in stream-json: an approval line does not answer it, approval_unsandboxed does", async () => {
    const out = await outsideFolder("way-out");
    const canary = join(out, "ran.txt");
    const { workspace, options } = await setup(leaving(`touch ${canary}`));
    const args = ["--input-format", "stream-json", "--output-format", "stream-json"];
    let answered = false;
    const run = await drive(args, options, ['{"type":"user","text":"go"}'], (line) => {
      if (line.type === "approval_request_unsandboxed") {
        // A v1 client answering as it answers approval_request first, then a client that knows.
        return [
          JSON.stringify({ type: "approval", id: line.id, decision: "allow" }),
          JSON.stringify({ type: "approval_unsandboxed", id: line.id, decision: "allow" }),
        ];
      }
      if (line.type === "error") answered = true;
      return line.type === "result" ? "end" : [];
    });
    expect(run.code).toBe(0);
    expect(answered).toBe(true);
    const request = run.lines.find((line) => line.type === "approval_request_unsandboxed");
    expect(request).toEqual({
      version: 1,
      type: "approval_request_unsandboxed",
      id: "x",
      name: "bash",
      input: { command: `touch ${canary}`, outside_sandbox: true, reason: "it writes outside" },
      reason:
        "this command asks to run OUTSIDE the sandbox, with the user's full rights: every file the user can change, the network, the credential stores; the model's reason: it writes outside",
      modelReason: "it writes outside",
      timeoutSeconds: 300,
    });
    expect(run.lines.filter((line) => line.type === "error")).toEqual([
      {
        version: 1,
        type: "error",
        message: expect.stringContaining(
          'answers "x" with an approval line: that request asks to run outside the sandbox and takes an approval_unsandboxed line',
        ),
      },
    ]);
    expect(run.lines.filter((line) => line.type === "approval")).toEqual([
      { version: 1, type: "approval", id: "x", name: "bash", approved: true, by: "user" },
    ]);
    expect((await stat(canary)).isFile()).toBe(true);
    expect(workspace).not.toBe(out);
  });

  it("is an ACP permission request without an always option; an always answer does not run it", async () => {
    const out = await outsideFolder("acp");
    const canary = join(out, "ran.txt");
    const { workspace, options } = await setup([
      ...leaving(`touch ${canary}`).slice(0, 1),
      stream(turn({ calls: [bash("y", "make", { outside_sandbox: true, reason: "again" })] })),
      stream(turn({ text: ["done"] })),
    ]);
    const answers = ["allow_always", "allow_once"];
    const { value, run } = await withAcpAgent(
      [],
      options,
      () => select(answers.shift() ?? "reject_once"),
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const session = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
        return await agent.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "go" }],
        });
      },
    );
    expect(value).toEqual({ stopReason: "end_turn" });
    expect(run.permissions.map((request) => [request.toolCall.title, request.options])).toEqual([
      [
        "bash: this command asks to run OUTSIDE the sandbox, with the user's full rights: every file the user can change, the network, the credential stores; the model's reason: it writes outside",
        [
          { optionId: "allow_once", name: "Allow once, outside the sandbox", kind: "allow_once" },
          { optionId: "reject_once", name: "Reject", kind: "reject_once" },
        ],
      ],
      [expect.stringContaining("the model's reason: again"), expect.any(Array)],
    ]);
    // The "always" it was not offered ran nothing.
    expect(await readdir(out)).toEqual([]);
  });

  it("is never approved by a v1 client that approves every approval_request: it times out, denied", async () => {
    const out = await outsideFolder("v1");
    const canary = join(out, "ran.txt");
    const { options } = await setup(leaving(`touch ${canary}`));
    const args = [
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--approval-timeout",
      "1",
    ];
    const run = await drive(args, options, ['{"type":"user","text":"go"}'], (line) => {
      if (line.type === "approval_request")
        return [JSON.stringify({ type: "approval", id: line.id, decision: "allow" })];
      return line.type === "result" ? "end" : [];
    });
    expect(run.lines.filter((line) => line.type === "approval")).toEqual([
      {
        version: 1,
        type: "approval",
        id: "x",
        name: "bash",
        approved: false,
        by: "approval-timeout",
      },
    ]);
    expect(await readdir(out)).toEqual([]);
  });

  it("is denied with no one to ask, refused in plan mode, not covered by --allow-bash or an allow rule; the explicit rule covers it", async () => {
    const out = await outsideFolder("rules");
    const canary = join(out, "ran.txt");
    await writeFile(join(out, "w.py"), "");
    const cases: [string[], string][] = [
      [[], "no-terminal"],
      [["--allow-bash"], "no-terminal"],
      [["--allow", "touch"], "no-terminal"],
      [["--mode", "plan", "--allow-unsandboxed", "touch"], "mode:plan"],
    ];
    for (const [flags, by] of cases) {
      const { options } = await setup(leaving(`touch ${canary}`));
      const run = await runBin([...flags, "--output-format", "stream-json", "go"], options);
      expect(run.code).toBe(0);
      expect(protocolLines(run.stdout).filter((line) => line.type === "approval")).toEqual([
        { version: 1, type: "approval", id: "x", name: "bash", approved: false, by },
      ]);
      expect(await readdir(out)).toEqual(["w.py"]);
    }
    const { options } = await setup(leaving(`touch ${canary}`));
    const run = await runBin(
      ["--allow-unsandboxed", "touch", "--output-format", "stream-json", "go"],
      options,
    );
    expect(protocolLines(run.stdout).filter((line) => line.type === "approval")).toEqual([
      {
        version: 1,
        type: "approval",
        id: "x",
        name: "bash",
        approved: true,
        by: "rule:allow-unsandboxed touch",
      },
    ]);
    expect((await readdir(out)).sort()).toEqual(["ran.txt", "w.py"]);
  });
});

it("git, as these tests run it, is on PATH", () => {
  expect(execFileSync("git", ["--version"], { encoding: "utf8" })).toMatch(/^git version/);
});
