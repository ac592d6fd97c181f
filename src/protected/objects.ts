import { createReadStream } from "node:fs";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { createInflate } from "node:zlib";
import { nodeCrypto } from "../node-crypto.js";
import type { SafeGit } from "./git.js";
import { runSafeGit } from "./git.js";
import { bytesOf, type Found, identity, type RawPath, shownOf } from "./scan.js";

/**
 * git's object store after a sandboxed command. git reads an object by its name and does not
 * check, when it checks a tree out, that the bytes are the object the name says: a command that
 * puts another tree's bytes under the name of a branch's tree makes the user's `git checkout`
 * write what it likes. So each loose object the command made or changed is read and hashed (its
 * name must be the hash of its bytes), each pack it made or changed is checked by `git
 * verify-pack`, and what fails is moved aside (the object is then missing: git stops with an
 * error instead of writing the file). git's caches of the store (commit-graph, multi-pack-index,
 * bitmaps, reverse indexes) a command wrote are removed: git reads a commit's tree from the
 * commit-graph, and makes them again when it needs them.
 */

/** How long checking one command's new objects may take before the rest is taken as failed. */
const CHECK_MS = 20_000;

const ASIDE = ".mini-agent-removed";

type Kind = "loose" | "pack" | "cache" | "other";

function kindOf(inner: string): Kind {
  const lower = inner.toLowerCase();
  if (/^objects\/[0-9a-f]{2}\/(?:[0-9a-f]{38}|[0-9a-f]{62})$/.test(lower)) return "loose";
  if (/^objects\/pack\/[^/]+\.(?:pack|idx)$/.test(lower)) return "pack";
  if (
    /^objects\/info\/commit-graphs?(?:\/|$)/.test(lower) ||
    /^objects\/pack\/multi-pack-index/.test(lower) ||
    /^objects\/pack\/[^/]+\.(?:bitmap|rev)$/.test(lower)
  )
    return "cache";
  return "other";
}

/**
 * Checks what the command made or changed in git's object stores (`before`: the walk before it,
 * `after`: the walk after). One line per object or pack moved aside and per cache removed.
 */
export async function settleObjects(
  before: Found,
  after: Found,
  git: SafeGit | undefined,
  shown: (path: RawPath) => string,
): Promise<string[]> {
  const lines: string[] = [];
  const deadline = performance.now() + CHECK_MS;
  const packs = new Map<string, { gitFolder: RawPath; idx: RawPath }>();
  for (const [path, entry] of after.objectFiles) {
    const was = before.objectFiles.get(path);
    if (was !== undefined && identity(was.info) === identity(entry.info)) continue;
    const kind = kindOf(entry.inner);
    if (entry.info.isSymbolicLink()) {
      // git follows a link in its object store wherever it leads: an ordinary folder of the
      // workspace, where the check after a command does not look.
      lines.push(await moveAside(path, "a link in git's objects leads where no check looks"));
    } else if (kind === "cache") {
      const failed = await rm(bytesOf(path), { recursive: true, force: true }).then(
        () => undefined,
        (error: Error) => error.message,
      );
      lines.push(
        failed === undefined
          ? `removed ${shown(path)}, a cache of git's objects the command wrote (git makes it again; it could name other trees)`
          : `could not remove ${shown(path)}, a cache of git's objects the command wrote: ${failed}`,
      );
    } else if (kind === "loose") {
      const fine =
        performance.now() < deadline && entry.info.isFile() && (await hashesTo(path, entry.inner));
      if (!fine) lines.push(await moveAside(path, "its bytes are not the object its name says"));
    } else if (kind === "pack") {
      const base = path.replace(/\.(?:pack|idx)$/i, "");
      packs.set(base, { gitFolder: entry.gitFolder, idx: `${base}.idx` });
    }
  }
  for (const [base, { gitFolder, idx }] of packs) {
    const left = deadline - performance.now();
    const checked =
      git === undefined
        ? { ok: false as const, reason: "no git outside the workspace to check it with" }
        : left <= 0
          ? { ok: false as const, reason: "no time left to check it" }
          : await runSafeGit(git, shownOf(gitFolder), ["verify-pack", shownOf(idx)], "", left);
    if (checked.ok) continue;
    for (const suffix of [".pack", ".idx", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes"]) {
      const file = `${base}${suffix}`;
      if (!after.objectFiles.has(file) && suffix !== ".idx" && suffix !== ".pack") continue;
      lines.push(await moveAside(file, `a pack git could not verify (${checked.reason})`));
    }
  }
  return lines;
}

/** Whether the loose object at `path` inflates to bytes whose hash is its name. */
async function hashesTo(path: RawPath, inner: string): Promise<boolean> {
  const name = inner.slice("objects/".length).replace("/", "").toLowerCase();
  const hash = nodeCrypto().createHash(name.length === 40 ? "sha1" : "sha256");
  let head = "";
  const read = new Promise<boolean>((resolve) => {
    const inflate = createInflate();
    inflate.on("data", (chunk: Buffer) => {
      if (head.length < 32) head += chunk.subarray(0, 32).toString("latin1");
      hash.update(chunk);
    });
    inflate.on("end", () => resolve(true));
    inflate.on("error", () => resolve(false));
    const file = createReadStream(bytesOf(path));
    file.on("error", () => resolve(false));
    file.pipe(inflate);
  });
  if (!(await read)) return false;
  return /^(?:blob|tree|commit|tag) \d+\0/.test(head) && hash.digest("hex") === name;
}

async function moveAside(path: RawPath, why: string): Promise<string> {
  const failed = await rename(bytesOf(path), bytesOf(`${path}${ASIDE}`)).then(
    () => undefined,
    (error: Error) => error.message,
  );
  const name = shownOf(path);
  return failed === undefined
    ? `moved aside ${name.slice(name.lastIndexOf("/") + 1)} in git's objects (${why}): git now says it is missing instead of writing it`
    : `could not move aside ${name} (${why}): ${failed}`;
}

/**
 * An index the command changed loses its optional extensions (those whose signature begins
 * with a capital): the cache-tree (`TREE`) names the tree of each folder, which `git commit` and
 * `git stash` take instead of the entries, so a command could make it name a tree holding a
 * protected file while every entry is clean; resolve-undo (`REUC`), the untracked cache and the
 * others are caches too. Required extensions (a split index's `link`, `sdir`) are kept. The
 * trailing hash is computed again. Returns a line when the index could not be read this way.
 */
export async function dropIndexCaches(
  index: RawPath,
  shown: string,
  earlier: Buffer | undefined,
): Promise<string[]> {
  const bytes = await readFile(bytesOf(index)).catch(() => undefined);
  if (bytes === undefined) return [];
  const parsed = parseIndex(bytes);
  if (parsed === undefined) {
    // Not an index this check can read: the one from before the command, whole, if it was kept.
    if (earlier === undefined)
      return [`could not read ${shown} as git's index, and it was not kept: its caches are left`];
    await replaceFile(index, earlier);
    return [`put back ${shown} as it was before the command: it could not be read as git's index`];
  }
  const kept = parsed.extensions.filter(({ signature }) => !/^[A-Z]/.test(signature));
  if (kept.length === parsed.extensions.length) return [];
  const body = Buffer.concat([
    bytes.subarray(0, parsed.entriesEnd),
    ...kept.map(({ start, end }) => bytes.subarray(start, end)),
  ]);
  const algorithm = parsed.hashLength === 20 ? "sha1" : "sha256";
  const trailer = parsed.skipHash
    ? Buffer.alloc(parsed.hashLength)
    : nodeCrypto().createHash(algorithm).update(body).digest();
  await replaceFile(index, Buffer.concat([body, trailer]));
  return [];
}

/** Writes `bytes` beside `path` and renames it over `path`. */
export async function replaceFile(path: RawPath, bytes: Buffer): Promise<void> {
  const aside = `${path}.mini-agent-${process.pid}`;
  await writeFile(bytesOf(aside), bytes, { mode: 0o644 });
  await rename(bytesOf(aside), bytesOf(path));
}

interface ParsedIndex {
  hashLength: number;
  skipHash: boolean;
  entriesEnd: number;
  extensions: { signature: string; start: number; end: number }[];
}

/** The layout of a version 2, 3 or 4 index, or `undefined` when the bytes are not one. */
export function parseIndex(bytes: Buffer): ParsedIndex | undefined {
  if (bytes.length < 12 + 20 || bytes.toString("latin1", 0, 4) !== "DIRC") return undefined;
  const version = bytes.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = bytes.readUInt32BE(8);
  for (const hashLength of [20, 32]) {
    const body = bytes.subarray(0, bytes.length - hashLength);
    const trailer = bytes.subarray(bytes.length - hashLength);
    const skipHash = trailer.every((byte) => byte === 0);
    const digest = nodeCrypto()
      .createHash(hashLength === 20 ? "sha1" : "sha256")
      .update(body)
      .digest();
    if (!skipHash && !digest.equals(trailer)) continue;
    const layout = entriesAndExtensions(bytes, version, count, hashLength);
    if (layout !== undefined) return { hashLength, skipHash, ...layout };
  }
  return undefined;
}

function entriesAndExtensions(
  bytes: Buffer,
  version: number,
  count: number,
  hashLength: number,
): Omit<ParsedIndex, "hashLength" | "skipHash"> | undefined {
  const end = bytes.length - hashLength;
  let at = 12;
  for (let entry = 0; entry < count; entry++) {
    const start = at;
    const flagsAt = at + 40 + hashLength;
    if (flagsAt + 2 > end) return undefined;
    const flags = bytes.readUInt16BE(flagsAt);
    at = flagsAt + 2 + (version >= 3 && (flags & 0x4000) !== 0 ? 2 : 0);
    if (version === 4) {
      // The number of bytes of the previous path to drop, as git's varint; then the rest, NUL-ended.
      while (at < end && (bytes[at] ?? 0) & 0x80) at++;
      at++;
      const nul = bytes.indexOf(0, at);
      if (nul === -1 || nul >= end) return undefined;
      at = nul + 1;
    } else {
      const nul = bytes.indexOf(0, at);
      if (nul === -1 || nul >= end) return undefined;
      // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
      at = start + ((nul - start + 8) & ~7);
    }
    if (at > end) return undefined;
  }
  const entriesEnd = at;
  const extensions: ParsedIndex["extensions"] = [];
  while (at < end) {
    if (at + 8 > end) return undefined;
    const signature = bytes.toString("latin1", at, at + 4);
    const size = bytes.readUInt32BE(at + 4);
    if (at + 8 + size > end) return undefined;
    extensions.push({ signature, start: at, end: at + 8 + size });
    at += 8 + size;
  }
  return { entriesEnd, extensions };
}
