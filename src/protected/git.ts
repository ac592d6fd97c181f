import { constants } from "node:fs";
import { access, realpath } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import { within } from "../paths.js";

/** A git program outside the workspace and the `PATH` it gets. */
export interface SafeGit {
  program: string;
  path: string;
}

/**
 * The git program to run on repositories the model can write: the first executable `git` in the
 * folders of `path` that are absolute and outside `workspace` (a relative entry or a project's
 * `node_modules/.bin` would let the model plant one). `undefined` when there is none.
 */
export async function findSafeGit(path: string, workspace: string): Promise<SafeGit | undefined> {
  const folders: string[] = [];
  for (const folder of path.split(delimiter)) {
    if (!isAbsolute(folder)) continue;
    const real = await realpath(folder).catch(() => undefined);
    if (real !== undefined && !within(workspace, real) && real !== workspace) folders.push(real);
  }
  for (const folder of folders) {
    const program = join(folder, "git");
    if (
      await access(program, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return { program, path: folders.join(delimiter) };
  }
  return undefined;
}

/** Settings on the command line that keep every program out of a git run. */
const SAFE_CONFIG = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.untrackedCache=false",
  "core.splitIndex=false",
  "log.showSignature=false",
  "protocol.allow=never",
];

/** The most bytes a git run may print before it is ended (a listing past it fails the check). */
const MOST_OUTPUT = 64 * 1024 * 1024;

export type GitOutcome = { ok: true; out: Buffer } | { ok: false; reason: string };

/**
 * One git command on the git folder `gitDir`, with no work tree of the repository's (an empty
 * one of `/`'s that nothing is written to), no system or global configuration, no replacement
 * objects, no fetch (no protocol allowed), no pager, hook or monitor, bounded by `ms` and killed
 * with everything it started. Its output when it exits 0, or why not.
 */
export async function runSafeGit(
  git: SafeGit,
  gitDir: string,
  args: string[],
  input: string,
  ms: number,
  extra: NodeJS.ProcessEnv = {},
): Promise<GitOutcome> {
  // Loaded when git first runs: a session that never checks refs loads no `child_process`.
  const { spawn } = await import("node:child_process");
  const env: NodeJS.ProcessEnv = {
    PATH: git.path,
    HOME: "/nonexistent",
    GIT_DIR: gitDir,
    GIT_WORK_TREE: "/nonexistent",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ALLOW_PROTOCOL: "",
    GIT_NO_LAZY_FETCH: "1",
    LC_ALL: "C",
    ...extra,
  };
  const config = SAFE_CONFIG.flatMap((setting) => ["-c", setting]);
  return new Promise((resolve) => {
    const child = spawn(git.program, ["--no-pager", ...config, ...args], {
      cwd: "/",
      env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = "";
    let settled = false;
    const finish = (outcome: GitOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.pid !== undefined && child.exitCode === null)
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      resolve(outcome);
    };
    const timer = setTimeout(
      () => finish({ ok: false, reason: `git took over ${ms / 1000} s` }),
      ms,
    );
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MOST_OUTPUT) finish({ ok: false, reason: "git printed too much" });
      else chunks.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 400) stderr += chunk.toString("utf8");
    });
    child.on("error", (error: NodeJS.ErrnoException) =>
      finish({ ok: false, reason: `git could not run (${error.code ?? "error"})` }),
    );
    child.on("close", (code) =>
      finish(
        code === 0
          ? { ok: true, out: Buffer.concat(chunks) }
          : { ok: false, reason: `git failed (exit ${code}): ${stderr.split("\n")[0] ?? ""}` },
      ),
    );
  });
}
