import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { boundaryLine } from "../../src/cli/terminal/banner.js";
import { bin } from "./cli.js";
import { watchdog } from "./until.js";

/**
 * `script` gives the CLI a pseudo-terminal, so it runs as it does for a person at a terminal.
 * Tests without one are skipped on a machine that lacks it, never in CI (`CI=true`): there a
 * missing `script` fails them.
 */
export const hasScript = existsSync("/usr/bin/script") || process.env.CI === "true";

export interface Conversation {
  code: number | null;
  /** Everything the terminal showed: stdout and stderr as one stream, with its escape sequences. */
  screen: string;
}

/**
 * The lines a terminal shows after `raw`, for text drawn without cursor escapes (as on
 * `TERM=dumb`): a carriage return goes back to the start of the line, so what follows overwrites
 * it; a newline goes down a line; a backspace back a column; escape sequences are dropped. Blanks
 * at the end of a line and empty lines at the end are not kept.
 */
export function screenOf(raw: string): string[] {
  const rows: string[][] = [[]];
  let row = 0;
  let col = 0;
  const escapes = new RegExp(`${String.fromCharCode(27)}\\[[\\d;?]*[A-Za-z]`, "g");
  for (const char of raw.replace(escapes, "")) {
    if (char === "\r") col = 0;
    else if (char === "\n") {
      row++;
      rows[row] ??= [];
    } else if (char === "\b") col = Math.max(0, col - 1);
    else {
      const line = rows[row] ?? [];
      while (line.length < col) line.push(" ");
      line[col++] = char;
      rows[row] = line;
    }
  }
  const lines = rows.map((line) => line.join("").trimEnd());
  while (lines.at(-1) === "") lines.pop();
  return lines;
}

/**
 * Drives the CLI in a pty: waits for each expected text on screen (each after the previous one),
 * then types the answer. Fails, showing the screen, when an expected text does not come.
 */
export function converse(
  /** `TERM` is `dumb` unless given here. */
  env: NodeJS.ProcessEnv,
  cwd: string,
  steps: [string, string][],
  args: string[] = [],
): Promise<Conversation> {
  // 200 columns, so no line of the test's is cut or wrapped at the width.
  const command = ["stty cols 200 rows 50;", "exec", process.execPath, bin, ...args].join(" ");
  return converseWith(command, env, cwd, steps);
}

/** The CLI's command line (the real bin with `args`), as a shell in `converseWith` runs it. */
export const cliCommandLine = (args: string[] = []) => [process.execPath, bin, ...args].join(" ");

/** `bash -i` in a pty: a job-control shell (Ctrl-Z stops its foreground job, `fg` goes on). */
export const interactiveShell = "stty cols 200 rows 50; exec bash --norc --noprofile -i";

/** `converse` with any `command` run by `script` in the pty, e.g. `interactiveShell`. */
export function converseWith(
  command: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  steps: [string, string][],
): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-q", "-e", "-c", command, "/dev/null"], {
      cwd,
      env: { TERM: "dumb", ...env },
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
    const disarm = watchdog(15_000, () => {
      child.kill("SIGKILL");
      reject(new Error(`no ${JSON.stringify(steps[step]?.[0])} on screen:\n${screen}`));
    });
    child.stdout.on("data", (chunk: Buffer) => {
      screen += chunk.toString();
      advance();
    });
    child.on("close", (code) => {
      disarm();
      if (step < steps.length) {
        reject(new Error(`exited ${code} before ${JSON.stringify(steps[step]?.[0])}:\n${screen}`));
      } else resolve({ code, screen });
    });
  });
}

/**
 * The lines of an interactive session's screen after its two-line start banner, which must be
 * there: throws, showing the screen, when the first lines are not the banner.
 */
export function afterBanner(lines: string[]): string[] {
  const [first = "", second = "", third = ""] = lines;
  if (
    !/^mini-agent · model .+ · provider .+ · sandbox .+$/.test(first) ||
    !second.startsWith("folder ")
  ) {
    throw new Error(`no start banner at the top of the screen:\n${lines.join("\n")}`);
  }
  // Where the sandbox is the boundary, a third line says what runs without asking.
  return lines.slice(third.startsWith(boundaryLine.slice(0, 40)) ? 3 : 2);
}
