import { readFile, realpath, stat } from "node:fs/promises";
import { relative, resolve } from "node:path";
import { contentHash } from "../crypto.js";
import { resolveCommand } from "../trust/command-files.js";
import { canonicalJson } from "../trust/trust.js";
import type { McpServerConfig } from "./config.js";

/**
 * The workspace files a project server's command line runs or loads, made part of what trusting
 * it covers (`resolveCommand` finds them as the program would). An entry `node srv` is trusted
 * with the content of `srv.js` as it is now: the model can rewrite a workspace file with its
 * tools, and a server runs outside the sandbox, so a program the model changed is never started
 * silently (its entry reads as untrusted, and a restart is refused). A path tried before the one
 * found counts while absent: a file the model creates there would run instead. What those
 * programs load in turn (imports, `node_modules`) is not covered: the docs say so; where the
 * command line itself does not say what runs (`sh -c`, `node -e`), `unknown` says it in words.
 */

/** A file bigger than this is known by its size and modification time instead of its bytes. */
const HASHED_BYTES = 64 * 1024 * 1024;

export interface ProgramFolders {
  /** The project root and the workspace: where the model can write. */
  root: string;
  workspace: string;
  /** The environment a server inherits (its `PATH` and `NODE_OPTIONS` decide what runs). */
  env: NodeJS.ProcessEnv;
}

/** `server` with the files its command line runs or loads (relative to the root) and their hash. */
export async function withPrograms(
  server: McpServerConfig,
  folders: ProgramFolders,
): Promise<McpServerConfig> {
  const { hash, programs, unknown } = await coverageOf(server.entry, folders);
  return {
    ...server,
    hash,
    ...(programs.length > 0 && { programs }),
    ...(unknown.length > 0 && { unknown }),
  };
}

/**
 * What trusting `entry` covers as things are now: its hash (of the entry, with the state of the
 * workspace files its command line runs or loads when there are any), the files present, and
 * what is not known of what it runs. Computed again before every start and restart, so a file
 * changed since it was trusted gives another hash.
 */
export async function coverageOf(
  entry: McpServerConfig["entry"],
  folders: ProgramFolders,
): Promise<{ hash: string; programs: string[]; unknown: string[] }> {
  const plain = { hash: contentHash(canonicalJson(entry)), programs: [], unknown: [] };
  if (entry.type === "http") return plain;
  const resolved = await resolveCommand(
    {
      command: entry.command,
      args: entry.args ?? [],
      env: entry.env ?? {},
      inherited: folders.env,
      cwd: resolve(folders.workspace, entry.cwd ?? "."),
    },
    folders,
  );
  const root = await realpath(folders.root).catch(() => folders.root);
  const files: Record<string, string> = {};
  const programs: string[] = [];
  for (const file of resolved.files) {
    const name = relative(root, file.path) || ".";
    files[name] = file.present ? await fileHash(file.path) : "absent";
    if (file.present) programs.push(name);
  }
  if (resolved.files.length === 0) return { ...plain, unknown: resolved.unknown };
  const hash = contentHash(canonicalJson({ entry, programs: files }));
  return { hash, programs: programs.sort(), unknown: resolved.unknown };
}

async function fileHash(path: string): Promise<string> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return "absent";
  if (info.size > HASHED_BYTES) return `size ${info.size} modified ${info.mtimeMs}`;
  return contentHash(await readFile(path).catch(() => ""));
}
