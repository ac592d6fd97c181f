import { isUtf8 } from "node:buffer";
import { constants } from "node:fs";
import { access, lstat, realpath } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import { within } from "../paths.js";
import { projectRoot } from "../project/root.js";
import { headOf } from "../text.js";
import { showName } from "../tools/names.js";

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
 * optional lock (it writes nothing). git never fetches: a partial clone, where `ls-files` could
 * fetch a missing object through the remote (running its `uploadpack`, or `ssh` with the user's
 * keys), is skipped with a reason, and no git gets a transport. Over the bound, git and what it
 * started are killed and the look is skipped with a reason: never a hang.
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
  const paths = namesOf(listed.bytes).filter((path) => safePath(path.text));
  const folder = Buffer.from(`${workspace}/`);
  for (let at = 0; at < paths.length; at += 256) {
    if (Date.now() > deadline) return over;
    if (options.signal?.aborted) return { kind: "skipped", reason: "the call was interrupted" };
    const batch = paths.slice(at, at + 256);
    const states = await Promise.all(
      batch.map(
        async (path) => [path.shown, await statOf(Buffer.concat([folder, path.bytes]))] as const,
      ),
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

/**
 * The names of git's NUL-separated list: each one's bytes (to stat it), its text, and how it is
 * recorded: as it is when it is UTF-8, else as odd names are shown (`\xNN` for each stray byte).
 */
function namesOf(list: Buffer): { bytes: Buffer; text: string; shown: string }[] {
  const names = [];
  for (let at = 0; at < list.length; ) {
    const end = list.indexOf(0, at);
    const bytes = list.subarray(at, end === -1 ? list.length : end);
    at = end === -1 ? list.length : end + 1;
    if (bytes.length === 0) continue;
    const text = bytes.toString("utf8");
    names.push({ bytes, text, shown: isUtf8(bytes) ? text : showName(bytes) });
  }
  return names;
}

/** A path git listed that names a file under the workspace (a planted index could hold others). */
const safePath = (path: string) =>
  !isAbsolute(path) && !path.split("/").some((part) => part === ".." || part === ".git");

/** What a change of the file shows: type and mode, size, inode, and both times to the nanosecond. */
async function statOf(path: Buffer): Promise<string> {
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
  "protocol.allow=never",
];

/**
 * The settings that make a repository a partial clone, whose missing objects git fetches from
 * its promisor remote when it needs them (running `remote.NAME.uploadpack`, a remote helper, or
 * the user's `ssh`): as `git config --get-regexp` sees names, section and key lowercased.
 */
const PARTIAL_CLONE = "^(extensions\\.partialclone|remote\\..*\\.(promisor|partialclonefilter))$";

type GitOutcome = { ok: true; bytes: Buffer } | { ok: false; reason: string };

/**
 * `git ls-files` of the repository at `top`, run from the workspace: its NUL-separated output,
 * or why there is none ("timeout" when over the bound). A partial clone is never listed: git
 * could fetch there (a skip-worktree `.gitignore` whose blob is missing is read for the ignore
 * rules), so it is told from its settings first, read by `git config`, which runs nothing.
 */
async function gitList(
  git: { program: string; path: string },
  top: string,
  workspace: string,
  bound: number,
  options: LookOptions,
): Promise<GitOutcome> {
  const deadline = Date.now() + bound;
  const run = (args: string[], exits: number[]) =>
    runGit(git, top, workspace, args, exits, deadline - Date.now(), options);
  const partial = await run(["config", "-z", "--name-only", "--get-regexp", PARTIAL_CLONE], [0, 1]);
  if (!partial.ok) return partial;
  const setting = partial.bytes
    .toString("utf8")
    .split("\0")
    .find((name) => name !== "");
  if (setting !== undefined)
    return {
      ok: false,
      reason: `the repository is a partial clone (${headOf(setting, 100)}): git would fetch from its remote: skipped`,
    };
  return run(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], [0]);
}

/**
 * One git command on the repository at `top`, run from the workspace, with the safe settings and
 * environment: its output when it exits with one of `exits`, or why not ("timeout" when over the
 * bound). git never fetches: no protocol is allowed (`GIT_ALLOW_PROTOCOL` empty beats any
 * `protocol.*` setting of the repository), and `GIT_NO_LAZY_FETCH` is set for a git that knows it.
 */
async function runGit(
  git: { program: string; path: string },
  top: string,
  workspace: string,
  command: string[],
  exits: number[],
  bound: number,
  options: LookOptions,
): Promise<GitOutcome> {
  // Loaded when git first runs: a run without bash loads no `child_process`.
  const { spawn } = await import("node:child_process");
  const config = SAFE_CONFIG.flatMap((setting) => ["-c", setting]);
  const args = [
    "--no-pager",
    "--no-optional-locks",
    ...config,
    `--git-dir=${join(top, ".git")}`,
    `--work-tree=${top}`,
    ...command,
  ];
  const env: NodeJS.ProcessEnv = {
    PATH: git.path,
    ...(process.env.HOME !== undefined && { HOME: process.env.HOME }),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ALLOW_PROTOCOL: "",
    GIT_NO_LAZY_FETCH: "1",
    LC_ALL: "C",
  };
  if (bound <= 0) return Promise.resolve({ ok: false, reason: "timeout" });
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
    const finish = (outcome: GitOutcome) => {
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
      code !== null && exits.includes(code)
        ? finish({ ok: true, bytes: Buffer.concat(chunks) })
        : fail(`git failed (exit ${code}): skipped`),
    );
  });
}
