import { execFile, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as acp from "@agentclientprotocol/sdk";
import { Value } from "@sinclair/typebox/value";
import { transform } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InputLineSchema } from "../src/cli/stream-json-protocol.js";
import { parseMcpConfigText } from "../src/mcp/config.js";
import { Session } from "../src/session/session.js";
import { startAnthropicServer, stream, turn } from "../src/testing/anthropic-server.js";
import { useCleanup } from "./support/cleanup.js";
import { realSandbox } from "./support/sandbox.js";
import { checkLine } from "./support/stream-json.js";
import { useTempDirs } from "./support/temp.js";
import { watchdog } from "./support/until.js";

/**
 * Every code block of the README and the `docs/` pages runs here, as written: shell blocks with
 * the built CLI and `mini-agent-testing` on PATH and a strict local server as the provider,
 * TypeScript blocks through the built package, JSON checked for what it claims to be. A block
 * that needs a real provider key is marked `<!-- not run: REASON -->` just before it, and the
 * list of them below is the one place that names them all. `text` blocks show output.
 */

const root = fileURLToPath(new URL("..", import.meta.url));
const run = promisify(execFile);
const tempDir = useTempDirs();
const track = useCleanup();

interface Block {
  where: string;
  lang: string;
  code: string;
  notRun?: string;
}

/** The fenced blocks of a Markdown text, with the `not run` mark before each, if any. */
function codeBlocks(text: string, file: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)$/.exec(lines[i] ?? "");
    if (!open) continue;
    const end = lines.indexOf("```", i + 1);
    if (end === -1) throw new Error(`${file}:${i + 1}: a code block is not closed`);
    const before = lines.slice(0, i).findLast((line) => line.trim() !== "") ?? "";
    const mark = /^<!-- not run: (.+) -->$/.exec(before);
    blocks.push({
      where: `${file}:${i + 1}`,
      lang: open[1] ?? "",
      code: `${lines.slice(i + 1, end).join("\n")}\n`,
      ...(mark && { notRun: mark[1] }),
    });
    i = end;
  }
  return blocks;
}

const pages = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];
const blocks = pages.flatMap((page) => codeBlocks(readFileSync(join(root, page), "utf8"), page));
const runnable = (lang: string) => blocks.filter((block) => block.lang === lang && !block.notRun);
const examples = readdirSync(join(root, "examples")).map((name) =>
  readFileSync(join(root, "examples", name), "utf8"),
);

const sandboxed = await realSandbox();

let bin = "";
beforeAll(async () => {
  // The package's bins as `npm link` puts them on PATH.
  bin = await mkdtemp(join(tmpdir(), "mini-agent-bin-"));
  const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as {
    bin: Record<string, string>;
  };
  for (const [name, file] of Object.entries(pkg.bin)) {
    await writeFile(
      join(bin, name),
      `#!/bin/sh\nexec "${process.execPath}" "${join(root, file)}" "$@"\n`,
    );
    await chmod(join(bin, name), 0o755);
  }
});
afterAll(() => rm(bin, { recursive: true, force: true }));

/** A folder to run a block in, a home, and a strict server that answers every request "ok". */
async function place() {
  const dir = await tempDir();
  const workspace = join(dir, "work");
  const home = join(dir, "home");
  await mkdir(workspace);
  await mkdir(home);
  const server = track(
    await startAnthropicServer(Array.from({ length: 20 }, () => stream(turn({ text: ["ok"] })))),
  );
  const env: NodeJS.ProcessEnv = {
    PATH: `${bin}:${process.env.PATH}`,
    HOME: home,
    MINI_AGENT_HOME: join(home, "state"),
    ANTHROPIC_API_KEY: "sk-docs-example-0123456789",
    ANTHROPIC_BASE_URL: server.url,
  };
  return { workspace, home, env, server };
}

/** Starts an editor's agent entry and sends one prompt through the ACP SDK's client side. */
async function acpPrompt(
  entry: { command: string; args: string[] },
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<acp.PromptResponse> {
  const child = spawn(entry.command, entry.args, { cwd, env, stdio: ["pipe", "pipe", "inherit"] });
  const closed = new Promise((resolve) => child.on("close", resolve));
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin),
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const answer = await acp
    .client({ name: "docs-editor" })
    .onNotification("session/update", () => undefined)
    .connectWith(stream, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      const { sessionId } = await agent.request("session/new", { cwd, mcpServers: [] });
      return await agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "hi" }],
      });
    });
  child.stdin.end();
  await closed;
  return answer;
}

/** Runs a shell script to its end (at most `seconds`): its exit code and output. */
function shell(script: string, cwd: string, env: NodeJS.ProcessEnv, seconds = 20) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", ["-e", "-o", "pipefail", "-c", script], {
      cwd,
      env,
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const disarm = watchdog(seconds * 1000, () => process.kill(-(child.pid ?? 0), "SIGKILL"));
    child.on("close", (code) => {
      disarm();
      resolve({ code, stdout, stderr });
    });
  });
}

/** A block written as a transcript: `$ command` lines, each followed by what it prints. */
function transcript(code: string): { command: string; output: string }[] | undefined {
  if (!code.startsWith("$ ")) return undefined;
  const steps: { command: string; output: string }[] = [];
  for (const line of code.trimEnd().split("\n")) {
    if (line.startsWith("$ ")) steps.push({ command: line.slice(2), output: "" });
    else if (steps.at(-1)) (steps.at(-1) as { output: string }).output += `${line}\n`;
  }
  return steps;
}

describe("the documentation's code blocks", () => {
  it("are read with their language and the mark before them", () => {
    const text =
      "a\n\n<!-- not run: needs a provider key -->\n```sh\nx\n```\n\n```text\ny\nz\n```\n";
    expect(codeBlocks(text, "p.md")).toEqual([
      { where: "p.md:4", lang: "sh", code: "x\n", notRun: "needs a provider key" },
      { where: "p.md:8", lang: "text", code: "y\nz\n" },
    ]);
    expect(() => codeBlocks("```sh\nx\n", "q.md")).toThrow("q.md:1: a code block is not closed");
  });

  it("link only to files and headings that exist", () => {
    const slug = (heading: string) =>
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, "")
        .replaceAll(" ", "-");
    const headings = (page: string) =>
      readFileSync(join(root, page), "utf8")
        .replace(/^```[\s\S]*?^```$/gm, "")
        .split("\n")
        .flatMap((line) => (/^#+ (.+)$/.exec(line)?.[1] ? [slug(line.replace(/^#+ /, ""))] : []));
    const broken = pages.flatMap((page) =>
      [...readFileSync(join(root, page), "utf8").matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1] ?? "")
        .filter((link) => !/^https?:/.test(link))
        .filter((link) => {
          const [file = "", anchor] = link.split("#");
          const target = file === "" ? page : join(dirname(page), file);
          if (!existsSync(join(root, target))) return true;
          return (
            anchor !== undefined && target.endsWith(".md") && !headings(target).includes(anchor)
          );
        })
        .map((link) => `${page}: ${link}`),
    );
    expect(broken).toEqual([]);
  });

  it("are each of a known kind", () => {
    // Lua (an editor's configuration) is never run here: each such block says why. Python (a hook) is compiled.
    const kinds = new Set(["sh", "ts", "json", "jsonl", "text", "lua", "py"]);
    expect(blocks.filter((block) => !kinds.has(block.lang)).map((block) => block.where)).toEqual(
      [],
    );
  });

  it("run in CI, but for these, each marked with why", () => {
    // The one list of blocks not run: each needs a real provider key (or a server at a fixed port).
    expect(
      blocks
        .filter((block) => block.notRun)
        .map((block) => `${block.where.split(":")[0]}: ${block.notRun}`),
    ).toEqual([
      "README.md: needs a provider key (and npm test is what runs the examples)",
      "docs/configuration.md: needs a provider key or a model server on these ports",
      "docs/editors.md: needs an editor",
      "docs/editors.md: needs an editor",
      "docs/internals.md: the project's own commands; CI runs npm run check and npm test itself",
      "docs/mcp.md: a sketch around your own client and tools; it starts the reference server with npx, which needs the network",
    ]);
  });

  for (const block of runnable("sh")) {
    it(`${block.where} (sh) runs`, async () => {
      const { workspace, env } = await place();
      const steps = transcript(block.code);
      if (!steps) {
        const result = await shell(block.code, workspace, env);
        expect(result, result.stderr).toMatchObject({ code: 0 });
        return;
      }
      if (!sandboxed && block.code.includes("sandbox")) return; // the sandbox's line differs
      for (const step of steps) {
        const result = await shell(step.command, workspace, env);
        expect({ command: step.command, stdout: result.stdout }).toEqual({
          command: step.command,
          stdout: step.output,
        });
      }
    });
  }

  /** The quick start, run as written: the scripted model's answer reaches stdout. */
  it("README's quick start answers from the script, without a key", async () => {
    const [quick] = codeBlocks(readFileSync(join(root, "README.md"), "utf8"), "README.md").filter(
      (block) => block.code.includes("mini-agent-testing serve"),
    );
    const { workspace, env } = await place();
    const { ANTHROPIC_API_KEY: _key, ANTHROPIC_BASE_URL: _url, ...keyless } = env;
    const result = await shell(quick?.code ?? "false", workspace, keyless);
    expect(result).toEqual({
      code: 0,
      stdout: "hello.txt says hello.\n",
      stderr: expect.stringContaining("✓ read hello.txt"),
    });
  });

  for (const block of runnable("ts")) {
    it(`${block.where} (ts) runs through the built package`, async () => {
      if (examples.includes(block.code)) return; // an examples/ file: vitest runs it as it is
      const { workspace, home, env, server } = await place();
      await mkdir(join(workspace, "node_modules"));
      await symlink(root, join(workspace, "node_modules", "mini-agent"));
      const { code } = await transform(block.code, { loader: "ts", format: "esm" });
      await writeFile(join(workspace, "example.mjs"), code);
      const result = await run(process.execPath, ["example.mjs"], {
        cwd: workspace,
        env,
        timeout: 20_000,
      });
      expect(result.stderr).toBe("");
      expect(result.stdout).not.toBe("");
      expect(server.rejections).toEqual([]);
      // A session the example wrote reopens with the prompt it began with.
      const sessions = join(home, ".my-agent", "sessions");
      const written = (await readdir(sessions).catch(() => [])).filter((name) =>
        name.endsWith(".jsonl"),
      );
      expect(written.length > 0).toBe(block.code.includes("Session.create("));
      for (const name of written) {
        const loaded = await Session.open(join(sessions, name));
        await loaded.session.close();
        expect(loaded.messages[0]).toMatchObject({ role: "user" });
        expect(loaded.messages[0]?.content).toMatch(/^(Fix|Write)/);
      }
    });
  }

  it("TypeScript blocks type-check as strictly as the project's own code", async () => {
    const dir = await tempDir();
    const typed = runnable("ts").filter((block) => !examples.includes(block.code));
    for (const [at, block] of typed.entries())
      await writeFile(join(dir, `block${at}.ts`), block.code);
    await symlink(join(root, "node_modules"), join(dir, "node_modules"));
    await writeFile(join(dir, "package.json"), '{ "type": "module" }');
    const project = JSON.parse(await readFile(join(root, "tsconfig.json"), "utf8")) as {
      compilerOptions: Record<string, unknown>;
    };
    const paths = {
      "mini-agent": [join(root, "dist/index.d.ts")],
      "mini-agent/testing": [join(root, "dist/testing/index.d.ts")],
    };
    await writeFile(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { ...project.compilerOptions, noEmit: true, paths },
        include: ["*.ts"],
      }),
    );
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    const checked = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir }).catch(
      (error: { stdout: string }) => ({ stdout: error.stdout }),
    );
    expect(typed.length).toBeGreaterThan(0);
    expect(checked.stdout).toBe("");
  }, 60_000);

  for (const block of runnable("json")) {
    it(`${block.where} (json) is what it says`, async () => {
      const value = JSON.parse(block.code) as {
        rules?: unknown;
        mcpServers?: unknown;
        agent_servers?: Record<string, { command: string; args: string[] }>;
      };
      const { workspace, env } = await place();
      if (value.agent_servers !== undefined) {
        // An editor's agent entry: started as the editor starts it, it answers a prompt over ACP.
        for (const entry of Object.values(value.agent_servers))
          expect(await acpPrompt(entry, workspace, env)).toEqual({ stopReason: "end_turn" });
        return;
      }
      if (
        block.where.startsWith("docs/configuration.md") ||
        block.where.startsWith("docs/hooks.md")
      ) {
        // A configuration file: mini-agent runs with it as the user's file.
        const file = (await shell("mini-agent config path", workspace, env)).stdout.trim();
        await mkdir(join(file, ".."), { recursive: true });
        await writeFile(file, block.code);
        const shown = await shell("mini-agent config", workspace, env);
        expect(shown, shown.stderr).toMatchObject({ code: 0 });
        expect(shown.stdout).toContain(`(${file})`);
        return;
      }
      if (value.mcpServers !== undefined) {
        // MCP servers as a configuration file holds them: every server valid.
        const parsed = parseMcpConfigText(block.code, block.where);
        expect(parsed.problems).toEqual([]);
        expect(parsed.servers.length).toBe(Object.keys(value.mcpServers as object).length);
        return;
      }
      if (value.rules === undefined) {
        // A script of rounds for mini-agent-testing: it must be served.
        await writeFile(join(workspace, "rounds.json"), block.code);
        const served = await shell(
          "mini-agent-testing serve --script rounds.json & sleep 1; kill $!",
          workspace,
          env,
        );
        expect(served.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\n$/);
        return;
      }
      // A rules file: mini-agent reads it from where `mini-agent rules` says it lives.
      const empty = await shell("mini-agent rules", workspace, env);
      const file = /\((.+rules\.json)\)/.exec(empty.stdout)?.[1] ?? "";
      await mkdir(join(file, ".."), { recursive: true });
      await writeFile(file, block.code);
      const listed = await shell("mini-agent rules", workspace, env);
      const shown = (value.rules as { effect: string; words: string[]; exact?: boolean }[]).map(
        (rule, at) =>
          `${at + 1}  ${rule.effect} ${rule.words.join(" ")}${rule.exact ? " (exactly)" : ""}\n`,
      );
      expect(listed).toEqual({ code: 0, stdout: shown.join(""), stderr: "" });
    });
  }

  for (const block of runnable("py")) {
    it(`${block.where} (py) is a Python program that compiles`, async () => {
      const dir = await tempDir();
      await writeFile(join(dir, "hook.py"), block.code);
      const compiled = await run("python3", ["-m", "py_compile", join(dir, "hook.py")]);
      expect(compiled.stderr).toBe("");
    });
  }

  for (const block of runnable("jsonl")) {
    it(`${block.where} (jsonl) holds stream-json lines of the protocol`, () => {
      for (const line of block.code.trimEnd().split("\n")) {
        const value = JSON.parse(line) as { version?: number };
        if (value.version === undefined)
          expect(Value.Check(InputLineSchema, value), line).toBe(true);
        else checkLine(value, line);
      }
    });
  }
});
