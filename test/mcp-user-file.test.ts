// biome-ignore-all lint/suspicious/noTemplateCurlyInString: configuration values with ${VAR} references
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

  it("takes a ${VAR} reference in a url's password or token= query: a reference is not a key", async () => {
    const { home, options } = await setup([]);
    await mkdir(join(home, "state"), { recursive: true });
    const file = join(home, "state", "mcp.json");
    for (const url of [
      "http://admin:${MCP_PW}@127.0.0.1:9/mcp",
      "http://127.0.0.1:9/mcp?token=${MCP_TOK}",
    ]) {
      await writeFile(file, servers({ type: "http", url }));
      const list = await runBin(["mcp", "list"], options);
      expect({ code: list.code, head: list.stdout.split("\n")[0] }).toEqual({
        code: 0,
        head: `mine (user ${file}, yours): ${url}`,
      });
    }
    // A default written in the file is a value of the file: a key there is still refused.
    await writeFile(
      file,
      servers({ type: "http", url: "http://admin:${MCP_PW:-hunter2hunter2}@127.0.0.1:9/mcp" }),
    );
    expect((await runBin(["mcp", "list"], options)).stderr).toContain(
      "mcpServers.mine.url looks like an API key",
    );
  });
});
