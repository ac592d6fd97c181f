import { mkdtemp, rm } from "node:fs/promises";
import { afterEach } from "vitest";
import { resolveSandbox, type SandboxOptions } from "../../src/sandbox/bwrap.js";

/**
 * Whether the real bubblewrap sandbox works here, so its tests can run. Where `CI` is set they
 * must: a sandbox that cannot be built there fails the suite instead of skipping its tests.
 */
export async function realSandbox(
  options: SandboxOptions = { mode: "required" },
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  const state = await resolveSandbox(options);
  if (state.kind === "bwrap") return true;
  if (env.CI) {
    throw new Error(`CI must exercise the real sandbox: ${"reason" in state ? state.reason : ""}`);
  }
  return false;
}

/**
 * Folders outside the workspace and outside /tmp (which is private inside the sandbox, so a
 * canary there would prove nothing), removed after each test.
 */
export function useOutsideFolders(): (prefix: string) => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async (prefix) => {
    const dir = await mkdtemp(`/var/tmp/mini-agent-${prefix}-`);
    made.push(dir);
    return dir;
  };
}
