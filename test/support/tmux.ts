import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { bin } from "./cli.js";
import { until } from "./until.js";

/**
 * tmux, to drive the CLI as a person does: a real terminal emulator with a fixed size, keys sent
 * as a terminal sends them, pastes bracketed as a terminal pastes them, and the screen as drawn.
 * Tests without it are skipped on a machine that lacks it, never in CI (`CI=true`): there a
 * missing tmux fails them.
 */
export const hasTmux =
  spawnSync("tmux", ["-V"], { stdio: "ignore" }).status === 0 || process.env.CI === "true";

export interface TmuxStart {
  cwd: string;
  env: NodeJS.ProcessEnv;
  args?: string[];
  columns?: number;
  rows?: number;
  /** Another command line to run instead of `mini-agent ARGS` (a shell that runs it). */
  command?: string[];
}

/** One CLI running in its own tmux server (a private socket), ended after the test. */
export class Tmux {
  private constructor(
    private readonly socket: string,
    private readonly folder: string,
  ) {}

  /** Starts `mini-agent ARGS` in a detached session of `columns`×`rows` (120×40 by default). */
  static start({ cwd, env, args = [], columns = 120, rows = 40, command }: TmuxStart): Tmux {
    const folder = mkdtempSync(join(tmpdir(), "mini-agent-tmux-"));
    const tmux = new Tmux(join(folder, "socket"), folder);
    // tmux's own terminal type, unless the test names another.
    const assignments = Object.entries({ TERM: "screen", ...env })
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([name, value]) => `${name}=${value}`);
    tmux.run([
      "new-session",
      "-d",
      "-x",
      String(columns),
      "-y",
      String(rows),
      "-c",
      cwd,
      "--",
      "env",
      "-i",
      ...assignments,
      ...(command ?? [process.execPath, bin, ...args]),
    ]);
    // The pane stays after the program exits, so its last screen can still be read.
    tmux.run(["set-option", "-g", "remain-on-exit", "on"]);
    return tmux;
  }

  /** Types `text` as it is (no key names). */
  type(text: string): void {
    this.run(["send-keys", "-l", "--", text]);
  }

  /** Sends keys by tmux's names: `Enter`, `Down`, `Escape`, `C-c`. */
  keys(...names: string[]): void {
    this.run(["send-keys", ...names]);
  }

  /** Pastes `text` as a terminal does: bracketed when the program asked for it. */
  paste(text: string): void {
    this.run(["load-buffer", "-b", "test", "-"], text);
    this.run(["paste-buffer", "-p", "-d", "-b", "test"]);
  }

  /** The screen as drawn now (no escape sequences), and the scrollback above it. */
  screen(): string {
    return this.run(["capture-pane", "-p", "-J", "-S", "-1000"])
      .split("\n")
      .map((line) => line.trimEnd())
      .join("\n");
  }

  /** Waits until `text` is on screen; fails, showing the screen, after `deadlineMs`. */
  async waitFor(text: string | RegExp, deadlineMs = 15_000): Promise<string> {
    let screen = "";
    const shown = () => {
      screen = this.screen();
      return typeof text === "string" ? screen.includes(text) : text.test(screen);
    };
    await until(shown, deadlineMs, { everyMs: 50 }).catch(() => {
      throw new Error(`no ${String(text)} on screen after ${deadlineMs} ms:\n${screen}`);
    });
    return screen;
  }

  /** Ends the session and its server, and removes the socket's folder. */
  kill(): void {
    spawnSync("tmux", ["-S", this.socket, "kill-server"], { stdio: "ignore" });
    rmSync(this.folder, { recursive: true, force: true });
  }

  private run(args: string[], input?: string): string {
    return execFileSync("tmux", ["-S", this.socket, ...args], {
      encoding: "utf8",
      ...(input !== undefined && { input }),
    });
  }
}

/** `start`, with every session started killed after the test, passed or failed. */
export function useTmux(): (start: TmuxStart) => Tmux {
  const started: Tmux[] = [];
  afterEach(() => {
    for (const tmux of started.splice(0)) tmux.kill();
  });
  return (start) => {
    const tmux = Tmux.start(start);
    started.push(tmux);
    return tmux;
  };
}
