import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

/**
 * A fresh folder per call, removed after the test. Returns its real path. Removal retries a few
 * times: a process the test ended (a CLI in tmux sent SIGHUP) may still be writing its last
 * record there for a moment.
 */
export function useTempDirs(): () => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(
      made
        .splice(0)
        .map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })),
    );
  });
  return async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "mini-agent-test-")));
    made.push(dir);
    return dir;
  };
}
