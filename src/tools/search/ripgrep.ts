import type { ChildProcess } from "node:child_process";
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { ToolError } from "../define.js";
import { isInside } from "../shown-path.js";

/**
 * ripgrep as a helper of `grep`, never as its judge. `grep` asks it one question it answers
 * far faster than JavaScript: which files, or which lines, contain one of a few fixed strings
 * that every match of the pattern must contain (`Literals`, read off the pattern by RE2 itself).
 * Files it reports without any are skipped; lines it reports are tested with the same RE2 pattern
 * as the JavaScript path. So the result is the JavaScript path's, by construction: ripgrep's
 * regex dialect, ignore rules, binary and encoding handling never decide what the model sees.
 *
 * ripgrep is used when `rg` is found on `PATH` in an absolute folder outside the workspace (a
 * program the model wrote is never run this way). `MINI_AGENT_SEARCH=js` never uses it;
 * `MINI_AGENT_SEARCH=rg` requires it.
 */
export interface Literals {
  /** Every line the pattern matches contains one of these. */
  strings: string[];
  ignoreCase: boolean;
}

/** The `rg` to use for a search in the workspace `realRoot`, or undefined for JavaScript alone. */
export function ripgrepFor(realRoot: string): string | undefined {
  const mode = process.env.MINI_AGENT_SEARCH ?? "";
  if (mode === "js") return undefined;
  if (mode !== "" && mode !== "rg")
    throw new ToolError(
      `MINI_AGENT_SEARCH is ${JSON.stringify(mode)}: use js, rg or leave it unset`,
    );
  const found = onPath(realRoot);
  if (found === undefined && mode === "rg")
    throw new ToolError(
      "MINI_AGENT_SEARCH=rg, but no rg was found on PATH in an absolute folder outside the workspace",
    );
  return found;
}

function onPath(realRoot: string): string | undefined {
  const root = Buffer.from(realRoot);
  for (const folder of (process.env.PATH ?? "").split(":")) {
    if (!isAbsolute(folder)) continue;
    try {
      const real = realpathSync(join(folder, "rg"));
      if (real === realRoot || isInside(root, Buffer.from(real))) continue;
      if (!statSync(real).isFile()) continue;
      accessSync(real, constants.X_OK);
      return real;
    } catch {
      // Not here: the next folder.
    }
  }
  return undefined;
}

/** Options every ripgrep run gets: no config file, fixed strings, every byte searched as text. */
function args(literals: Literals): string[] {
  return [
    "--no-config",
    "--no-messages",
    "--text",
    "--encoding=none",
    "--fixed-strings",
    literals.ignoreCase ? "--ignore-case" : "--case-sensitive",
    ...literals.strings.flatMap((literal) => ["--regexp", literal]),
  ];
}

/** At most this many files are remembered as holding no literal; beyond it, all are searched. */
const MAX_REMEMBERED = 1_000_000;

/**
 * The files under `start` that ripgrep has found to hold none of the literals, as it finds them
 * (it runs beside the walk). A file not (yet) reported is searched as usual; ripgrep's own walk
 * (its ignore rules, its handling of links) only decides which files it gets to report.
 */
export class FilesWithout {
  private readonly reported = new Set<string>();
  private readonly child: ChildProcess | undefined;
  private rest = Buffer.alloc(0);

  constructor(rg: string, start: Buffer, literals: Literals, spawn: Spawn) {
    const folder = start.toString();
    // A folder name that is not UTF-8 cannot be passed as it is: no help then.
    if (!Buffer.from(folder).equals(start) || folder.endsWith("/")) return;
    const child = startRipgrep(
      spawn,
      rg,
      [
        ...args(literals),
        "--files-without-match",
        "--null",
        "--hidden",
        "--no-require-git",
        "--no-ignore-dot",
        "--no-ignore-global",
        "--no-ignore-exclude",
        "--no-ignore-parent",
        "--glob=!.git",
        "--",
        folder,
      ],
      "ignore",
    );
    if (!child) return;
    child.on("error", () => {});
    child.stdout?.on("data", (chunk: Buffer) => this.take(chunk));
    this.child = child;
  }

  /** Whether ripgrep has reported `path` (as the walk built it) to hold none of the literals. */
  has(path: Buffer): boolean {
    return this.reported.has(path.toString("latin1"));
  }

  /** Ends ripgrep, and returns once it has exited. */
  async stop(): Promise<void> {
    if (this.child) await endGroup(this.child);
  }

  private take(chunk: Buffer): void {
    let data = this.rest.length > 0 ? Buffer.concat([this.rest, chunk]) : chunk;
    for (let end = data.indexOf(0); end !== -1; end = data.indexOf(0)) {
      if (this.reported.size < MAX_REMEMBERED) this.reported.add(data.toString("latin1", 0, end));
      data = data.subarray(end + 1);
    }
    // No path is this long: what is not ripgrep's answer is not waited on.
    if (data.length > 64 * 1024) void this.stop();
    this.rest = data.length > 64 * 1024 ? Buffer.alloc(0) : Buffer.from(data);
  }
}

/** One line ripgrep reported: its number and its first `keep` bytes (`cut` when there were more). */
export interface ReportedLine {
  lineNo: number;
  bytes: Buffer;
  cut: boolean;
}

/**
 * The lines of the open regular file `fd` that hold one of the literals, as ripgrep reports them.
 * ripgrep gets the descriptor as its standard input and opens `/dev/stdin`: the same file, not
 * found by name again, which it can map into memory instead of reading it into a buffer as long
 * as its longest line. Each line's first `keep` bytes are kept. Stopping the iteration, or
 * `signal`, ends ripgrep. A ripgrep that fails is reported as a `RipgrepError`.
 */
export async function* linesWith(
  rg: string,
  fd: number,
  literals: Literals,
  keep: number,
  signal?: AbortSignal,
): AsyncGenerator<ReportedLine> {
  const child = startRipgrep(
    await loadSpawn(),
    rg,
    [
      ...args(literals),
      "--mmap",
      "--line-number",
      "--no-filename",
      "--color=never",
      "--",
      "/dev/stdin",
    ],
    fd,
  );
  if (!child) throw new RipgrepError("could not start");
  const exited = new Promise<number | string>((resolve) => {
    child.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
    child.on("close", (code, signal) => resolve(code ?? signal ?? "error"));
  });
  const end = () => endGroup(child);
  signal?.addEventListener("abort", end, { once: true });
  try {
    const stdout = child.stdout;
    if (!stdout) throw new RipgrepError("no output");
    const line = new LineReader(keep);
    for await (const chunk of stdout as AsyncIterable<Buffer>) {
      for (const reported of line.take(chunk)) yield reported;
    }
    const status = await exited;
    // 0: lines found; 1: none.
    if (status !== 0 && status !== 1) throw new RipgrepError(String(status));
  } finally {
    signal?.removeEventListener("abort", end);
    await end();
  }
}

export type Spawn = typeof import("node:child_process").spawn;

/** `spawn`, loaded when ripgrep first runs: a run that never starts it loads no `child_process`. */
export async function loadSpawn(): Promise<Spawn> {
  return (await import("node:child_process")).spawn;
}

/**
 * Starts ripgrep in a process group of its own, with an empty environment; undefined when it
 * cannot even start (a command line the system refuses, say).
 */
function startRipgrep(
  spawn: Spawn,
  rg: string,
  argv: string[],
  stdin: number | "ignore",
): ChildProcess | undefined {
  try {
    return spawn(rg, argv, { stdio: [stdin, "pipe", "ignore"], env: {}, detached: true });
  } catch {
    return undefined;
  }
}

/**
 * Ends ripgrep and whatever it started (it runs in a process group of its own, so an `rg` that
 * is a wrapper script takes its children with it), and returns once ripgrep has exited: no call
 * returns with its ripgrep still running.
 */
async function endGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined) return;
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // The group is gone: nothing of it left to end.
  }
  await exited;
}

/** ripgrep could not answer: it failed, was killed, or could not start. */
export class RipgrepError extends Error {
  override name = "RipgrepError";
  readonly code = "ERIPGREP";

  constructor(status: string) {
    super(`ripgrep failed (${status})`);
  }
}

/** Splits ripgrep's `N:text` lines, keeping at most `keep` bytes of each text. */
class LineReader {
  private lineNo = 0;
  private digits = "";
  private parts: Buffer[] = [];
  private kept = 0;
  private cut = false;

  constructor(private readonly keep: number) {}

  *take(chunk: Buffer): Generator<ReportedLine> {
    let at = 0;
    while (at < chunk.length) {
      if (this.lineNo === 0) {
        const colon = chunk.indexOf(0x3a, at);
        const end = colon === -1 ? chunk.length : colon;
        this.digits += chunk.toString("latin1", at, end);
        // A line number is a few digits: anything else is not ripgrep's answer.
        if (!/^\d{0,15}$/.test(this.digits)) throw new RipgrepError("unreadable output");
        if (colon === -1) return;
        this.lineNo = Number(this.digits);
        this.digits = "";
        if (this.lineNo === 0) throw new RipgrepError("unreadable output");
        at = colon + 1;
        continue;
      }
      const newline = chunk.indexOf(0x0a, at);
      const end = newline === -1 ? chunk.length : newline;
      const room = this.keep - this.kept;
      if (end - at > room) this.cut = true;
      const piece = chunk.subarray(at, at + Math.min(room, end - at));
      if (piece.length > 0) {
        this.parts.push(Buffer.from(piece));
        this.kept += piece.length;
      }
      if (newline === -1) return;
      yield { lineNo: this.lineNo, bytes: Buffer.concat(this.parts), cut: this.cut };
      this.lineNo = 0;
      this.parts = [];
      this.kept = 0;
      this.cut = false;
      at = newline + 1;
    }
  }
}
