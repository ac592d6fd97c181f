import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { options } from "../src/cli/flags.js";
import { usage } from "../src/cli/help.js";

/**
 * `mini-agent --help` names every flag the parser takes and every command the CLI has, and
 * docs/cli.md's table names every flag too: a flag or command added without its line fails here.
 */

const commands = ["rules", "export", "rewind", "skills", "config", "trust", "mcp", "acp"];

describe("the help", () => {
  it("names every flag the parser accepts", () => {
    const missing = Object.keys(options).filter((flag) => !usage.includes(`--${flag}`));
    expect(missing).toEqual([]);
  });

  it("names every command", () => {
    const missing = commands.filter((command) => !usage.includes(`mini-agent ${command}`));
    expect(missing).toEqual([]);
  });

  it("has docs/cli.md name every flag too", async () => {
    const page = await readFile(new URL("../docs/cli.md", import.meta.url), "utf8");
    const missing = Object.keys(options).filter((flag) => !page.includes(`--${flag}`));
    expect(missing).toEqual([]);
  });
});
