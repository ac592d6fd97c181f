import { constants } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { resolve } from "node:path";
import type { HookCommand } from "../config/hooks.js";
import type { HookChange, HookContext, ReadyHook } from "../hooks/hooks.js";
import type { HookFolders } from "../hooks/trust.js";
import { projectRoot } from "../project/root.js";
import type { FileChanges } from "../rewind/changes.js";
import type { NodeState } from "../session/records.js";
import { digestFile, type SeenContent, type SeenFiles } from "../tools/seen.js";
import { loadTrust } from "../trust/trust.js";
import { visible } from "../visible.js";

export interface HooksToStart {
  hooks: readonly HookCommand[];
  workspace: string;
  state: string;
  env: NodeJS.ProcessEnv;
  tell: (line: string) => void;
  /** Asks whether to trust the project's hooks; absent: no one to ask (they do not run). */
  confirm?: (question: string) => Promise<boolean>;
}

/** Why a file a hook runs is protected, as a refused write says. */
export const hookFileWhy = "the session's hooks run it";

/**
 * The hooks a session runs, each project hook with the hash of what it runs as trusted: the
 * user's file's always; a project file's only when the trust record holds them and the files
 * they run as they are now (asked on a terminal, else skipped with one line). With them, the real
 * paths of the workspace files they run, which join the protected files. `undefined` when there
 * are none: a session without hooks loads nothing of them.
 */
export async function readyHooks(
  options: HooksToStart,
): Promise<{ hooks: ReadyHook[]; folders: HookFolders; files: string[] } | undefined> {
  if (options.hooks.length === 0) return undefined;
  const root = (await projectRoot(options.workspace)).path;
  const folders: HookFolders = { root, workspace: options.workspace, env: options.env };
  const { hookCoverage, projectHooksTrust, shownHooks } = await import("../hooks/trust.js");
  const user = options.hooks.filter((hook) => hook.scope === "user");
  const project = options.hooks.filter((hook) => hook.scope === "project");
  const realRoot = await realpath(root).catch(() => root);
  const ran = await Promise.all(options.hooks.map((hook) => hookCoverage(hook, folders)));
  const files = [...new Set(ran.flatMap((run) => run.programs))].map((name) =>
    resolve(realRoot, name),
  );
  if (project.length === 0) return { hooks: user, folders, files };
  const { entry, coverage } = await projectHooksTrust(project, folders);
  const trust = await loadTrust(options.state, root);
  let trusted = trust.isTrusted(entry.kind, entry.name, entry.hash);
  const shown = shownHooks(project, coverage);
  if (!trusted && options.confirm) {
    trusted = await options.confirm(
      `Run the project's hooks? They run commands on the agent's events, in the sandbox where it works: ${visible(shown)} [y/N] `,
    );
    if (trusted) await trust.trust([entry]);
  }
  if (!trusted) {
    const file = project[0]?.file ?? "the project file";
    options.tell(
      `mini-agent: the hooks of ${visible(file)} are not trusted as they are now, so they do not run (mini-agent trust runs them from now on): ${visible(shown)}\n`,
    );
    return { hooks: user, folders, files };
  }
  const ready = project.map((hook, at) => ({ ...hook, trusted: coverage[at]?.hash ?? "" }));
  return { hooks: [...user, ...ready], folders, files };
}

/**
 * How a session measures what a call's `PostToolUse` hooks change (`HookContext.measure`): as
 * bash's changes are (`FileChanges.measured`: kept before, recorded after, put back by a
 * rewind), and a file the agent had seen as it was before the hooks is seen as they left it, so
 * its next `edit` of a formatted file works.
 */
export function measuredHooks(
  changes: FileChanges,
  seen: SeenFiles,
  workspace: string,
): NonNullable<HookContext["measure"]> {
  return async (by, work) => {
    const { value, files } = await changes.measured(by, work);
    const realRoot = await realpath(workspace).catch(() => workspace);
    const changed: HookChange[] = [];
    for (const file of files) {
      const after = hashOf(file.after);
      changed.push({ path: file.path, ...(after !== undefined && { hash: after }) });
      const real = resolve(realRoot, file.path);
      const before = hashOf(file.before);
      if (after === undefined || before === undefined || seen.get(real)?.hash !== before) continue;
      const content = await seenNow(real);
      if (content?.hash === after) seen.record(real, content);
    }
    return { value, changed };
  };
}

/** The content of the regular file at `real` now, as `read` would see it; none for anything else. */
async function seenNow(real: string): Promise<SeenContent | undefined> {
  const handle = await open(
    real,
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  ).catch(() => undefined);
  if (!handle) return undefined;
  try {
    return (await handle.stat()).isFile() ? await digestFile(handle) : undefined;
  } finally {
    await handle.close();
  }
}

function hashOf(state: NodeState | null): string | undefined {
  return state !== null && "hash" in state ? state.hash : undefined;
}
