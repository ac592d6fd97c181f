import { readFile, realpath, stat } from "node:fs/promises";
import { relative, resolve } from "node:path";
import { within } from "../paths.js";
import { canonicalJson, contentHash } from "../trust/trust.js";
import type { McpServerConfig } from "./config.js";

/**
 * The workspace files a project server's command line or `env` values name, made part of what trusting it
 * covers. An entry `node srv.mjs` is trusted with the content of `srv.mjs` as it is now: the model
 * can rewrite a workspace file with its tools, and a server runs outside the sandbox, so a program
 * the model changed is never started silently on the next run (its entry reads as untrusted).
 *
 * A word names a file when, resolved against the server's working folder, it is a regular file
 * whose real path lies inside the project root or the workspace; `--flag=FILE` counts too. What
 * those programs load in turn (imports, `node_modules`, a folder given as a program) is not
 * covered: the docs say so.
 */

/** A file bigger than this is known by its size and modification time instead of its bytes. */
const HASHED_BYTES = 64 * 1024 * 1024;

export interface ProgramFolders {
  /** The project root and the workspace: where the model can write. */
  root: string;
  workspace: string;
}

/** `server` with the files its command line and env values name (relative to the root) and their hash. */
export async function withPrograms(
  server: McpServerConfig,
  folders: ProgramFolders,
): Promise<McpServerConfig> {
  const covered = await coverageOf(server.entry, folders);
  if (covered.programs.length === 0) return server;
  return { ...server, ...covered };
}

/**
 * What trusting `entry` covers as things are now: its hash (of the entry, with the content of
 * the workspace files it names when there are any) and those files. Computed again before every
 * start and restart, so a file changed since it was trusted gives another hash.
 */
export async function coverageOf(
  entry: McpServerConfig["entry"],
  folders: ProgramFolders,
): Promise<{ hash: string; programs: string[] }> {
  const plain = { hash: contentHash(canonicalJson(entry)), programs: [] };
  if (entry.type === "http") return plain;
  const base = resolve(folders.workspace, entry.cwd ?? ".");
  const files: Record<string, string> = {};
  // An env value names files too: NODE_OPTIONS="--require ./pre.js", PYTHONSTARTUP=x.py.
  const envWords = Object.values(entry.env ?? {}).flatMap((value) => value.split(/\s+/));
  for (const word of commandWords([entry.command, ...(entry.args ?? []), ...envWords])) {
    const found = await workspaceFile(resolve(base, word), folders);
    if (found !== undefined) files[relative(folders.root, found.path) || "."] = found.hash;
  }
  const programs = Object.keys(files).sort();
  if (programs.length === 0) return plain;
  return { hash: contentHash(canonicalJson({ entry, programs: files })), programs };
}

/** Each word, and the value of each `--flag=value` word. */
function commandWords(words: readonly string[]): string[] {
  const found = new Set<string>();
  for (const word of words) {
    if (word === "") continue;
    found.add(word);
    const equals = word.indexOf("=");
    if (word.startsWith("-") && equals > 0 && equals < word.length - 1) {
      found.add(word.slice(equals + 1));
    }
  }
  return [...found];
}

async function workspaceFile(
  path: string,
  folders: ProgramFolders,
): Promise<{ path: string; hash: string } | undefined> {
  const real = await realpath(path).catch(() => undefined);
  if (real === undefined) return undefined;
  if (!within(folders.root, real) && !within(folders.workspace, real)) return undefined;
  const info = await stat(real).catch(() => undefined);
  if (info === undefined || !info.isFile()) return undefined;
  if (info.size > HASHED_BYTES) {
    return { path: real, hash: `size ${info.size} modified ${info.mtimeMs}` };
  }
  return { path: real, hash: contentHash(await readFile(real)) };
}
