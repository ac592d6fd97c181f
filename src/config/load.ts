import { constants } from "node:fs";
import { lstat, open, readlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { contentHash } from "../crypto.js";
import { projectRoot } from "../project/root.js";
import { systemErrorMeaning } from "../system-errors.js";
import { firstInvalidUtf8 } from "../tools/utf8.js";
import { loadTrust, type TrustEntry } from "../trust/trust.js";
import { visible } from "../visible.js";
import { ConfigError, parseConfigText } from "./parse.js";
import type { ConfigFile } from "./schema.js";

/** One configuration file that was read and checked. */
export interface ConfigLayer {
  file: string;
  values: ConfigFile;
}

/** The project's file as the trust record sees it. */
export type ProjectConfig =
  | { state: "none"; file: string }
  /** There, but not a file that can be read (a link, a FIFO, not UTF-8, too big): skipped. */
  | { state: "unusable"; file: string; problem: string }
  | { state: "trusted"; file: string; layer: ConfigLayer }
  | { state: "untrusted"; file: string; entry: TrustEntry; text: string };

export interface LoadedConfig {
  user?: ConfigLayer;
  project: ProjectConfig;
  /** The project root the project file belongs to. */
  root: string;
  /** The state folder the user file and the trust record are in. */
  stateHome: string;
  /** Lines for stderr: a skipped project file, a damaged trust record. */
  notices: string[];
}

export interface LoadOptions {
  /** The state folder (`$MINI_AGENT_HOME`). */
  stateHome: string;
  /** The workspace's real path. */
  workspace: string;
  /** Asks the person at the terminal whether to trust the project file; absent: no one to ask. */
  ask?: (question: string) => Promise<boolean>;
  home?: string;
  /**
   * A user file that cannot be used is left out (with its line in `notices`) instead of thrown:
   * for the commands that fix things (`config path`, `trust --revoke`), which need none of it.
   */
  skipBadUserFile?: boolean;
}

/** The user's configuration file. */
export function userConfigFile(stateHome: string): string {
  return join(stateHome, "config.json");
}

/** A project's configuration file. */
export function projectConfigFile(root: string): string {
  return join(root, ".mini-agent", "config.json");
}

/** The trust record's name for a project's configuration file. */
export const CONFIG_TRUST_NAME = "config.json";

/**
 * Reads the user file and the project file (one open each when there are none). A bad user
 * file throws one `ConfigError` line. The project file is checked, and used, only when the trust
 * record holds its current hash, or when the person at the terminal trusts it now; otherwise it
 * is skipped with one notice, whatever it holds.
 */
export async function loadConfig(options: LoadOptions): Promise<LoadedConfig> {
  const userFile = userConfigFile(options.stateHome);
  const notices: string[] = [];
  const [user, root] = await Promise.all([
    readUserLayer(userFile).catch((error: unknown) => {
      if (!(error instanceof ConfigError) || options.skipBadUserFile !== true) throw error;
      notices.push(`${error.message}: skipped`);
      return undefined;
    }),
    projectRoot(options.workspace, options.home === undefined ? {} : { home: options.home }),
  ]);
  const file = projectConfigFile(root.path);
  const loaded = (project: ProjectConfig): LoadedConfig => ({
    ...(user && { user }),
    project,
    root: root.path,
    stateHome: options.stateHome,
    notices,
  });
  let text: string | undefined;
  try {
    text = await readConfigFile(file, false);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    notices.push(`${error.message}: skipped`);
    return loaded({ state: "unusable", file, problem: error.message });
  }
  if (text === undefined) return loaded({ state: "none", file });
  const entry: TrustEntry = { kind: "config", name: CONFIG_TRUST_NAME, hash: contentHash(text) };
  const trust = await loadTrust(options.stateHome, root.path);
  if (trust.warning !== undefined) notices.push(trust.warning);
  let trusted = trust.isTrusted(entry.kind, entry.name, entry.hash);
  if (!trusted && options.ask) {
    trusted = await options.ask(
      `Trust the project configuration ${visible(file)}? It may set the model and narrow the sandbox and rules. [y/N] `,
    );
    if (trusted) await trust.trust([entry]);
  }
  if (!trusted) {
    notices.push(
      `${file} is not trusted, so it is not read (mini-agent trust reads it from now on)`,
    );
    return loaded({ state: "untrusted", file, entry, text });
  }
  return loaded({
    state: "trusted",
    file,
    layer: { file, values: parseConfigText(text, file, "project") },
  });
}

/** The user's file, read and checked; undefined when there is none. */
async function readUserLayer(file: string): Promise<ConfigLayer | undefined> {
  const text = await readConfigFile(file, true);
  return text === undefined ? undefined : { file, values: parseConfigText(text, file, "user") };
}

/** A configuration is a few lines: a file bigger than this is refused before it is read. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The text of a settings file, or undefined when there is none; any other reason it cannot be
 * used is one `ConfigError` line. Opened without blocking (a FIFO there would hang the start);
 * only a regular UTF-8 file of at most 1 MiB is read. The user's file may be a link (into a
 * dotfiles folder); a project's may not, nor be reached through one (`.mini-agent` a link out of
 * the project): the path the opened file really has must be `file` itself.
 */
export async function readConfigFile(file: string, follow: boolean): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (follow ? 0 : constants.O_NOFOLLOW);
  try {
    handle = await open(file, flags);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A link whose file is gone is no absent file: the settings it held would vanish unseen.
    if (code === "ENOENT" && follow && (await lstat(file).catch(() => undefined))?.isSymbolicLink())
      throw new ConfigError(`${file}: is a link to a file that does not exist`);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    // A socket (or a device with nothing behind it) cannot be opened: no regular file either.
    if (code === "ENXIO") throw new ConfigError(`${file}: is not a regular file`);
    if (code === "ELOOP" && follow)
      throw new ConfigError(`${file}: is a link that leads back to itself`);
    if (code === "ELOOP")
      throw new ConfigError(`${file}: is a symbolic link; make it a regular file`);
    const meaning = code === undefined ? "unknown error" : systemErrorMeaning(code);
    throw new ConfigError(
      `${file}: cannot be read (${meaning === code ? code : `${meaning}, ${code}`})`,
    );
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new ConfigError(`${file}: is not a regular file`);
    if (!follow && (await reachedThroughLink(file, handle.fd)))
      throw new ConfigError(
        `${file}: is reached through a symbolic link; make its folder a real one`,
      );
    if (info.size > MAX_CONFIG_BYTES) throw new ConfigError(`${file}: is larger than 1 MiB`);
    const bytes = await handle.readFile();
    if (bytes.length > MAX_CONFIG_BYTES) throw new ConfigError(`${file}: is larger than 1 MiB`);
    if (firstInvalidUtf8(bytes) !== -1) throw new ConfigError(`${file}: is not UTF-8 text`);
    return bytes.toString("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * Whether the file open as `fd` is somewhere else than `file` (a real path): what the kernel
 * says it opened (`/proc/self/fd`), or where there is no such folder, whether `file`'s folder is
 * a link.
 */
async function reachedThroughLink(file: string, fd: number): Promise<boolean> {
  const opened = await readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
  if (opened !== undefined) return opened !== file;
  const folder = await lstat(dirname(file)).catch(() => undefined);
  return folder?.isSymbolicLink() !== false;
}
