import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everythingServer } from "./support/mcp.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));
/**
 * The documentation: the README and every `docs/` page it links, as one text. "Documented" means
 * in one of them (the contract's rule).
 */
async function documentation(): Promise<string> {
  const readme = await readFile(join(root, "README.md"), "utf8");
  const pages = [
    ...new Set([...readme.matchAll(/\]\((docs\/[\w-]+\.md)[#)]/g)].map((m) => m[1] ?? "")),
  ];
  const texts = await Promise.all(pages.map((page) => readFile(join(root, page), "utf8")));
  return [readme, ...texts].join("\n");
}

interface Listed {
  values: string[];
  types: string[];
}

/** The names the documentation lists for an entry point, between its `exports:` markers. */
function documentedExports(text: string, entry: string): Listed {
  const start = text.indexOf(`<!-- exports: ${entry} -->`);
  const end = text.indexOf("<!-- /exports -->", start);
  if (start === -1 || end === -1)
    throw new Error(`the documentation lists no exports for ${entry}`);
  const listed: Listed = { values: [], types: [] };
  for (const row of text.slice(start, end).split("\n")) {
    const cells = row.split("|").map((cell) => cell.trim());
    const names = [...(cells[1] ?? "").matchAll(/`([\w$]+)`/g)].map((match) => match[1] ?? "");
    if (names.length === 0) continue;
    (cells[2] === "type" ? listed.types : listed.values).push(...names);
  }
  return { values: listed.values.sort(), types: listed.types.sort() };
}

/** Every name an entry's declaration file re-exports (`export { a, type B, c as d } from …`). */
function declaredExports(dts: string): string[] {
  return [...dts.matchAll(/export (?:type )?\{([^}]*)\}/g)]
    .flatMap((match) => (match[1] ?? "").split(","))
    .map(
      (name) =>
        name
          .trim()
          .replace(/^type /, "")
          .split(" as ")
          .at(-1) ?? "",
    )
    .filter((name) => name !== "")
    .sort();
}

let dir = "";
let installed = "";

// The package as npm would install it: packed (its `files` and `exports`), unpacked into a
// node_modules folder beside its dependencies, then imported by name from outside the repo.
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "mini-agent-pack-")));
  const { stdout } = await run(
    "npm",
    ["pack", "--ignore-scripts", "--json", "--pack-destination", dir],
    {
      cwd: root,
    },
  );
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  installed = join(dir, "node_modules", "mini-agent");
  await mkdir(installed, { recursive: true });
  await run("tar", [
    "-xzf",
    join(dir, packed?.filename ?? ""),
    "-C",
    installed,
    "--strip-components=1",
  ]);
  const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  for (const dependency of Object.keys(pkg.dependencies)) {
    const link = join(dir, "node_modules", dependency);
    await mkdir(dirname(link), { recursive: true });
    await symlink(join(root, "node_modules", dependency), link);
  }
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

/** What a program outside the repo gets from `import(specifier)`: its names, sorted. */
async function importedNames(specifier: string): Promise<string[]> {
  const probe = join(dir, "probe.mjs");
  await writeFile(
    probe,
    `console.log(JSON.stringify(Object.keys(await import(${JSON.stringify(specifier)})).sort()));`,
  );
  const { stdout } = await run(process.execPath, [probe]);
  return JSON.parse(stdout) as string[];
}

describe("the built package's exports", () => {
  it("reads the documentation's lists, and fails on a name they do not have", async () => {
    const listed = documentedExports(await documentation(), "mini-agent");
    expect(listed.values).toContain("runAgent");
    expect(listed.types).toContain("Message");
    const text =
      "<!-- exports: x -->\n| `a`, `b` | function | |\n| `C` | type | |\n<!-- /exports -->";
    expect(documentedExports(text, "x")).toEqual({ values: ["a", "b"], types: ["C"] });
    expect(() => documentedExports(text, "y")).toThrow("the documentation lists no exports for y");
  });

  for (const [entry, dts] of [
    ["mini-agent", "dist/index.d.ts"],
    ["mini-agent/testing", "dist/testing/index.d.ts"],
  ] as const) {
    it(`${entry} exports exactly the names the README's pages document`, async () => {
      const listed = documentedExports(await documentation(), entry);
      expect(await importedNames(entry)).toEqual(listed.values);
      const declared = declaredExports(await readFile(join(installed, dts), "utf8"));
      expect(declared).toEqual([...listed.values, ...listed.types].sort());
    });
  }

  it("connects an MCP server through the built package, and closes it", async () => {
    const probe = join(dir, "mcp.mjs");
    await writeFile(
      probe,
      `import { connectMcpServers } from "mini-agent";
       const server = ${JSON.stringify(everythingServer())};
       const mcp = await connectMcpServers({
         mcpServers: { everything: { command: process.execPath, args: [server, "stdio"] } },
       });
       const echo = mcp.tools().find((tool) => tool.spec.name === "mcp__everything__echo");
       const result = await echo.execute({ message: "from the package" });
       await mcp.close();
       console.log(JSON.stringify({ result, state: mcp.status()[0].state }));`,
    );
    const { stdout } = await run(process.execPath, [probe]);
    expect(JSON.parse(stdout)).toEqual({
      result: { content: "Echo: from the package", isError: false },
      state: "closed",
    });
  });

  it("loads the MCP SDK only when a server is configured", async () => {
    const probe = join(dir, "no-mcp.mjs");
    await writeFile(
      probe,
      `import { register } from "node:module";
       const loaded = [];
       register("data:text/javascript," + encodeURIComponent(
         "export async function resolve(s, c, next) { const r = await next(s, c);" +
         " if (r.url.includes('@modelcontextprotocol')) throw new Error('loaded ' + r.url); return r; }"));
       const agent = await import("mini-agent");
       const none = await agent.connectMcpServers({ mcpServers: {} });
       console.log(JSON.stringify({ tools: none.tools(), status: none.status() }));`,
    );
    const { stdout } = await run(process.execPath, [probe]);
    expect(JSON.parse(stdout)).toEqual({ tools: [], status: [] });
  });

  it("keeps what write and bash change through a SessionRunner, and rewinds it", async () => {
    const workspace = await realpath(await mkdtemp(join(tmpdir(), "mini-agent-rewind-")));
    const probe = join(dir, "rewind.mjs");
    await writeFile(join(workspace, "a.txt"), "before\n");
    await writeFile(join(workspace, "b.txt"), "kept\n");
    await writeFile(
      probe,
      `import { join } from "node:path";
       import {
         applyRewind, createWorkspaceTools, FileChanges, Journal, planRewind, Session,
         SessionRunner, SessionStore,
       } from "mini-agent";
       import { call, done, FakeClient, text } from "mini-agent/testing";
       const workspace = ${JSON.stringify(workspace)};
       const state = join(${JSON.stringify(dir)}, "state");
       let path;
       const create = async () => {
         const session = await Session.create({ dir: join(state, "sessions"), workspace, model: "m" });
         path = session.path;
         return session;
       };
       const journal = new Journal(new SessionStore(state, create));
       const changes = new FileChanges({ root: workspace, stateDir: state });
       const tools = changes.wrap(createWorkspaceTools(workspace, { bash: { sandbox: { mode: "off" } } }));
       const runner = new SessionRunner({
         client: new FakeClient([
           [call("w1", "write", { path: "new.txt", content: "made\\n" }), done],
           [call("b1", "bash", { command: "echo after > a.txt && rm b.txt" }), done],
           [text("done"), done],
         ]),
         beforeToolCall: () => ({ approved: true }),
         journal,
         turn: async () => ({ system: "", tools }),
         info: { model: "m", workspace, sandbox: "off" },
         changes,
       });
       const turn = await runner.runTurn("change things");
       await journal.close();
       const plan = await planRewind({ session: path, workspace, stateDir: state, to: 1 });
       const outcomes = await applyRewind(plan);
       console.log(JSON.stringify({ status: turn.status, outcomes }));`,
    );
    const { stdout } = await run(process.execPath, [probe]);
    expect(JSON.parse(stdout)).toEqual({
      status: "completed",
      outcomes: [
        { kind: "restored", path: "a.txt" },
        { kind: "restored", path: "b.txt" },
        { kind: "deleted", path: "new.txt" },
      ],
    });
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("before\n");
    expect(await readFile(join(workspace, "b.txt"), "utf8")).toBe("kept\n");
    await rm(workspace, { recursive: true, force: true });
  });

  it("throws a provider's failure as the package's ProviderError", async () => {
    const probe = join(dir, "provider-error.mjs");
    await writeFile(
      probe,
      `import { createServer } from "node:net";
       import { AnthropicModelClient, OpenAIResponsesModelClient, ProviderError } from "mini-agent";
       const server = createServer();
       await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
       const url = "http://127.0.0.1:" + server.address().port;
       await new Promise((resolve) => server.close(resolve));
       const options = { apiKey: "k", model: "m", baseURL: url, maxRetries: 0 };
       const failures = [];
       for (const client of [new AnthropicModelClient(options), new OpenAIResponsesModelClient(options)]) {
         try {
           for await (const _ of client.stream({ system: "", messages: [{ role: "user", content: "hi" }], tools: [] }));
         } catch (error) {
           const { name, provider, kind, status, retryable, tooLong } = error;
           failures.push({ isProviderError: error instanceof ProviderError, name, provider, kind, status, retryable, tooLong: tooLong ?? null });
         }
       }
       console.log(JSON.stringify(failures));`,
    );
    const { stdout } = await run(process.execPath, [probe]);
    const failure = { isProviderError: true, name: "ProviderError", kind: "connection" };
    const rest = { retryable: false, tooLong: null };
    expect(JSON.parse(stdout)).toEqual([
      { ...failure, provider: "anthropic", ...rest },
      { ...failure, provider: "openai-responses", ...rest },
    ]);
  });

  it("ships the stream-json schema under its documented name", async () => {
    const probe = join(dir, "schema.mjs");
    await writeFile(
      probe,
      `import { createRequire } from "node:module";
       const schema = createRequire(import.meta.url)("mini-agent/stream-json.schema.json");
       console.log(JSON.stringify(schema));`,
    );
    const { stdout } = await run(process.execPath, [probe]);
    const shipped = await readFile(join(root, "dist", "stream-json.schema.json"), "utf8");
    expect(JSON.parse(stdout)).toEqual(JSON.parse(shipped));
  });

  it("shows on the testing-kit page the kit example that CI runs, word for word", async () => {
    const example = await readFile(join(root, "examples", "custom-tool.test.ts"), "utf8");
    const page = await readFile(join(root, "docs", "testing-kit.md"), "utf8");
    expect(page).toContain(`\`\`\`ts\n${example}\`\`\``);
    expect(await documentation()).toContain(page);
  });
});
