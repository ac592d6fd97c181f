import { lstat, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { contentHash, nodeCrypto } from "../crypto.js";
import { systemErrorMeaning } from "../system-errors.js";

/**
 * The workspace trust record: which of a project's files that can run code or change what runs
 * the user has approved, by content. The state folder keeps, per project root, the sha256 of each
 * `.mcp.json` entry (`mcp`), of `.mini-agent/config.json` whole (`config`) and of each project
 * skill's `SKILL.md` (`skill`). A changed file has another hash, so it is untrusted again: a file
 * the model wrote is never loaded silently on the next run.
 *
 * The record is one file per project root, `trust/<sha256 of the root>.json`, mode 0600, written
 * whole to a temporary file and renamed over the old one. A file that cannot be read as a record
 * trusts nothing and says so in one line (`warning`); it is never the reason a run stops.
 */

export type TrustKind = "mcp" | "config" | "skill";

/** One approved thing: its kind, its name (server, `config.json`, skill) and its content hash. */
export interface TrustEntry {
  kind: TrustKind;
  name: string;
  hash: string;
}

export interface WorkspaceTrust {
  /** The project root this record is for. */
  readonly root: string;
  /** One line when the record on disk was damaged (then nothing is trusted). */
  readonly warning?: string;
  /** Whether `name` of `kind` is trusted with exactly this content hash. */
  isTrusted(kind: TrustKind, name: string, hash: string): boolean;
  /** Everything trusted now, sorted by kind and name. */
  entries(): TrustEntry[];
  /** Adds (or updates) these entries and writes the record. */
  trust(entries: readonly TrustEntry[]): Promise<void>;
  /** Forgets the named entries, or every entry of this project when none are named. */
  revoke(which?: readonly Pick<TrustEntry, "kind" | "name">[]): Promise<void>;
}

const Hashes = Type.Record(Type.String(), Type.String({ pattern: "^[0-9a-f]{64}$" }));
const RecordSchema = Type.Object({
  version: Type.Literal(1),
  root: Type.String(),
  mcp: Hashes,
  config: Hashes,
  skill: Hashes,
});
type TrustRecord = Static<typeof RecordSchema>;

const KINDS: readonly TrustKind[] = ["mcp", "config", "skill"];

/**
 * A JSON value as one canonical text: object keys sorted (by code unit) at every level, no
 * spaces. Two entries that differ only in key order or layout have the same text, hence hash.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    const fields = keys.map(
      (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
    );
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The file that holds the record of `projectRoot` in `stateHome`. */
export function trustFile(stateHome: string, projectRoot: string): string {
  return join(stateHome, "trust", `${contentHash(projectRoot)}.json`);
}

/** Reads the trust record of `projectRoot`; a missing one trusts nothing, a damaged one too. */
export async function loadTrust(stateHome: string, projectRoot: string): Promise<WorkspaceTrust> {
  const file = trustFile(stateHome, projectRoot);
  const { record, warning } = await readRecord(file, projectRoot);
  let current = record;
  const save = async (next: TrustRecord) => {
    await writeAtomically(file, `${JSON.stringify(next, null, 2)}\n`);
    current = next;
  };
  return {
    root: projectRoot,
    ...(warning !== undefined && { warning }),
    isTrusted: (kind, name, hash) =>
      Object.hasOwn(current[kind], name) && current[kind][name] === hash,
    entries: () =>
      KINDS.flatMap((kind) =>
        Object.keys(current[kind])
          .sort()
          .map((name) => ({ kind, name, hash: current[kind][name] ?? "" })),
      ),
    trust: async (entries) => {
      const next = copy(current);
      for (const { kind, name, hash } of entries) {
        if (!/^[0-9a-f]{64}$/.test(hash)) throw new Error(`not a sha256 hash for ${kind} ${name}`);
        next[kind][name] = hash;
      }
      await save(next);
    },
    revoke: async (which) => {
      const next = which === undefined ? empty(projectRoot) : copy(current);
      for (const { kind, name } of which ?? []) delete next[kind][name];
      await save(next);
    },
  };
}

function empty(root: string): TrustRecord {
  return { version: 1, root, mcp: {}, config: {}, skill: {} };
}

function copy(record: TrustRecord): TrustRecord {
  return {
    version: 1,
    root: record.root,
    mcp: { ...record.mcp },
    config: { ...record.config },
    skill: { ...record.skill },
  };
}

async function readRecord(
  file: string,
  root: string,
): Promise<{ record: TrustRecord; warning?: string }> {
  const damaged = (why: string) => ({
    record: empty(root),
    warning: `the trust record ${file} is damaged (${why}): nothing in this project is trusted until you trust it again`,
  });
  try {
    // Only a regular file is read: a FIFO put there would block the reader.
    const info = await lstat(file);
    if (!info.isFile()) return damaged("not a regular file");
    // A record another user could have written approves nothing.
    const unsafe = foreign(info) ?? foreign(await lstat(join(file, "..")));
    if (unsafe !== undefined) return damaged(unsafe);
    const parsed: unknown = JSON.parse(await readFile(file, "utf8"));
    if (!Value.Check(RecordSchema, parsed)) return damaged("not a trust record");
    if (parsed.root !== root) return damaged("it names another project root");
    return { record: copy(parsed) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // No record: none was written (a state folder that is not there, or whose path runs through a file).
    if (code === "ENOENT" || code === "ENOTDIR") return { record: empty(root) };
    if (error instanceof SyntaxError) return damaged("not valid JSON");
    if (code === undefined) return damaged("unreadable");
    // It could not be read (no permission, a link loop): nothing says it is damaged.
    return {
      record: empty(root),
      warning: `the trust record ${file} cannot be read (${systemErrorMeaning(code)}, ${code}): nothing in this project is trusted until it can be`,
    };
  }
}

/** Why another user could have written what `info` describes, if they could. */
function foreign(info: { uid: number; mode: number }): string | undefined {
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) return "owned by another user";
  if ((info.mode & 0o022) !== 0) return "writable by others";
  return undefined;
}

/** Writes `text` to a new 0600 file beside `file` and renames it over `file`. */
async function writeAtomically(file: string, text: string): Promise<void> {
  const dir = join(file, "..");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = join(dir, `.${nodeCrypto().randomUUID()}.tmp`);
  const handle = await open(temporary, "wx", 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
