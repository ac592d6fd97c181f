import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { connectMcpServers } from "../src/mcp/index.js";
import { sweepOrphans } from "../src/sandbox/reaper.js";
import { faultServer } from "./support/mcp.js";
import { killProcessesWith, processesWith, survivors } from "./support/processes.js";

/**
 * No MCP server outlives the agent: after `close()`, after `process.exit`, and after a SIGKILL
 * of the agent (then the next agent's sweep ends it, as it does for bash's leftovers). The server
 * here ignores the end of stdin and SIGTERM, the worst case.
 */

const markers: string[] = [];
afterEach(async () => {
  for (const marker of markers.splice(0)) await killProcessesWith(marker);
});

function marker(): string {
  const made = `orphan-marker-${Math.random().toString(36).slice(2)}`;
  markers.push(made);
  return made;
}

const entry = fileURLToPath(new URL("../dist/index.js", import.meta.url));
const parent = fileURLToPath(new URL("./support/mcp-parent.mjs", import.meta.url));

/** Starts an agent process with one stubborn server; resolves once the server is up. */
async function agent(how: "exit" | "wait", mark: string) {
  const child = spawn(process.execPath, [parent, entry, faultServer, how, mark], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const [chunk] = (await once(child.stdout, "data")) as [Buffer];
  expect(chunk.toString()).toBe("up\n");
  return child;
}

describe("MCP server processes", () => {
  it("are gone after close(), a server's own children included", async () => {
    const mark = marker();
    const mcp = await connectMcpServers(
      {
        mcpServers: {
          sh: {
            command: "sh",
            args: ["-c", `sleep 3000 ${mark} & exec node ${faultServer} ignore-stdin ${mark}`],
          },
        },
      },
      { closeGraceMs: 100 },
    );
    expect((await processesWith(mark)).length).toBeGreaterThan(0);
    await mcp.close();
    expect(await survivors([mark])).toEqual([]);
  });

  it("are gone when the agent leaves through process.exit", async () => {
    const mark = marker();
    const child = await agent("exit", mark);
    await once(child, "exit");
    expect(await survivors([mark])).toEqual([]);
  });

  it("left by an agent killed with SIGKILL are ended by the next agent's sweep", async () => {
    const mark = marker();
    const child = await agent("wait", mark);
    child.kill("SIGKILL");
    await once(child, "exit");
    // A SIGKILL runs no exit hook: the server outlives its agent until a sweep.
    expect(await processesWith(mark)).toHaveLength(1);
    sweepOrphans();
    expect(await survivors([mark])).toEqual([]);
  });
});
