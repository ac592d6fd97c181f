import { existsSync, realpathSync } from "node:fs";
import { strictlyWithin, within } from "../paths.js";

/**
 * What becomes of `$HOME` inside the sandbox. The file system is bound read-only, but /tmp is
 * replaced by a private tmpfs, and a HOME under /tmp (common in containers run as an arbitrary
 * uid) would go with it: writable, empty, discarded. So:
 * - `read-only`: HOME is read-only, as the rest outside the workspace (a HOME under /tmp is
 *   bound read-only again over the private /tmp: `homeMounts`);
 * - `workspace`: HOME is inside the workspace, writable as the rest of it;
 * - `private`: HOME is /tmp itself, which cannot be both private and read-only; `reason` says
 *   what bash sees instead, for the run to tell.
 */
export type HomeInSandbox =
  | { kind: "read-only" }
  | { kind: "workspace" }
  | { kind: "private"; reason: string };

export function homeInSandbox(env: NodeJS.ProcessEnv, workspace: string): HomeInSandbox {
  const home = realHome(env);
  if (home === undefined) return { kind: "read-only" };
  if (within(workspace, home)) return { kind: "workspace" };
  if (home === "/tmp") {
    return {
      kind: "private",
      reason:
        "HOME is /tmp, which the sandbox replaces with a private, empty /tmp: bash sees an empty HOME there, and what it writes in it is discarded, not refused",
    };
  }
  return { kind: "read-only" };
}

/** The bwrap arguments, after the private /tmp, that keep a HOME under /tmp read-only. */
export function homeMounts(env: NodeJS.ProcessEnv, workspace: string): string[] {
  const home = realHome(env);
  if (home === undefined || !strictlyWithin("/tmp", home) || within(workspace, home)) return [];
  return existsSync(home) ? ["--ro-bind", home, home] : [];
}

/** `$HOME` with its symlinks resolved (as it is when missing); undefined when unset. */
function realHome(env: NodeJS.ProcessEnv): string | undefined {
  if (!env.HOME) return undefined;
  try {
    return realpathSync(env.HOME);
  } catch {
    return env.HOME;
  }
}
