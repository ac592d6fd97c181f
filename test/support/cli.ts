import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AnthropicServer,
  type ReplyScript,
  type ServerOptions,
  startAnthropicServer,
  stream,
  turn,
} from "../../src/testing/anthropic-server.js";
import { useCleanup } from "./cleanup.js";
import { useTempDirs } from "./temp.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  bin: Record<string, string>;
};
/** The package's real `bin`, as npm would link it. */
export const bin = fileURLToPath(new URL(`../../${pkg.bin["mini-agent"]}`, import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  input?: string;
  /** Leave stdin open (the test writes to it, or never ends it) instead of writing `input`. */
  openStdin?: boolean;
  /** A file descriptor to give the CLI as its stdout instead of a pipe (e.g. `/dev/full`). */
  stdout?: number;
  /** Called once the process is running, e.g. to send it a signal later. */
  started?: (child: ReturnType<typeof spawn>) => void;
  /** Run the CLI as `nobody` (uid and gid 65534, no groups) through `setpriv`; needs root. */
  asNobody?: boolean;
}

/** Spawns the real `mini-agent` bin and collects its output and exit code. */
export function runBin(args: string[], options: CliOptions): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const node = [process.execPath, bin, ...args];
    const [file = "", ...argv] = options.asNobody
      ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...node]
      : node;
    const child = spawn(file, argv, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", options.stdout ?? "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    // A CLI may end before it reads all its input: the broken pipe is its answer, not the test's.
    child.stdin?.on("error", () => {});
    if (!options.openStdin) child.stdin?.end(options.input ?? "");
    options.started?.(child);
  });
}

/** What a spawned CLI gets in tests: its own home and state folder, a fake key, the local server. */
export function cliEnv(
  home: string,
  baseURL: string,
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    MINI_AGENT_HOME: join(home, "state"),
    ANTHROPIC_API_KEY: "sk-test-key-0123456789",
    ANTHROPIC_BASE_URL: baseURL,
    ...extra,
  };
}

/** Every session file under the CLI's state folder (`cliEnv` puts it at `HOME/state`). */
export async function sessionFiles(home: string): Promise<string[]> {
  const root = join(home, "state", "sessions");
  const files: string[] = [];
  for (const dir of await readdir(root).catch(() => [])) {
    for (const name of await readdir(join(root, dir)))
      if (!name.endsWith(".blobs") && !name.endsWith(".snapshot"))
        files.push(join(root, dir, name));
  }
  return files;
}

/** The records of a session file, parsed line by line. */
export async function sessionRecords(file: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(file, "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The tool results an Anthropic request body carries, in order. */
export const toolResults = (body: { messages?: unknown }) =>
  ((body.messages ?? []) as { content: Record<string, unknown>[] | string }[])
    .flatMap((message) => (typeof message.content === "string" ? [] : message.content))
    .filter((block) => block.type === "tool_result")
    .map((block) => ({ id: block.tool_use_id, content: block.content, isError: block.is_error }));

/** The system prompt an Anthropic request body carries, its blocks joined. */
export const systemText = (body: { system?: unknown } | undefined): string =>
  typeof body?.system === "string"
    ? body.system
    : ((body?.system ?? []) as { text: string }[]).map((block) => block.text).join("");

export interface CliSetup {
  server: AnthropicServer;
  workspace: string;
  home: string;
  options: CliOptions;
}

/**
 * For a test file: `setup(script, serverOptions?)` starts a local Messages API server with that
 * script and makes a fresh workspace and home, all removed after each test.
 */
export function useCliSetup(): (
  script: ReplyScript[],
  serverOptions?: ServerOptions,
) => Promise<CliSetup> {
  const tempDir = useTempDirs();
  const track = useCleanup();
  return async (script, serverOptions) => {
    const server = track(await startAnthropicServer(script, serverOptions));
    const workspace = await tempDir();
    const home = await tempDir();
    return { server, workspace, home, options: { cwd: workspace, env: cliEnv(home, server.url) } };
  };
}

/**
 * Environment that makes the `write`-th write to a session file fail with `code` (1 is the
 * header), through a module preloaded into the real bin: a disk that fills up mid-session.
 */
export function failingSessionWrites(write: number, code = "ENOSPC"): NodeJS.ProcessEnv {
  const preload = fileURLToPath(new URL("./failing-session-writes.mjs", import.meta.url));
  return {
    NODE_OPTIONS: `--import ${preload}`,
    MINI_AGENT_TEST_FAIL_WRITE: String(write),
    MINI_AGENT_TEST_FAIL_CODE: code,
  };
}

/**
 * Environment that makes the file system of every path under `folder` look nearly full (`free`
 * bytes), through a module preloaded into the real bin.
 */
export function smallDisk(folder: string, free: number): NodeJS.ProcessEnv {
  const preload = fileURLToPath(new URL("./small-disk.mjs", import.meta.url));
  return {
    NODE_OPTIONS: `--import ${preload}`,
    MINI_AGENT_TEST_SMALL_DISK: folder,
    MINI_AGENT_TEST_FREE_BYTES: String(free),
  };
}

/** The id of the one session under `home` (its file's name). */
export async function sessionId(home: string): Promise<string> {
  const [file] = (await sessionFiles(home)).filter((path) => path.endsWith(".jsonl"));
  return basename(file ?? "", ".jsonl");
}

/** A model's script of one bash call with `command` (id `b1`), then the answer "done". */
export const bashThenDone = (command: string) => [
  stream(turn({ calls: [{ id: "b1", name: "bash", input: { command } }] })),
  stream(turn({ text: ["done"] })),
];
