// biome-ignore-all lint/suspicious/noTemplateCurlyInString: a configuration value with a ${VAR} reference
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runStatus } from "../src/app/mcp.js";
import { type ConnectMcpOptions, connectMcpServers, type McpServers } from "../src/mcp/index.js";
import type { McpServerStatus } from "../src/mcp/server.js";
import { faultServer } from "./support/mcp.js";
import { killProcessesWith, processesWith } from "./support/processes.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";

/** Servers of our own, each with one fault (test/fixtures/mcp-fault-server.mjs). */

const tempDir = useTempDirs();
const open: McpServers[] = [];
const markers: string[] = [];
// Closing waits for each server to exit; on a loaded machine that takes a while.
afterEach(async () => {
  await Promise.all(open.splice(0).map((mcp) => mcp.close()));
  for (const marker of markers.splice(0)) await killProcessesWith(marker);
}, 60_000);

function marker(): string {
  const made = `fault-marker-${Math.random().toString(36).slice(2)}`;
  markers.push(made);
  return made;
}

async function connect(
  mode: string,
  options: ConnectMcpOptions = {},
  env: Record<string, string> = {},
): Promise<McpServers> {
  const mcp = await connectMcpServers(
    { mcpServers: { f: { command: process.execPath, args: [faultServer, mode, marker()], env } } },
    { closeGraceMs: 200, ...options },
  );
  open.push(mcp);
  return mcp;
}

const call = (mcp: McpServers, name: string, input: unknown = {}, signal?: AbortSignal) => {
  const tool = mcp.tools().find((candidate) => candidate.spec.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${mcp.tools().map((t) => t.spec.name)}`);
  return tool.execute(input, signal);
};

describe("MCP servers that misbehave", () => {
  it("reports a server slower than its start timeout as late, then adds its tools when it is up", async () => {
    const statuses: McpServerStatus[] = [];
    const mcp = await connect("slow-start", {
      startTimeoutMs: 300,
      onStatus: (status) => statuses.push(status),
    });
    expect(mcp.status()).toEqual([
      {
        name: "f",
        state: "starting",
        late: true,
        reason: "not started within 0.3 s; its tools are added when it comes up",
        // What it wrote so far: under load, maybe not yet its first line.
        stderr: expect.any(Array),
        tools: 0,
        restarts: 0,
      },
    ]);
    expect(mcp.tools()).toEqual([]);
    await until(() => mcp.status()[0]?.state === "up");
    expect(mcp.tools().map((tool) => tool.spec.name)).toEqual([
      "mcp__f__big",
      "mcp__f__crash",
      "mcp__f__echo",
      "mcp__f__grow",
      "mcp__f__hang",
    ]);
    expect(mcp.status()[0]?.stderr).toEqual(["fault server started in mode slow-start"]);
    expect(statuses.map(({ state, late }) => [state, late])).toEqual([
      ["starting", false],
      ["starting", true],
      ["up", false],
    ]);
    expect(await call(mcp, "mcp__f__echo", { text: "late" })).toEqual({
      content: "echo: late",
      isError: false,
    });
  });

  it("ends a server that is still starting when the servers are closed", async () => {
    const mcp = await connect("slow-start", { startTimeoutMs: 100 });
    const [mark] = markers;
    expect(await processesWith(mark ?? "")).toHaveLength(1);
    await mcp.close();
    // Gone, so its slow start can never end in tools.
    expect(await processesWith(mark ?? "")).toEqual([]);
    expect(mcp.status()[0]).toMatchObject({ state: "closed", tools: 0 });
    expect(mcp.tools()).toEqual([]);
  });

  it("gives a call the server exits during an error receipt, and restarts it at the next call, a bounded number of times", async () => {
    const statuses: McpServerStatus[] = [];
    const mcp = await connect("exit-mid-call", {
      maxRestarts: 1,
      onStatus: (status) => statuses.push(status),
    });
    expect(await call(mcp, "mcp__f__crash")).toEqual({
      content: "mcp__f__crash failed: the server closed the connection (exit code 3)",
      isError: true,
    });
    expect(mcp.status()[0]).toEqual({
      name: "f",
      state: "failed",
      late: false,
      reason: "the server closed the connection (exit code 3); it restarts at the next call",
      stderr: ["fault server started in mode exit-mid-call", "about to crash"],
      tools: 5,
      restarts: 0,
      exited: true,
    });
    expect(await call(mcp, "mcp__f__echo", { text: "again" })).toEqual({
      content: "echo: again",
      isError: false,
    });
    expect(mcp.status()[0]).toMatchObject({ state: "up", restarts: 1 });
    // What the CLI tells of each change: started, up, exited, restarting, up again.
    expect(statuses.map((status) => runStatus(status)?.state)).toEqual([
      "starting",
      "ready",
      "exited",
      "restarting",
      "ready",
    ]);
    await call(mcp, "mcp__f__crash");
    expect(await call(mcp, "mcp__f__echo", { text: "no more" })).toEqual({
      content:
        "mcp__f__echo failed: server f crashed and was restarted 1 times; it is not restarted again",
      isError: true,
    });
  });

  it("ignores a stdout line that is not JSON-RPC, and keeps it in the server's log", async () => {
    const mcp = await connect("garbage");
    expect(await call(mcp, "mcp__f__echo", { text: "fine" })).toEqual({
      content: "echo: fine",
      isError: false,
    });
    expect(mcp.status()[0]?.stderr).toContain(
      "stdout (not JSON-RPC, ignored): this line is not JSON",
    );
    expect(mcp.status()[0]?.state).toBe("up");
  });

  it("kills a server that ignores the end of stdin and SIGTERM", async () => {
    const mcp = await connect("ignore-stdin");
    const [mark] = markers;
    expect(await processesWith(mark ?? "")).toHaveLength(1);
    await mcp.close();
    expect(await processesWith(mark ?? "")).toEqual([]);
    expect(mcp.status()[0]?.state).toBe("closed");
  });

  it("bounds a 10 MB result like any tool's, cut between code points", async () => {
    const mcp = await connect("big");
    const result = await call(mcp, "mcp__f__big");
    const total = 10 * 1024 * 1024;
    expect(result).toEqual({
      content: `${"é".repeat(50_000)}\n[truncated ${total - 50_000} characters]`,
      isError: false,
    });
  });

  it("stops a server that sends a message larger than 32 MB, and says so", async () => {
    const mcp = await connect("huge");
    expect(await call(mcp, "mcp__f__huge")).toEqual({
      content:
        "mcp__f__huge failed: the server closed the connection (it sent a message larger than 32 MB and was stopped)",
      isError: true,
    });
    expect(await call(mcp, "mcp__f__echo", { text: "restarted" })).toEqual({
      content: "echo: restarted",
      isError: false,
    });
  });

  it("offers 300 tools, every name valid for the providers, in a stable order", async () => {
    const mcp = await connect("many");
    const names = mcp.tools().map((tool) => tool.spec.name);
    expect(names).toHaveLength(300);
    expect(names.every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name))).toBe(true);
    expect(names).toEqual([...names].sort());
    expect(names.slice(0, 4)).toEqual([
      "mcp__f__big",
      "mcp__f__crash",
      "mcp__f__echo",
      "mcp__f__grow",
    ]);
  });

  it("maps colliding, invalid and overlong names to distinct valid ones that call the raw name", async () => {
    const first = await connect("names");
    const mapped = Object.fromEntries(first.tools().map((tool) => [tool.mcp.tool, tool.spec.name]));
    const long = "x".repeat(80);
    expect(Object.keys(mapped).sort()).toEqual(
      [
        "a b",
        "a.b",
        "a_b",
        "big",
        "café",
        "crash",
        "echo",
        "grow",
        "hang",
        long,
        `${long}y`,
      ].sort(),
    );
    expect(mapped.echo).toBe("mcp__f__echo");
    for (const raw of ["a b", "a.b", "a_b"])
      expect(mapped[raw]).toMatch(/^mcp__f__a_b_[0-9a-f]{8}$/);
    expect(mapped["café"]).toMatch(/^mcp__f__caf__[0-9a-f]{8}$/);
    expect(mapped[long]).toMatch(new RegExp(`^mcp__f__${"x".repeat(47)}_[0-9a-f]{8}$`));
    const names = Object.values(mapped);
    expect(new Set(names).size).toBe(names.length);
    expect(names.every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name))).toBe(true);
    expect(await call(first, mapped["a.b"] ?? "", { text: "hi" })).toEqual({
      content: "a.b: hi",
      isError: false,
    });
    // Failures name the tool as the model knows it, not by its raw name.
    const dotted = first.tools().find((tool) => tool.mcp.tool === "a.b");
    await first.close();
    expect(await dotted?.execute({ text: "late" })).toEqual({
      content: `${mapped["a.b"]} failed: the MCP servers were closed`,
      isError: true,
    });
    const second = await connect("names");
    expect(
      second
        .tools()
        .map((tool) => tool.spec.name)
        .sort(),
    ).toEqual(names.sort());
  });

  it("leaves out each malformed tool of a list with its reason, and offers the others", async () => {
    const mcp = await connect("malformed");
    expect(mcp.tools().map((tool) => tool.mcp.tool)).toEqual([
      "big",
      "crash",
      "echo",
      "grow",
      "hang",
    ]);
    expect(mcp.status()[0]).toMatchObject({
      state: "up",
      tools: 5,
      leftOut: [
        "a tool without a name",
        "a tool without a name",
        '"no-schema" (it has no input schema)',
        '"string-schema" (its input schema is not an object)',
        '"array-schema" (its input schema is not an object)',
        '"deep" (its inputSchema is nested over 100 levels deep)',
        "an entry that is not a tool",
      ],
    });
    expect(await call(mcp, "mcp__f__echo", { text: "still here" })).toEqual({
      content: "echo: still here",
      isError: false,
    });
  });

  it("lists a server's tools again when it says they changed", async () => {
    const statuses: McpServerStatus[] = [];
    const mcp = await connect("growing", { onStatus: (status) => statuses.push(status) });
    expect(mcp.tools().some((tool) => tool.spec.name === "mcp__f__grown")).toBe(false);
    expect(await call(mcp, "mcp__f__grow")).toEqual({ content: "grown", isError: false });
    await until(() => mcp.tools().some((tool) => tool.spec.name === "mcp__f__grown"));
    expect(mcp.status()[0]).toMatchObject({ state: "up", tools: 6 });
    expect(statuses.at(-1)).toMatchObject({ state: "up", tools: 6 });
    expect(await call(mcp, "mcp__f__grown", { text: "new" })).toEqual({
      content: "grown: new",
      isError: false,
    });
  });

  it("cancels a call that never answers on abort, says so, and the server stays usable", async () => {
    const log = join(await tempDir(), "received.jsonl");
    const mcp = await connect("never", {}, { FAULT_LOG: log });
    const controller = new AbortController();
    const running = call(mcp, "mcp__f__hang", {}, controller.signal);
    // Aborted once the server has the call.
    await until(async () => (await readFile(log, "utf8").catch(() => "")).includes('"tools/call"'));
    controller.abort();
    expect(await running).toEqual({
      content: "mcp__f__hang aborted: the server was asked to cancel the call",
      isError: true,
    });
    expect(await call(mcp, "mcp__f__echo", { text: "after" })).toEqual({
      content: "echo: after",
      isError: false,
    });
    const received = (await readFile(log, "utf8"))
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as { id?: number; method: string; params?: { requestId?: number } },
      );
    const hang = received.find((message) => message.method === "tools/call");
    const cancelled = received.filter((message) => message.method === "notifications/cancelled");
    expect(cancelled.map((message) => message.params?.requestId)).toEqual([hang?.id]);
  });

  it("answers a call whose response is not a JSON-RPC response at once, as a protocol error", async () => {
    const mcp = await connect("bad-answers", { callTimeoutMs: 30_000 });
    const started = Date.now();
    for (const name of ["mcp__f__not-object", "mcp__f__no-result"]) {
      const receipt = await call(mcp, name);
      expect(receipt.isError).toBe(true);
      expect(receipt.content).toContain("not a valid JSON-RPC response");
    }
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(mcp.status()[0]?.state).toBe("up");
  });

  it("times out a call that never answers", async () => {
    const mcp = await connect("never", { callTimeoutMs: 300 });
    expect(await call(mcp, "mcp__f__hang")).toEqual({
      content: "mcp__f__hang failed: timed out without progress",
      isError: true,
    });
  });

  it("reports a server that cannot start by name and reason, and starts the others", async () => {
    const mcp = await connectMcpServers(
      {
        mcpServers: {
          absent: { command: "/nonexistent/mcp-server" },
          unset: { command: process.execPath, env: { TOKEN: "${MCP_TEST_UNSET_VAR}" } },
          ok: { command: process.execPath, args: [faultServer, "ok", marker()] },
        },
      },
      { env: { PATH: process.env.PATH ?? "" } },
    );
    open.push(mcp);
    expect(mcp.status().map(({ name, state, reason }) => ({ name, state, reason }))).toEqual([
      { name: "absent", state: "failed", reason: "command not found: /nonexistent/mcp-server" },
      { name: "ok", state: "up", reason: undefined },
      {
        name: "unset",
        state: "failed",
        reason: "env.TOKEN: the variable MCP_TEST_UNSET_VAR is not set",
      },
    ]);
    expect(mcp.tools().map((tool) => tool.mcp.server)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
  });

  it("throws one line for an invalid configuration a library caller passes", async () => {
    await expect(connectMcpServers({ mcpServers: { x: { args: [] } } })).rejects.toThrow(
      /^<mcp config>: server "x": command is required$/,
    );
  });
});
