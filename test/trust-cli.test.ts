import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runBin, useCliSetup } from "./support/cli.js";

/**
 * `mini-agent trust` approves everything of the project that can run code or change what runs:
 * its configuration file, each `.mcp.json` entry and each project skill, listing each one.
 */

const setup = useCliSetup();

describe("mini-agent trust", () => {
  it("trusts the project's MCP servers and skills as well as its configuration file", async () => {
    const { workspace, options } = await setup([]);
    await writeFile(
      join(workspace, ".mcp.json"),
      JSON.stringify({ mcpServers: { local: { type: "http", url: "http://127.0.0.1:9/mcp" } } }),
    );
    const skill = join(workspace, ".agents", "skills", "release");
    await mkdir(skill, { recursive: true });
    await writeFile(
      join(skill, "SKILL.md"),
      "---\nname: release\ndescription: How to cut a release.\n---\nSteps.\n",
    );
    const before = await runBin(["skills"], options);
    expect(before.stdout + before.stderr).toContain("not trusted");

    const trust = await runBin(["trust"], options);
    expect(trust.code).toBe(0);
    expect(trust.stdout).toContain("trusted mcp: local");
    expect(trust.stdout).toContain("trusted skill: release");

    const skills = await runBin(["skills"], options);
    expect(skills.stdout + skills.stderr).not.toContain("not trusted");
    expect(skills.stdout).toContain("release");
    const list = await runBin(["mcp", "list"], options);
    expect(list.stdout).toContain("local (project");
    expect(list.stdout).toContain(", trusted)");
    const again = await runBin(["trust"], options);
    expect(again.stdout).toContain("nothing to trust");
  }, 30_000);
});
