import { constants } from "node:fs";
import { access, realpath } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { strictlyWithin } from "../paths.js";
import { BlobStore, snapshotStoreFor } from "../session/blobs.js";
import { systemErrorMeaning } from "../system-errors.js";
import { type BoundaryOptions, displayPath, type Resolved } from "../tools/path.js";
import { visible } from "../visible.js";
import { DEFAULT_FILE_CAP, sameState } from "./changes.js";
import { shortDiff } from "./diff.js";
import { deepestFirst, type FolderAction, planFolders } from "./folders.js";
import { type BashHistory, type FileHistory, sessionHistory } from "./history.js";
import { type KeptBytes, keptBytes, readNode } from "./nodes.js";
import type { FileState, Owner, ReadState } from "./read-state.js";
import { droppedWhy } from "./store-bound.js";

/** Files decided, or put back, at once: their reads and writes overlap. */
export const AT_ONCE = 16;

export interface RewindOptions {
  /** The session file. */
  session: string;
  workspace: string;
  /** mini-agent's state folder: never written by a rewind. */
  stateDir?: string;
  /** The prompt to go back to just before: 1 for the first. */
  to: number;
}

/** What a rewind does to one file; `expect` is what the file must still hold when it is done. */
export type FileAction =
  | {
      kind: "restore";
      path: string;
      target: Resolved;
      /** The bytes to write, or the file kept by a hard link (a git object) to link back. */
      bytes: Buffer | { linked: string; hash: string };
      mode: number;
      expect: FileState;
      /** The owner and group it had, given back (recorded by a bash snapshot). */
      owner?: Owner;
    }
  | { kind: "delete"; path: string; target: Resolved; expect: FileState }
  | { kind: "refuse"; path: string; reason: string; diff: string[] }
  /** A folder bash removed, made again (its path ends with `/`); its mode comes last. */
  | { kind: "make-folder"; path: string; target: Resolved; expect: FileState }
  /** A folder's mode as it was; `quiet` when the folder was made again by this rewind. */
  | { kind: "folder-mode"; path: string; target: Resolved; mode: number; quiet: boolean }
  /** A link bash removed or changed, made again with its target. */
  | { kind: "make-link"; path: string; target: Resolved; link: string; expect: FileState }
  | FolderAction;

export interface RewindPlan {
  to: number;
  /** The workspace's real path, in which every action's path lies. */
  realRoot: string;
  /**
   * How the names of the temporary files of this session's rewinds begin: one a killed rewind
   * left beside a file is removed by the next (the session's lock keeps any other from writing one).
   */
  tempPrefix: string;
  /** The user's prompts in the session. */
  prompts: number;
  /** The text of prompt `to`. */
  prompt: string;
  /**
   * One action per file the agent changed from prompt `to` on and that differs now, by path; then
   * one per folder it made since that is still there (its path ends with `/`), deepest first.
   */
  actions: FileAction[];
  /** bash calls from prompt `to` on: what they changed is never restored. */
  bashCalls: number;
  /** What those calls changed, where it is known (a git repository): listed, not restored. */
  bash: BashHistory;
  /** The conversation already went back to just before prompt `to`: this finishes that rewind. */
  again: boolean;
}

export type FileOutcome =
  /** `note`: what of it could not be put back as it was (its owner when not root). */
  | { kind: "restored"; path: string; note?: string }
  | { kind: "deleted"; path: string }
  | { kind: "removed"; path: string }
  | { kind: "refused"; path: string; reason: string }
  | { kind: "failed"; path: string; reason: string };

/** A rewind asked of what the session does not have: a prompt number out of its range. */
export class RewindError extends Error {
  override name = "RewindError";
}

/**
 * What a rewind of files to just before prompt `to` would do, changing nothing: for each file
 * the agent changed since, restore it (its bytes and mode then, from the session's blob store)
 * or delete it (the agent created it) when it still holds exactly what the agent left, bytes
 * and mode; refuse it, with a short diff, when anyone changed it since; pass over a file that
 * is already as it was.
 */
export async function planRewind(options: RewindOptions): Promise<RewindPlan> {
  const { to } = options;
  const history = await sessionHistory(options.session, to);
  if (!history.again && (!Number.isInteger(to) || to < 1 || to > history.prompts)) {
    const range = history.prompts === 1 ? "1" : `from 1 to ${history.prompts}`;
    throw new RewindError(
      history.prompts === 0
        ? "the session has no prompt to rewind to"
        : `the session has ${history.prompts} prompt${history.prompts === 1 ? "" : "s"}: --to must be ${range}`,
    );
  }
  const blobs = keptBytes([
    BlobStore.forSession(options.session),
    snapshotStoreFor(options.session),
  ]);
  const realRoot = await realpath(options.workspace);
  // The file's paths are relative to the folder the session was made in: never another's.
  const made = history.workspace;
  if (made === undefined || (await realpath(made).catch(() => made)) !== realRoot)
    throw new RewindError(
      `it was made in ${made === undefined ? "an unknown folder" : visible(made)}, not in this folder`,
    );
  const boundary: BoundaryOptions = { stateDir: options.stateDir };
  const dropped = droppedWhy(options.session);
  const context: Context = {
    realRoot,
    boundary,
    blobs,
    to,
    making: new Set(),
    made: [],
    ...(dropped !== undefined && { dropped }),
    realFolders: new Map(),
    writable: new Map(),
  };
  const actions: FileAction[] = [];
  // Folders by path, so a folder to make again is decided before what it holds; then the rest, a
  // few at once.
  const remade = history.files.filter((file) => file.original.node === "folder");
  for (const file of remade) actions.push(...(await decide(file, context)));
  const rest = history.files.filter((file) => file.original.node !== "folder");
  for (let at = 0; at < rest.length; at += AT_ONCE) {
    const decided = rest.slice(at, at + AT_ONCE).map((file) => decide(file, context));
    actions.push(...(await Promise.all(decided)).flat());
  }
  keepUnkeptBytes(actions, history.files, to);
  const deleted = new Set(actions.flatMap((a) => (a.kind === "delete" ? [a.path] : [])));
  const folders = await planFolders([...history.folders, ...context.made], realRoot, deleted);
  actions.push(...folders);
  actions.sort(inOrder);
  return {
    to,
    realRoot,
    tempPrefix: `.mini-agent-rewind-${basename(options.session, ".jsonl")}-`,
    prompts: history.prompts,
    prompt: history.prompt ?? "",
    actions,
    bashCalls: history.bashCalls,
    bash: history.bash,
    again: history.again,
  };
}

/**
 * A file a call made that holds the bytes another path had before prompt `to`, bytes that were not
 * kept (the command moved a file over the size limit): it is the only copy, so it is never removed.
 */
function keepUnkeptBytes(actions: FileAction[], files: FileHistory[], to: number): void {
  const unkept = new Map<string, string>();
  for (const { original, path } of files)
    if (original.unkept !== undefined && original.hash !== null && original.node === undefined)
      unkept.set(original.hash, path);
  if (unkept.size === 0) return;
  for (const [at, action] of actions.entries()) {
    const from = action.kind === "delete" ? unkept.get(action.expect.hash ?? "") : undefined;
    if (from === undefined) continue;
    actions[at] = {
      kind: "refuse",
      path: action.path,
      reason: `it holds the bytes ${from} had before prompt ${to}, which were not kept: it is kept`,
      diff: [],
    };
  }
}

interface Context {
  realRoot: string;
  boundary: BoundaryOptions;
  blobs: KeptBytes;
  to: number;
  /** Folders this rewind makes again: what they held is put back into them. */
  making: Set<string>;
  /** Folders bash made that are still as it left them: removed once emptied. */
  made: string[];
  /** Why the session's snapshot store was dropped, when it was. */
  dropped?: string;
  /** Each folder's real path, and why it cannot be written: asked once per folder. */
  realFolders: Map<string, Promise<string | undefined>>;
  writable: Map<string, Promise<string | undefined>>;
}

/** The answer kept for `key`, or `ask`'s, kept. */
function once<T>(kept: Map<string, Promise<T>>, key: string, ask: (key: string) => Promise<T>) {
  let answer = kept.get(key);
  if (!answer) {
    answer = ask(key);
    kept.set(key, answer);
  }
  return answer;
}

const same = (a: FileState, b: FileState | undefined) => b !== undefined && sameState(a, b);

/**
 * The order a rewind works in: folders bash removed are made again (outermost first), then each
 * file and link is put back or removed (by path), then the folders the agent made are removed
 * (deepest first), and folders get their modes last (deepest first), so a read-only folder is
 * filled before it is one.
 */
function inOrder(a: FileAction, b: FileAction): number {
  const [x, y] = [phase(a), phase(b)];
  if (x !== y) return x - y;
  const [p, q] = [key(a), key(b)];
  if (x === 2 || x === 3) return deepestFirst(p, q);
  return p < q ? -1 : p > q ? 1 : 0;
}

/** A file put back where bash left a folder comes after what that folder held is removed. */
const key = (action: FileAction) =>
  action.kind === "restore" && action.expect.node === "folder"
    ? `${action.path}/\u{10ffff}`
    : action.path.replace(/\/$/, "");

function phase(action: FileAction): number {
  switch (action.kind) {
    case "make-folder":
      return 0;
    case "delete":
    case "restore":
    case "make-link":
      return 1;
    case "refuse":
      // A folder kept (it is not empty) is told with the folders removed.
      return action.path.endsWith("/") ? 2 : 1;
    case "remove-folder":
      return 2;
    case "folder-mode":
      return 3;
  }
}

const octal = (mode: number | null) => (mode === null ? "none" : mode.toString(8).padStart(4, "0"));

async function decide(file: FileHistory, context: Context): Promise<FileAction[]> {
  const { path, original, left } = file;
  const refuse = (reason: string, diff: string[] = []): FileAction[] => [
    { kind: "refuse", path, reason, diff },
  ];
  const abs = join(context.realRoot, path);
  if (!strictlyWithin(context.realRoot, abs)) return refuse("its path leads outside the workspace");
  const target: Resolved = {
    path: abs,
    realRoot: context.realRoot,
    shown: displayPath(context.realRoot, abs),
    folder: false,
    boundary: context.boundary,
  };
  const folder = await once(context.realFolders, dirname(abs), (path) =>
    realpath(path).catch(() => undefined),
  );
  if (folder !== undefined && folder !== dirname(abs))
    return refuse("a folder on its path is now a link elsewhere");
  const now =
    folder === undefined
      ? { hash: null, mode: null, size: 0 }
      : await readNode(target, DEFAULT_FILE_CAP).catch((error: NodeJS.ErrnoException) => {
          if (error.code === undefined) throw error;
          return systemErrorMeaning(error.code);
        });
  if (typeof now === "string") return refuse(`it cannot be read (${now})`);
  if (!now) return refuse("it is no longer a regular file");
  if (same(original, now)) return [];
  const bytes =
    original.hash === null || original.node !== undefined
      ? Buffer.alloc(0)
      : context.blobs.get(original.hash);
  const diff = () =>
    original.unkept === undefined && bytes !== undefined && original.node === undefined
      ? shortDiff(path, context.to, original.hash === null ? null : bytes, nowBytes(now))
      : [];
  if (left === undefined)
    return refuse(
      `the agent's last change of it (call ${file.cutOff}) was cut off: what it left is unknown`,
      diff(),
    );
  if (now.node !== undefined && left.node === undefined && original.node === undefined)
    return refuse("it is no longer a regular file");
  const absent = (state: FileState) => state.hash === null && state.node === undefined;
  if (absent(now) && !absent(left)) return refuse("it was removed since the agent's last change");
  if (now.hash !== left.hash || now.node !== left.node || now.target !== left.target)
    return refuse("it changed since the agent's last change", diff());
  if (now.mode !== left.mode)
    return refuse(
      `its mode changed since the agent's last change (${octal(left.mode)} then, ${octal(now.mode)} now)`,
    );
  if (file.changedBefore !== undefined)
    return refuse(
      `it changed between the agent's changes (before call ${file.changedBefore}): that change would be lost`,
      diff(),
    );
  if (original.unkept !== undefined)
    return refuse(`its bytes before prompt ${context.to} were not kept (${original.unkept})`);
  if (original.node === "other")
    return refuse("it was a device, a FIFO or a socket: it is not made again");
  // A folder the rewind makes again is there, and writable, by the time what it holds goes back.
  if (!context.making.has(dirname(path))) {
    const writable = await once(context.writable, dirname(abs), (path) =>
      access(path, constants.W_OK).catch((error: NodeJS.ErrnoException) =>
        systemErrorMeaning(error.code ?? "EACCES"),
      ),
    );
    if (writable !== undefined) return refuse(`its folder cannot be written (${writable})`);
  }
  if (original.node === "folder") {
    context.making.add(path);
    const mode = original.mode ?? 0o755;
    const made = now.node !== "folder";
    const shown = `${path}/`;
    return [
      ...(made ? [{ kind: "make-folder" as const, path: shown, target, expect: now }] : []),
      { kind: "folder-mode", path: shown, target, mode, quiet: made },
    ];
  }
  if (original.node === "link")
    return [{ kind: "make-link", path, target, link: original.target ?? "", expect: now }];
  if (original.hash === null) {
    if (now.node !== "folder") return [{ kind: "delete", path, target, expect: now }];
    context.made.push(path);
    return [];
  }
  const linked = bytes === undefined ? context.blobs.linked(original.hash) : undefined;
  if (linked !== undefined) {
    const kept = { linked, hash: original.hash };
    return [
      { kind: "restore", path, target, bytes: kept, mode: original.mode ?? 0o444, expect: now },
    ];
  }
  if (bytes === undefined && context.dropped !== undefined && !context.blobs.has(original.hash))
    return refuse(
      `its bytes before prompt ${context.to} were dropped with the session's snapshot store (${context.dropped})`,
    );
  if (bytes === undefined)
    return refuse(
      context.blobs.has(original.hash)
        ? `its bytes before prompt ${context.to} in the session's blob store were altered (${original.hash})`
        : `its bytes before prompt ${context.to} are missing from the session's blob store (${original.hash})`,
    );
  const mode = original.mode ?? 0o644;
  const owner = original.owner;
  return [{ kind: "restore", path, target, bytes, mode, expect: now, ...(owner && { owner }) }];
}

/** The bytes of the file now: null when there is none, undefined when too big to read. */
const nowBytes = (now: ReadState) => (now.hash === null ? null : now.bytes);
