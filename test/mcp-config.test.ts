// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the tests are about ${VAR} references in configuration values
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import {
  expandServer,
  mergeMcpServers,
  parseMcpConfig,
  parseMcpConfigText,
  splitByTrust,
  trustEntriesOf,
} from "../src/mcp/config.js";
import { canonicalJson, loadTrust } from "../src/trust/trust.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();

const file = "/home/u/proj/.mcp.json";

describe("MCP configuration", () => {
  it("reads stdio and http servers, each with the hash of its entry as written", () => {
    const stdio = {
      command: "npx",
      args: ["-y", "srv"],
      env: { TOKEN: "${GH_TOKEN}" },
      cwd: "sub",
    };
    const http = { type: "http", url: "https://x.test/mcp", headers: { A: "${KEY:-none}" } };
    const parsed = parseMcpConfig({ mcpServers: { gh: stdio, web: http } }, file);
    expect(parsed).toEqual({
      servers: [
        { name: "gh", file, entry: stdio, hash: contentHash(canonicalJson(stdio)) },
        { name: "web", file, entry: http, hash: contentHash(canonicalJson(http)) },
      ],
      problems: [],
    });
  });

  it("keeps the valid servers and gives one line per bad one, naming the file, server and field", () => {
    const parsed = parseMcpConfig(
      {
        mcpServers: {
          ok: { command: "srv" },
          noCommand: { args: ["x"] },
          badArgs: { command: "srv", args: "x y" },
          badEnv: { command: "srv", env: { A: 1 } },
          extra: { command: "srv", shell: true },
          badTimeout: { type: "http", url: "http://x", timeout: 0.5 },
          sse: { type: "sse", url: "http://x" },
          noUrl: { type: "http" },
          "bad name": { command: "srv" },
          a__b: { command: "srv" },
          list: ["srv"],
        },
      },
      file,
    );
    expect(parsed.servers.map((server) => server.name)).toEqual(["ok"]);
    expect(parsed.problems).toEqual([
      `${file}: server "noCommand": command is required`,
      `${file}: server "badArgs": args must be an array of strings`,
      `${file}: server "badEnv": env.A must be an object of strings`,
      `${file}: server "extra": shell is not a known field`,
      `${file}: server "badTimeout": timeout must be a positive whole number of milliseconds`,
      `${file}: server "sse": type must be "stdio" or "http" (Streamable HTTP), not "sse"`,
      `${file}: server "noUrl": url is required`,
      `${file}: server "bad name": the name may hold only letters, digits, - and single _`,
      `${file}: server "a__b": the name may hold only letters, digits, - and single _`,
      `${file}: server "list": must be an object`,
    ]);
  });

  it("says in one line what is wrong with the file as a whole", () => {
    expect(parseMcpConfigText("{ torn", file).problems).toEqual([
      expect.stringMatching(/^\/home\/u\/proj\/\.mcp\.json: not valid JSON \(.*\)$/),
    ]);
    expect(parseMcpConfigText("[]", file).problems).toEqual([`${file}: must be a JSON object`]);
    expect(parseMcpConfigText('{"mcpServers": 3}', file).problems).toEqual([
      `${file}: mcpServers must be an object`,
    ]);
    expect(parseMcpConfigText("{}", file)).toEqual({ servers: [], problems: [] });
  });

  it("expands ${VAR} and ${VAR:-default} in env, headers and url only", () => {
    const env = { HOME_URL: "https://h.test", KEY: "k1", EMPTY: "" };
    const stdio = {
      command: "${KEY}",
      args: ["${KEY}"],
      env: { A: "${KEY}", B: "x-${MISSING:-d}-y", C: "${EMPTY:-fallback}", D: "${EMPTY}" },
    };
    expect(expandServer(stdio, env)).toEqual({
      ok: true,
      entry: {
        command: "${KEY}",
        args: ["${KEY}"],
        env: { A: "k1", B: "x-d-y", C: "fallback", D: "" },
      },
    });
    const http = {
      type: "http" as const,
      url: "${HOME_URL}/mcp",
      headers: { Auth: "Bearer ${KEY}" },
    };
    expect(expandServer(http, env)).toEqual({
      ok: true,
      entry: { type: "http", url: "https://h.test/mcp", headers: { Auth: "Bearer k1" } },
    });
  });

  it("fails the server, naming the field, when a variable is unset or a reference is broken", () => {
    expect(expandServer({ command: "s", env: { TOKEN: "${GH_TOKEN}" } }, {})).toEqual({
      ok: false,
      reason: "env.TOKEN: the variable GH_TOKEN is not set",
    });
    expect(expandServer({ type: "http", url: "http://x/${HOST" }, {})).toEqual({
      ok: false,
      reason: "url: ${ without a variable name and a closing }",
    });
  });

  it("merges --mcp-config over project over user, with a warning per shadowed server", () => {
    const server = (name: string, from: string) =>
      parseMcpConfig({ mcpServers: { [name]: { command: from } } }, from).servers;
    const merged = mergeMcpServers([
      { servers: [...server("a", "flag.json")] },
      { servers: [...server("a", ".mcp.json"), ...server("b", ".mcp.json")] },
      { servers: [...server("b", "user.json"), ...server("c", "user.json")] },
    ]);
    expect(merged.servers.map(({ name, file }) => [name, file])).toEqual([
      ["a", "flag.json"],
      ["b", ".mcp.json"],
      ["c", "user.json"],
    ]);
    expect(merged.warnings).toEqual([
      'mcp server "a" of .mcp.json is shadowed by the one of flag.json',
      'mcp server "b" of user.json is shadowed by the one of .mcp.json',
    ]);
  });

  it("starts only project servers trusted with their current entry; an edited one is untrusted again", async () => {
    const trust = await loadTrust(await tempDir(), await tempDir());
    const before = parseMcpConfig(
      { mcpServers: { a: { command: "a" }, b: { command: "b" } } },
      file,
    );
    expect(splitByTrust(before.servers, trust).trusted).toEqual([]);
    await trust.trust(trustEntriesOf(before.servers));
    expect(splitByTrust(before.servers, trust).trusted.map((s) => s.name)).toEqual(["a", "b"]);
    // Key order and layout do not matter; a changed argument does.
    const after = parseMcpConfigText(
      '{"mcpServers": {"a": {"command": "a"}, "b": {"args": ["--evil"], "command": "b"}}}',
      file,
    );
    const split = splitByTrust(after.servers, trust);
    expect(split.trusted.map((s) => s.name)).toEqual(["a"]);
    expect(split.untrusted.map((s) => s.name)).toEqual(["b"]);
  });
});
