import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { bin } from "./cli.js";

/** `script` gives the CLI a pseudo-terminal, so it runs as it does for a person at a terminal. */
export const hasScript = existsSync("/usr/bin/script");

export interface Conversation {
  code: number | null;
  /** Everything the terminal showed: stdout and stderr as one stream, with its escape sequences. */
  screen: string;
}

/**
 * Drives the CLI in a pty: waits for each expected text on screen (each after the previous one),
 * then types the answer. Fails, showing the screen, when an expected text does not come.
 */
export function converse(
  env: NodeJS.ProcessEnv,
  cwd: string,
  steps: [string, string][],
  args: string[] = [],
): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const command = [process.execPath, bin, ...args].join(" ");
    const child = spawn("script", ["-q", "-e", "-c", command, "/dev/null"], {
      cwd,
      env: { ...env, TERM: "dumb" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    let step = 0;
    let from = 0;
    const advance = () => {
      const next = steps[step];
      if (!next) return;
      const at = screen.indexOf(next[0], from);
      if (at === -1) return;
      from = at + next[0].length;
      step++;
      child.stdin.write(next[1]);
      advance();
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no ${JSON.stringify(steps[step]?.[0])} on screen:\n${screen}`));
    }, 15_000);
    child.stdout.on("data", (chunk: Buffer) => {
      screen += chunk.toString();
      advance();
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (step < steps.length) {
        reject(new Error(`exited ${code} before ${JSON.stringify(steps[step]?.[0])}:\n${screen}`));
      } else resolve({ code, screen });
    });
  });
}
