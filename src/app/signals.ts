import { systemErrorText } from "./errors.js";
import { exitCodes } from "./exit.js";

export type StopSignal = "SIGINT" | "SIGTERM" | "SIGHUP";

const signalCodes: Record<StopSignal, number> = {
  SIGINT: exitCodes.interrupted,
  SIGTERM: exitCodes.terminated,
  SIGHUP: exitCodes.hangup,
};

export interface StopperOptions {
  /** Where the one-line notices go (stderr). */
  write: (text: string) => void;
  /** Ends the process at once: `process.exit`, so exit hooks run. */
  exit: (code: number) => void;
}

/**
 * Everything that stops a run from outside, in one place. Ctrl-C, SIGTERM and SIGHUP abort the
 * running turn (every call gets its receipt; the session stays valid); a second one while that
 * turn is still ending exits at once. With no turn running, a signal exits at once, except a
 * first Ctrl-C at an idle interactive prompt, which only explains how to leave. SIGTERM and
 * SIGHUP also end the session once the turn has ended; Ctrl-C leaves an interactive session
 * open. A stdout that can no longer be written (its reader left: EPIPE; a full disk) stops the
 * turn the same way; stderr failing never stops anything.
 */
export class Stopper {
  /** Interactive sessions survive a first Ctrl-C at the prompt. */
  interactive = false;
  /** The exit code a stop asked for; the run ends with it once the turn is over. */
  exitCode: number | undefined;
  /** What asked for `exitCode`, in words: `SIGTERM stopped the run`. */
  stopReason: string | undefined;
  private turn: AbortController | undefined;
  private idleInterrupts = 0;
  private outputFailed = false;

  constructor(private readonly options: StopperOptions) {}

  /** A turn starts: the returned signal aborts when the run is stopped. */
  beginTurn(): AbortSignal {
    this.turn = new AbortController();
    if (this.exitCode !== undefined) this.turn.abort();
    return this.turn.signal;
  }

  endTurn(): void {
    this.turn = undefined;
  }

  /** The running turn's signal, if a turn runs. */
  get turnSignal(): AbortSignal | undefined {
    return this.turn?.signal;
  }

  /** Ends the running turn without stopping the run (the person closed the input). */
  abortTurn(): void {
    this.turn?.abort();
  }

  /**
   * The person closed the input at a question (Ctrl-D): the turn ends as interrupted, and so
   * does the run, with 130, unless something stopped it first.
   */
  inputClosed(): void {
    if (this.exitCode === undefined) {
      this.exitCode = exitCodes.interrupted;
      this.stopReason = "the input was closed at a question";
    }
  }

  /** A prompt was answered: an earlier lone Ctrl-C no longer counts toward quitting. */
  resetIdle(): void {
    this.idleInterrupts = 0;
  }

  signal(name: StopSignal): void {
    const code = signalCodes[name];
    if (this.turn && !this.turn.signal.aborted) {
      if (name !== "SIGINT") {
        this.exitCode = code;
        this.stopReason = `${name} stopped the run`;
      }
      this.turn.abort();
      this.options.write(
        name === "SIGINT"
          ? "\nmini-agent: interrupting (Ctrl-C again to quit)\n"
          : `\nmini-agent: ${name}: stopping the turn (again to quit at once)\n`,
      );
    } else if (this.turn || name !== "SIGINT" || !this.interactive || ++this.idleInterrupts > 1) {
      this.options.exit(code);
    } else this.options.write("\n(Ctrl-C again, /exit or Ctrl-D to quit)\n");
  }

  /** stdout failed. Reported once; the turn stops, the run exits 141 (EPIPE) or 1. */
  stdoutFailed(error: Error & { code?: string }): void {
    if (this.outputFailed) return;
    this.outputFailed = true;
    const closed = error.code === "EPIPE";
    if (this.exitCode === undefined) {
      this.exitCode = closed ? exitCodes.outputClosed : exitCodes.error;
      this.stopReason = closed ? "stdout was closed" : "stdout could not be written";
    }
    const running = this.turn !== undefined && !this.turn.signal.aborted;
    if (!closed)
      this.options.write(`mini-agent: cannot write to stdout: ${systemErrorText(error)}\n`);
    else if (running) this.options.write("mini-agent: stdout was closed: stopping the turn\n");
    this.turn?.abort();
  }
}

/**
 * `--end-with-stdin`: the parent that started this run (`mini-agent batch`) holds the other end
 * of stdin and never writes to it; when it closes (the parent ended, however it died), the run
 * exits at once as on a second SIGTERM, and on the way out ends its own process group, which the parent made
 * for it, so nothing the run started outlives the parent.
 */
export function endWithStdin(stopper: Stopper): void {
  process.stdin.on("error", () => {});
  process.stdin.on("close", () => {
    // Registered now, after the exit hooks that end the commands bash started, so they run first.
    process.on("exit", () => {
      try {
        process.kill(-process.pid, "SIGKILL");
      } catch {
        // Not a group's leader (ESRCH): there is no group of its own to end.
      }
    });
    // Nobody is left to wait for: the turn is stopped and the run exits at once, as on a second
    // SIGTERM (the exit hooks end the commands; the next load repairs a call left open).
    stopper.signal("SIGTERM");
    stopper.signal("SIGTERM");
  });
  process.stdin.resume();
}
