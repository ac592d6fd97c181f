import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The reference server's entry point (its `bin`), run with this Node: `node <bin> stdio`. */
export function everythingServer(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@modelcontextprotocol/server-everything/package.json");
  const { bin } = require(pkg) as { bin: Record<string, string> };
  return join(dirname(pkg), bin["mcp-server-everything"] ?? "");
}

/** A fault server of test/fixtures/mcp-fault-server.mjs, started as `node <script> <mode>`. */
export const faultServer = fileURLToPath(
  new URL("../fixtures/mcp-fault-server.mjs", import.meta.url),
);
