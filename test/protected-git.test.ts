import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findSafeGit, runSafeGit } from "../src/protected/git.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";

const tempDir = useTempDirs();

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("the git the protected-file check runs", () => {
  it("is ended, with what it started, past its bound, and the check says why", async () => {
    const root = await tempDir();
    const bin = join(root, "bin");
    await mkdir(bin);
    const started = join(root, "started");
    // A git that starts a process of its own and never ends.
    await writeFile(
      join(bin, "git"),
      `#!/bin/sh\nsleep 1000 &\necho $! > ${started}.tmp && mv ${started}.tmp ${started}\nwait\n`,
    );
    await chmod(join(bin, "git"), 0o755);
    const workspace = join(root, "workspace");
    await mkdir(workspace);
    const git = await findSafeGit(`${bin}:${process.env.PATH}`, workspace);
    expect(git?.program).toBe(join(bin, "git"));
    if (git === undefined) return;
    const outcome = await runSafeGit(git, workspace, ["status"], "", 2000);
    expect(outcome).toEqual({ ok: false, reason: "git took over 2 s" });
    await until(async () => (await readFile(started, "utf8").catch(() => "")) !== "");
    const pid = Number(await readFile(started, "utf8"));
    await until(() => !alive(pid), 20_000, { what: "the process git started is gone" });
  });
});
