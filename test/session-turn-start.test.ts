import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { RunAgentOptions } from "../src/agent.js";
import { openAgentSession } from "../src/app/session.js";
import { summaryPrompt } from "../src/compaction/summary.js";
import type { McpServers } from "../src/mcp/index.js";
import type { TurnEvent } from "../src/runner/events.js";
import { startAnthropicServer, stream, turn } from "../src/testing/anthropic-server.js";
import type { Body, Reply } from "../src/testing/sse-server.js";
import type { Tool } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { faultServer } from "./support/mcp.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";

/**
 * The turn start is a value: each turn the runner asks for its system prompt and tools, hands
 * the loop a list of its own that nothing changes, and a compaction in the middle of a turn
 * builds the prompt's text again and nothing else. Driven through `openAgentSession`, the
 * assembly every front end uses, with a real MCP server that comes up only after turn 1.
 */

const seen = vi.hoisted(() => ({
  tools: [] as (readonly Tool[])[],
  servers: undefined as McpServers | undefined,
}));

vi.mock("../src/agent.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../src/agent.js")>();
  return {
    ...real,
    runAgent: (options: RunAgentOptions) => {
      seen.tools.push(options.tools);
      return real.runAgent(options);
    },
  };
});

// The session starts its servers without waiting 30 s for one that is late, and the test sees
// when it is up.
vi.mock("../src/mcp/index.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../src/mcp/index.js")>();
  return {
    ...real,
    connectMcpServers: async (...[config, options]: Parameters<typeof real.connectMcpServers>) => {
      const servers = await real.connectMcpServers(config, { ...options, startTimeoutMs: 300 });
      seen.servers = servers;
      return servers;
    },
  };
});

const tempDir = useTempDirs();
const track = useCleanup();
const summary = "## Goal\nread big.txt\n## Done\nread it\n## Next\nanswer";
const systemText = (body: Body) =>
  ((body.system ?? []) as { text: string }[]).map((block) => block.text).join("");
const toolNames = (body: Body | undefined) =>
  ((body?.tools ?? []) as { name: string }[]).map((tool) => tool.name);

const own = ["read", "ls", "find", "grep", "write", "edit", "bash", "plan"];
const served = ["big", "crash", "echo", "grow", "hang"].map((name) => `mcp__g__${name}`);

describe("a session's turn start", () => {
  it("gives each turn its own frozen tool list: an MCP server up after turn 1 joins at turn 2, and a compaction in turn 2 changes no list", async () => {
    // Turn 1 answers at once; turn 2 reads big.txt until the conversation is compacted, reads it
    // once more and answers.
    let phase = 1;
    let compacted = false;
    let afterCompaction = 0;
    let reads = 0;
    const dispatch = (body: Body): Reply => {
      if (systemText(body) === summaryPrompt) {
        compacted = true;
        return stream(turn({ text: [summary] }));
      }
      if (phase === 1) return stream(turn({ text: ["hi"] }));
      if (compacted && afterCompaction++ > 0) return stream(turn({ text: ["done"] }));
      reads++;
      const call = { id: `toolu_${reads}`, name: "read", input: { path: "big.txt" } };
      return stream(turn({ calls: [call] }));
    };
    const server = track(
      await startAnthropicServer(
        Array.from({ length: 40 }, () => dispatch),
        { contextLimit: 8000 },
      ),
    );
    const workspace = await tempDir();
    const home = await tempDir();
    await writeFile(join(workspace, "big.txt"), "a line of a rather large file\n".repeat(200));
    const gate = join(home, "gate");
    const config = join(home, "mcp.json");
    const entry = {
      command: process.execPath,
      args: [faultServer, "gated"],
      env: { FAULT_GATE: gate },
    };
    await writeFile(config, JSON.stringify({ mcpServers: { g: entry } }));
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      MINI_AGENT_HOME: join(home, "state"),
      ANTHROPIC_API_KEY: "sk-test-key-0123456789",
    };
    const lines: string[] = [];
    const session = await openAgentSession(
      {
        env,
        provider: "anthropic",
        model: "claude-test",
        baseURL: server.url,
        allowBash: false,
        mode: "code",
        rules: [],
        sandbox: "off",
        sandboxHide: [],
        sandboxLimits: {},
        skillFolders: [],
        mcpConfig: [config],
        noMcp: false,
        maxTurns: 20,
        contextWindow: 8000,
        workspace,
        file: "first-record",
      },
      { tell: (line) => lines.push(line), notice: (text) => lines.push(text) },
    );
    track(session);
    const events: TurnEvent[][] = [[], []];
    const first = await session.runner.runTurn("hello", { onEvent: (e) => events[0]?.push(e) });
    expect(first.status).toBe("completed");
    await writeFile(gate, "");
    await until(() => seen.servers?.status()[0]?.state === "up");
    phase = 2;
    const second = await session.runner.runTurn("read big.txt", {
      onEvent: (e) => events[1]?.push(e),
    });
    await session.close();
    expect(second).toMatchObject({ status: "completed", text: "done" });
    expect(compacted).toBe(true);
    expect(server.rejections).toEqual([]);

    // One loop per turn, each with a list of its own that nothing could change.
    expect(seen.tools).toHaveLength(2);
    const [one, two] = seen.tools;
    expect(one).not.toBe(two);
    expect(seen.tools.map((tools) => Object.isFrozen(tools))).toEqual([true, true]);
    expect(seen.tools.map((tools) => tools.map((tool) => tool.spec.name))).toEqual([
      own,
      [...own, ...served],
    ]);
    // The compaction came in the middle of turn 2; every request of that turn, the ones after
    // it with the prompt built again, carried the turn's tools.
    const kinds = (turnEvents: TurnEvent[]) => turnEvents.map((event) => event.type);
    expect(kinds(events[1] ?? [])).toContain("compaction");
    const turnTwo = server.requests.slice(1).map(({ body }) => body);
    const asked = turnTwo.filter((body) => systemText(body) !== summaryPrompt);
    expect(asked.map(toolNames)).toEqual(asked.map(() => [...own, ...served]));
    // The MCP server's status was recorded at each turn's start, never by the rebuild.
    const statuses = events.map((turnEvents) =>
      turnEvents.flatMap((event) => (event.type === "mcp_status" ? [event.status.state] : [])),
    );
    expect(statuses).toEqual([["starting"], ["ready"]]);
  });
});
