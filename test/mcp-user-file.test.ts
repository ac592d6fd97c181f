import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runBin, useCliSetup } from "./support/cli.js";

/**
 * The user's `mcp.json` in the state folder is read as the user's `config.json` is: a link (a
 * dotfiles manager's) is followed, anything but a regular file is one line and exit 2, and a
 * value that looks like a key is refused with the hint to use the environment.
 */

const setup = useCliSetup();

const servers = (entry: Record<string, unknown>) => JSON.stringify({ mcpServers: { mine: entry } });

describe("the user's mcp.json", () => {
  it("follows a link to the real file", async () => {
    const { home, options } = await setup([]);
    await mkdir(join(home, "state"), { recursive: true });
    await writeFile(join(home, "dotfiles-mcp.json"), servers({ command: "mine-server" }));
    await symlink(join(home, "dotfiles-mcp.json"), join(home, "state", "mcp.json"));
    const list = await runBin(["mcp", "list"], options);
    expect(list.stdout).toContain("mine (user ");
  });

  it("is one line and exit 2 when it is a folder", async () => {
    const { home, options } = await setup([]);
    await mkdir(join(home, "state", "mcp.json"), { recursive: true });
    const list = await runBin(["mcp", "list"], options);
    expect(list).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: ${join(home, "state", "mcp.json")}: is not a regular file\n`,
    });
  });

  it("refuses a value that looks like a key", async () => {
    const { home, options } = await setup([]);
    await mkdir(join(home, "state"), { recursive: true });
    const token = `ghp_${"A".repeat(36)}`;
    await writeFile(
      join(home, "state", "mcp.json"),
      servers({ command: "mine-server", args: ["--token", token] }),
    );
    const list = await runBin(["mcp", "list"], options);
    expect(list.code).toBe(2);
    expect(list.stdout).toBe("");
    expect(list.stderr).toContain("mcpServers.mine.args[1] looks like an API key");
    expect(list.stderr).not.toContain(token);
  });
});
