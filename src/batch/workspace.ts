import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { copyFile, cp, lstat, mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runProgram } from "./spawned.js";
import type { Task } from "./tasks.js";

/**
 * Each attempt's own workspace, `DIR/work/ID/N`: a copy of the task's folder, or a
 * `git clone --shared` of the batch's one mirror of its repository (so `.git` lies inside the
 * workspace, writable in the sandbox), checked out at `ref`. And what is done to it around the
 * agent: the files that score it put back, the diff of what changed.
 */

/** Where a workspace came from, for its diff. */
export type Base = { kind: "folder"; path: string } | { kind: "commit"; sha: string };

/** A failure to make a workspace: the attempt is unscored (`infra_error`). */
export class WorkspaceError extends Error {}

/** Git run by the batch on a workspace the agent wrote: no hook, fsmonitor or external diff. */
const git = (cwd: string, ...args: string[]) => [
  "git",
  "-C",
  cwd,
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  ...args,
];

const gitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GIT_TERMINAL_PROMPT: "0",
  GIT_CONFIG_NOSYSTEM: "1",
});

export class Workspaces {
  /** One mirror per repository, made (or fetched) once per batch run. */
  private readonly mirrors = new Map<string, Promise<string>>();

  constructor(private readonly dir: string) {}

  /** Makes `DIR/work/ID/N` afresh; returns what its diff is taken against. */
  async make(task: Task, attempt: number): Promise<{ path: string; base: Base }> {
    const path = join(this.dir, "work", task.line.id, String(attempt));
    await rm(path, { recursive: true, force: true });
    await mkdir(join(this.dir, "work", task.line.id), { recursive: true });
    if (task.workspace !== undefined) {
      await cp(task.workspace, path, {
        recursive: true,
        verbatimSymlinks: true,
        preserveTimestamps: true,
      });
      return { path, base: { kind: "folder", path: task.workspace } };
    }
    const mirror = await this.mirror(task.repo ?? "");
    const sha = await this.git(
      mirror,
      "rev-parse",
      "--verify",
      `${task.line.ref ?? "HEAD"}^{commit}`,
    );
    await this.git(this.dir, "clone", "--quiet", "--shared", "--no-checkout", mirror, path);
    await this.git(path, "checkout", "--quiet", "--detach", sha);
    return { path, base: { kind: "commit", sha } };
  }

  private mirror(repo: string): Promise<string> {
    let made = this.mirrors.get(repo);
    if (made === undefined) {
      const path = join(
        this.dir,
        "mirrors",
        `${createHash("sha256").update(repo).digest("hex").slice(0, 16)}.git`,
      );
      made = (async () => {
        if (existsSync(path)) await this.git(path, "fetch", "--quiet", "--prune", "origin");
        else await this.git(this.dir, "clone", "--quiet", "--mirror", repo, path);
        return path;
      })();
      this.mirrors.set(repo, made);
    }
    return made;
  }

  private async git(cwd: string, ...args: string[]): Promise<string> {
    const ended = await runProgram(git(cwd, ...args), {
      cwd: this.dir,
      env: gitEnv(),
      wholeStdout: true,
    });
    if (ended.code !== 0) throw new WorkspaceError(`git ${args[0]} failed: ${ended.output.trim()}`);
    return (ended.stdout ?? "").trim();
  }

  /**
   * The diff of the workspace against where it came from, written to `file`; its stat. For a
   * repository it is taken through a temporary index, so the workspace's own is untouched.
   */
  async diff(
    workspace: string,
    base: Base,
    file: string,
  ): Promise<{ files: number; insertions: number; deletions: number }> {
    let text: string;
    if (base.kind === "folder") {
      const ended = await runProgram(
        [
          "git",
          "diff",
          "--no-index",
          "--binary",
          "--no-ext-diff",
          "--no-textconv",
          "--",
          base.path,
          workspace,
        ],
        { cwd: this.dir, env: gitEnv(), wholeStdout: true },
      );
      const relative = (path: string) => path.replace(/^\//, "");
      text = (ended.stdout ?? "")
        .replaceAll(`a/${relative(base.path)}/`, "a/")
        .replaceAll(`b/${relative(workspace)}/`, "b/");
    } else {
      const index = `${file}.index`;
      const env = { ...gitEnv(), GIT_INDEX_FILE: index };
      await runProgram(git(workspace, "add", "-A", "--", "."), { cwd: this.dir, env });
      const ended = await runProgram(
        git(workspace, "diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", base.sha),
        { cwd: this.dir, env, wholeStdout: true },
      );
      await rm(index, { force: true });
      text = ended.stdout ?? "";
    }
    await writeFile(file, text);
    return diffStat(text);
  }
}

/** Files, added and removed lines of a unified diff. */
function diffStat(text: string): { files: number; insertions: number; deletions: number } {
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("diff --git ")) files++;
    else if (line.startsWith("+") && !line.startsWith("+++ ")) insertions++;
    else if (line.startsWith("-") && !line.startsWith("--- ")) deletions++;
  }
  return { files, insertions, deletions };
}

/**
 * Copies the folder `from` over `to` so that what scores the task is what the task file holds:
 * each file is removed first (a link the agent left in its place is replaced, never followed),
 * and a folder's place taken by anything else is made a folder again.
 */
export async function restoreFiles(from: string, to: string): Promise<void> {
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    const there = await lstat(target).catch(() => undefined);
    if (entry.isDirectory()) {
      if (there !== undefined && !there.isDirectory()) await rm(target, { force: true });
      if (there === undefined || !there.isDirectory()) await mkdir(target);
      await restoreFiles(source, target);
    } else {
      if (there !== undefined) await rm(target, { recursive: true, force: true });
      await copyFile(source, target);
    }
  }
}
