import { constants } from "node:fs";
import { access, lstat, realpath } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import { within } from "../paths.js";
import { projectRoot } from "../project/root.js";

/** How long one look at the workspace's files may take (git's list, then each file's stat). */
export const SNAPSHOT_BOUND_MS = 2000;

/** The most paths one `bash_change` record names; the rest are counted. */
export const MOST_PATHS = 1000;

/** The bytes of git's list read at most: a bigger list is skipped. */
const MOST_LIST_BYTES = 64 * 1024 * 1024;

/** Each file's stat information, by its path relative to the workspace ("" when absent). */
export type Snapshot = Map<string, string>;

/** A look at the workspace's files: none outside a repository, or why it was skipped. */
export type Look = { kind: "none" } | { kind: "skipped"; reason: string } | Snapshot;

export interface LookOptions {
  /** The bound of the whole look (default 2 s). */
  boundMs?: number;
  /** The agent's PATH, where git is found. */
  path?: string;
  signal?: AbortSignal;
}

/**
 * The files of the workspace as git lists them, with their stat information: the index's files
 * and the untracked ones that no ignore rule leaves out, under the workspace, from
 * `git ls-files -z --cached --others --exclude-standard`. Why that and not `git status`: status
 * compares the content of a file whose stat changed, through the clean filter the repository's
 * attributes name (`.gitattributes`, `.git/info/attributes`: files the model can write), a
 * program no flag turns off; `ls-files` reads no content, and the stat comparison is ours.
 *
 * git runs outside the sandbox, on a repository the model can write: found on PATH outside the
 * repository, with an environment of its own (PATH without relative folders or the repository's,
 * and HOME, none of the agent's `GIT_*`), no system or global configuration, and
 * the repository's settings that name or start a program overridden on the command line
 * (`core.fsmonitor`, `core.hooksPath`; `core.untrackedCache` off so a planted cache cannot hide a
 * file), its git folder and work tree given (a planted `core.worktree` is not followed), and no
 * optional lock (it writes nothing). Over the bound, git and what it started are killed and the
 * look is skipped with a reason: never a hang.
 */
export async function lookAtFiles(workspace: string, options: LookOptions = {}): Promise<Look> {
  const root = await projectRoot(workspace);
  if (!root.repository) return { kind: "none" };
  // An interrupted call gets no look after it: Ctrl-C is not held up by git.
  if (options.signal?.aborted) return { kind: "skipped", reason: "the call was interrupted" };
  const bound = options.boundMs ?? SNAPSHOT_BOUND_MS;
  const deadline = Date.now() + bound;
  const over = { kind: "skipped" as const, reason: `git took over ${bound / 1000} s: skipped` };
  const git = await findGit(options.path ?? process.env.PATH ?? "", root.path);
  if (git === undefined)
    return { kind: "skipped", reason: "no git outside the repository on PATH: skipped" };
  const listed = await gitList(git, root.path, workspace, bound, options);
  if (!listed.ok)
    return listed.reason === "timeout" ? over : { kind: "skipped", reason: listed.reason };
  const snapshot: Snapshot = new Map();
  const paths = listed.text.split("\0").filter((path) => path !== "" && safePath(path));
  for (let at = 0; at < paths.length; at += 256) {
    if (Date.now() > deadline) return over;
    if (options.signal?.aborted) return { kind: "skipped", reason: "the call was interrupted" };
    const batch = paths.slice(at, at + 256);
    const states = await Promise.all(
      batch.map(async (path) => [path, await statOf(join(workspace, path))] as const),
    );
    for (const [path, state] of states) snapshot.set(path, state);
  }
  return snapshot;
}

/** The paths whose stat information differs between two looks, sorted. */
export function changedPaths(before: Snapshot, after: Snapshot): string[] {
  const changed = new Set<string>();
  for (const [path, state] of before) if (after.get(path) !== state) changed.add(path);
  for (const [path, state] of after) if (before.get(path) !== state) changed.add(path);
  return [...changed].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A path git listed that names a file under the workspace (a planted index could hold others). */
const safePath = (path: string) =>
  !isAbsolute(path) && !path.split("/").some((part) => part === ".." || part === ".git");

/** What a change of the file shows: type and mode, size, inode, and both times to the nanosecond. */
async function statOf(path: string): Promise<string> {
  const info = await lstat(path, { bigint: true }).catch(() => undefined);
  if (!info) return "";
  return [info.mode, info.size, info.ino, info.mtimeNs, info.ctimeNs].join(":");
}

/**
 * The git program and the PATH it gets: the folders of PATH that are absolute and not inside the
 * repository (a relative entry, `.` or an empty one, or a project's `node_modules/.bin` would let
 * the model plant a `git` of its own), and the first executable `git` among them.
 */
async function findGit(
  path: string,
  top: string,
): Promise<{ program: string; path: string } | undefined> {
  const folders: string[] = [];
  for (const folder of path.split(delimiter)) {
    if (!isAbsolute(folder)) continue;
    const real = await realpath(folder).catch(() => undefined);
    if (real !== undefined && !within(top, real)) folders.push(real);
  }
  for (const folder of folders) {
    const program = join(folder, "git");
    const found = await access(program, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (found) return { program, path: folders.join(delimiter) };
  }
  return undefined;
}

/** The program-free settings each git run gets on its command line. */
const SAFE_CONFIG = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.untrackedCache=false",
  "core.splitIndex=false",
];

/**
 * `git ls-files` of the repository at `top`, run from the workspace: its NUL-separated output,
 * or why there is none ("timeout" when over the bound).
 */
async function gitList(
  git: { program: string; path: string },
  top: string,
  workspace: string,
  bound: number,
  options: LookOptions,
): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  // Loaded when git first runs: a run without bash loads no `child_process`.
  const { spawn } = await import("node:child_process");
  const config = SAFE_CONFIG.flatMap((setting) => ["-c", setting]);
  const args = [
    "--no-pager",
    "--no-optional-locks",
    ...config,
    `--git-dir=${join(top, ".git")}`,
    `--work-tree=${top}`,
    "ls-files",
    "-z",
    "--cached",
    "--others",
    "--exclude-standard",
  ];
  const env: NodeJS.ProcessEnv = {
    PATH: git.path,
    ...(process.env.HOME !== undefined && { HOME: process.env.HOME }),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_TERMINAL_PROMPT: "0",
    LC_ALL: "C",
  };
  return new Promise((resolve) => {
    const child = spawn(git.program, args, {
      cwd: workspace,
      env,
      stdio: ["ignore", "pipe", "ignore"],
      detached: true,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (outcome: { ok: true; text: string } | { ok: false; reason: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", interrupted);
      // git and anything it started go with it (a process group of their own).
      if (child.pid !== undefined && child.exitCode === null)
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      resolve(outcome);
    };
    const fail = (reason: string) => finish({ ok: false, reason });
    const timer = setTimeout(() => fail("timeout"), bound);
    const interrupted = () => fail("the call was interrupted");
    options.signal?.addEventListener("abort", interrupted, { once: true });
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MOST_LIST_BYTES) fail("git listed too many files: skipped");
      else chunks.push(chunk);
    });
    child.on("error", (error: NodeJS.ErrnoException) =>
      fail(`git could not run (${error.code ?? "error"}): skipped`),
    );
    child.on("close", (code) =>
      code === 0
        ? finish({ ok: true, text: Buffer.concat(chunks).toString("utf8") })
        : fail(`git failed (exit ${code}): skipped`),
    );
  });
}
