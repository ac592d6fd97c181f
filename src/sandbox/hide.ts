import { realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { strictlyWithin } from "../paths.js";

/**
 * Credential stores under `$HOME` that sandboxed commands never see: keys, cloud and registry
 * logins, password files, keyrings, and `.mini-agent` (the default state folder, every project's
 * sessions). The one list; the "Security model" of docs/sandbox.md repeats it.
 */
export const credentialStores = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".config/gcloud",
  ".oci",
  ".kube",
  ".docker/config.json",
  ".netrc",
  ".git-credentials",
  ".config/git/credentials",
  ".config/gh",
  ".config/hub",
  ".npmrc",
  ".yarnrc",
  ".pypirc",
  ".gem/credentials",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".terraform.d/credentials.tfrc.json",
  ".vault-token",
  ".pgpass",
  ".my.cnf",
  ".password-store",
  ".local/share/keyrings",
  ".mini-agent",
] as const;

/** The bwrap arguments that hide paths, split by where they go relative to the workspace bind. */
export interface HidingMounts {
  /** Before the workspace is bound: hidden paths outside the workspace or holding it. */
  before: string[];
  /** After the workspace is bound: folders above made read-only, paths inside it hidden. */
  after: string[];
}

/**
 * Mounts that hide the credential stores under `env.HOME`, `env.MINI_AGENT_HOME` and `extra`:
 * an empty read-only tmpfs over a folder, `/dev/null` over a file (reads are empty, writes are
 * lost); paths that do not exist are skipped. The workspace itself is never hidden: a hidden folder holding it stays hidden
 * except for the workspace, bound back inside it.
 */
export function hidingMounts(
  workspace: string,
  env: NodeJS.ProcessEnv,
  extra: string[] = [],
): HidingMounts {
  const wanted = [
    ...(env.HOME ? credentialStores.map((store) => join(env.HOME as string, store)) : []),
    ...(env.MINI_AGENT_HOME ? [env.MINI_AGENT_HOME] : []),
    ...extra,
  ];
  const before: string[] = [];
  const after: string[] = [];
  const real = [...new Set(wanted.flatMap(realPath))];
  // A path inside another hidden one is hidden with it (and bwrap cannot mount inside it).
  const outermost = real.filter((path) => !real.some((other) => strictlyWithin(other, path)));
  for (const path of outermost) {
    if (path === workspace) continue;
    const folder = statSync(path).isDirectory();
    // A plain bind made in the user namespace is `nodev`: /dev/null would not open there.
    const hide = folder ? ["--tmpfs", path] : ["--dev-bind", "/dev/null", path];
    if (strictlyWithin(workspace, path)) {
      after.push(...hide, ...(folder ? ["--remount-ro", path] : []));
    } else {
      before.push(...hide);
      if (folder) after.unshift("--remount-ro", path);
    }
  }
  return { before, after };
}

/** `path` with its symlinks resolved, or nothing when it does not exist. */
function realPath(path: string): string[] {
  try {
    return [realpathSync(path)];
  } catch {
    return [];
  }
}
