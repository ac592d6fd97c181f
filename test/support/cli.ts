import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

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
  /** Called once the process is running, e.g. to send it a signal later. */
  started?: (child: ReturnType<typeof spawn>) => void;
}

/** Spawns the real `mini-agent` bin and collects its output and exit code. */
export function runBin(args: string[], options: CliOptions): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? "");
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
