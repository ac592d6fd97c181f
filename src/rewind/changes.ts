import { lstat } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { realOr, strictlyWithin } from "../paths.js";
import { BlobStore, snapshotStoreFor } from "../session/blobs.js";
import type {
  BashChange,
  BashFile,
  FileBefore,
  FileChange,
  NodeState,
} from "../session/records.js";
import { type BashCall, isBashTool, type KeptOut } from "../tools/bash.js";
import { type BoundaryOptions, type Resolved, resolveInWorkspace } from "../tools/path.js";
import type { Tool, ToolCall, ToolResult } from "../types.js";
import { type FileState, type ReadState, readState } from "./read-state.js";
import { changesBetween, type Walk, WorkspaceSnapshot } from "./snapshot.js";
import { boundSnapshots, USER_SNAPSHOT_CAP } from "./store-bound.js";

/** Bytes of one file a session keeps before a change, unless the caller sets another cap. */
export const DEFAULT_FILE_CAP = 64 * 1024 * 1024;

/** The tools whose changes are tracked: each names its file in `path`. */
const TRACKED = new Set(["write", "edit"]);

/** A snapshot's state of a path as a change's state. */
export function fileState(state: NodeState | null): FileState {
  if (state === null) return { hash: null, mode: null };
  if ("hash" in state) {
    const { hash, mode, uid, gid } = state;
    const owner = uid === undefined || gid === undefined ? undefined : { uid, gid };
    return { hash, mode, ...(owner && { owner }) };
  }
  if ("link" in state) return { hash: null, mode: null, node: "link", target: state.link };
  return { hash: null, mode: state.mode, node: "folder" in state ? "folder" : "other" };
}

/** The same state: the same kind, and the same bytes and mode, or mode, or target. */
export function sameState(a: FileState, b: FileState): boolean {
  if (a.hash !== b.hash || a.node !== b.node || a.target !== b.target) return false;
  return (a.hash === null && a.node === undefined) || a.node === "link" || a.mode === b.mode;
}

/** What a change is recorded through: the runner's journal (the session file, then the front end). */
export type ChangeEvent =
  | { type: "file_before"; before: FileBefore }
  | { type: "file_change"; change: FileChange }
  | { type: "bash_change"; change: BashChange };

export interface FileChangesOptions {
  /** The workspace whose files the tools change. */
  root: string;
  /** mini-agent's state folder, refused as the tools refuse it. */
  stateDir?: string;
  /** Bytes of one file kept before a change (default 64 MiB); a bigger file is not undoable. */
  fileCap?: number;
  /** Bytes a session's blob store keeps in all (the store's default unless set). */
  blobCap?: number;
  /** Bytes a session's snapshot store keeps in all (1 GiB unless set). */
  snapshotCap?: number;
  /**
   * Bytes the snapshot stores of all sessions under the state folder keep together (4 GiB unless
   * set): at a session's first bash call in a process, the stores of the sessions written longest
   * ago are dropped past it (`boundSnapshots`). Without `stateDir`, no such bound.
   */
  userSnapshotCap?: number;
}

interface Turn {
  record: (event: ChangeEvent) => Promise<void>;
  blobs: BlobStore;
  /** Real paths whose bytes before this turn are kept (or were found too big to keep). */
  kept: Set<string>;
  /** The workspace as the session's bash calls found and left it. */
  snapshot: WorkspaceSnapshot;
  /** What the session's bash calls were told could not be kept (paths relative to the workspace). */
  said: Set<string>;
}

/**
 * What the agent's `write` and `edit` change, kept so that a rewind can undo it. A `Tool` that
 * wraps each of them (`wrap`): before the call runs it records the file's hash and mode
 * (`file_before`), and the first time a turn changes a file its old bytes go into the session's
 * blob store, once; after the call it records what the call left (`file_change`). A rewind
 * targets the start of a prompt, so one pre-image per file per turn is all it needs. It wraps
 * `bash` too: a walk of the workspace before and after each call keeps what the call could
 * change and records what it changed (`bash_change`), which a rewind puts back.
 *
 * The runner tells it when a turn starts and ends (`startTurn`, `endTurn`) and which call is
 * about to run (`callStarting`, from the loop's `tool_start` event): the `Tool` seam carries no
 * call id. Outside a turn, or for a call it was not told of, the tools run untracked.
 */
export class FileChanges {
  private turn: Turn | undefined;
  private call: ToolCall | undefined;
  private readonly stores = new Map<string, BlobStore>();
  private readonly snapshots = new Map<string, Pick<Turn, "snapshot" | "said">>();
  private readonly boundary: BoundaryOptions;

  constructor(private readonly options: FileChangesOptions) {
    this.boundary = { stateDir: options.stateDir };
  }

  /**
   * The tools, with `write`, `edit` and `bash` tracked; the rest as they are.
   */
  wrap(tools: readonly Tool[]): Tool[] {
    return tools.map((tool) => {
      const { spec } = tool;
      if (TRACKED.has(spec.name))
        return { spec, execute: (input, signal) => this.execute(tool, input, signal) };
      if (spec.name === "bash")
        return { spec, execute: (input, signal) => this.bash(tool, input, signal) };
      return tool;
    });
  }

  /**
   * A bash call, with a walk of the workspace before and after it (`WorkspaceSnapshot`): what the
   * command could change was kept before it ran, and what it changed is recorded (`bash_change`)
   * with the states a rewind puts back, or why it is not known. What the walk could not keep is
   * read-only for the call in the sandbox (`readOnlyFor`). The walk after runs however the call
   * ended (an error, a timeout, Ctrl-C): it is what makes the call undoable.
   */
  private async bash(tool: Tool, input: unknown, signal?: AbortSignal): Promise<ToolResult> {
    const { turn, call } = this;
    if (!turn || !call || call.input !== input) return tool.execute(input, signal);
    const walk = (after: boolean) => walkOf(turn.snapshot, after);
    const before = walk(false);
    let sandboxed = false;
    const run = async () => {
      if (!isBashTool(tool)) return tool.execute(input, signal);
      const ran = await tool.executeWith(input, signal, this.readOnlyFor(before, turn.said));
      sandboxed = ran.sandboxed;
      return ran.result;
    };
    const close = async () => {
      // A walk that was skipped before the call is not tried again after it.
      const after = before.kind === "walked" ? walk(true) : before;
      const change = bashChange(call.id, before, after, sandboxed);
      await turn.record({ type: "bash_change", change });
    };
    return await executeThen(run, close);
  }

  /**
   * Runs `work`, what runs after the call now running (its `PostToolUse` hooks, named by `by`),
   * between two walks of the workspace as a bash call runs: what it changes is the agent's, kept
   * before and recorded after (`bash_change` with `hook`), so a rewind puts it back. Returns what
   * it changed; nothing is walked or recorded outside a turn or a call the runner told of.
   */
  async measured<T>(by: string, work: () => Promise<T>): Promise<{ value: T; files: BashFile[] }> {
    const { turn, call } = this;
    if (!turn || !call) return { value: await work(), files: [] };
    const before = walkOf(turn.snapshot, false);
    let files: BashFile[] = [];
    const close = async () => {
      const after = before.kind === "walked" ? walkOf(turn.snapshot, true) : before;
      const change = bashChange(call.id, before, after, false);
      files = change.files ?? [];
      if (files.length === 0 && change.skipped === undefined && change.leftOut === undefined)
        return;
      await turn.record({ type: "bash_change", change: { ...change, hook: by } });
    };
    let value: T;
    try {
      value = await work();
    } catch (error) {
      await close().catch(() => {});
      throw error;
    }
    await close();
    return { value, files };
  }

  /**
   * What the walk before a call could not keep, to be read-only for the call in the sandbox: the
   * files whose bytes it did not keep, devices, and the folders it did not look into; the whole
   * workspace when the walk was skipped, or when that is over `MOST_READ_ONLY` paths. `said`: the
   * paths this session's calls were told of already.
   */
  private readOnlyFor(walk: Walk, said: Set<string>): BashCall {
    if (walk.kind === "skipped") return { readOnly: "workspace", why: walk.reason };
    const root = realOr(this.options.root);
    const kept: KeptOut[] = [];
    const add = (rel: string, why: string, folder: boolean) => {
      kept.push({ path: join(root, rel), why, said: said.has(rel), folder });
      said.add(rel);
    };
    for (const rel of walk.unkept) {
      const seen = walk.seen.get(rel);
      add(rel, seen?.unkept ?? "a device, FIFO or socket: a rewind does not make one again", false);
    }
    for (const [rel, why] of [...walk.leftOut, ...walk.oddNames]) add(rel, why, true);
    if (kept.length <= MOST_READ_ONLY) return { readOnly: kept };
    const first = kept[0]?.why ?? "";
    return {
      readOnly: "workspace",
      why: `${kept.length} paths could not be kept for a rewind (the first because ${first})`,
    };
  }

  /** A turn of the session at `sessionPath` starts; its changes are recorded through `record`. */
  startTurn(sessionPath: string, record: Turn["record"]): void {
    let blobs = this.stores.get(sessionPath);
    if (!blobs) {
      blobs = BlobStore.forSession(sessionPath, this.options.blobCap);
      this.stores.set(sessionPath, blobs);
    }
    let bash = this.snapshots.get(sessionPath);
    if (!bash) {
      const { stateDir, userSnapshotCap = USER_SNAPSHOT_CAP } = this.options;
      if (stateDir) boundSnapshots(join(stateDir, "sessions"), sessionPath, userSnapshotCap);
      const store = snapshotStoreFor(sessionPath, this.options.snapshotCap);
      const exclude = this.options.stateDir ? [realOr(this.options.stateDir)] : [];
      const snapshot = new WorkspaceSnapshot(this.options.root, store, { exclude });
      bash = { snapshot, said: new Set() };
      this.snapshots.set(sessionPath, bash);
    }
    this.turn = { record, blobs, kept: new Set(), ...bash };
  }

  endTurn(): void {
    this.turn = undefined;
    this.call = undefined;
  }

  /** The loop is about to run `call` (its `tool_start` event). */
  callStarting(call: ToolCall): void {
    this.call = call;
  }

  private async execute(tool: Tool, input: unknown, signal?: AbortSignal): Promise<ToolResult> {
    const { turn, call } = this;
    const path = (input as { path?: unknown } | undefined)?.path;
    if (!turn || !call || call.input !== input || typeof path !== "string")
      return tool.execute(input, signal);
    // A path the tool will refuse (outside, in the state folder, a folder) changes nothing.
    const target = await resolveInWorkspace(this.options.root, path, this.boundary).catch(
      () => undefined,
    );
    if (!target || target.folder) return tool.execute(input, signal);
    const cap = this.options.fileCap ?? DEFAULT_FILE_CAP;
    // A file this process cannot read (a folder it may not enter): the tool says why, untracked.
    const before = await readState(target, turn.kept.has(target.path) ? -1 : cap).catch(
      () => undefined,
    );
    if (!before) return tool.execute(input, signal);
    const file = relative(target.realRoot, target.path);
    const absent = await absentFolders(target);
    const unkept = keep(turn, target.path, before, cap);
    await turn.record({
      type: "file_before",
      before: {
        toolCallId: call.id,
        tool: tool.spec.name,
        path: file,
        before: before.hash,
        mode: before.mode,
        ...(unkept !== undefined && { unkept }),
      },
    });
    const close = async () => {
      const after = await readState(target, -1).catch(() => undefined);
      // Not a file now (swapped in by another process), or unreadable: left open, told as unknown.
      if (!after) return;
      const folders = await madeFolders(target, absent);
      await turn.record({
        type: "file_change",
        change: {
          toolCallId: call.id,
          path: file,
          before: before.hash,
          ...afterOf(after),
          ...(folders.length > 0 && { folders }),
        },
      });
    };
    return await executeThen(() => tool.execute(input, signal), close);
  }
}

/** A walk of the workspace; one the file system refused (its error code) is skipped, with why. */
function walkOf(snapshot: WorkspaceSnapshot, after: boolean): Walk {
  try {
    return snapshot.walk(after);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined) throw error;
    return { kind: "skipped", reason: `the workspace could not be walked (${code})` };
  }
}

/**
 * Keeps the file's bytes before the turn's first change of it; a reason when they cannot be kept
 * (too big, the store's cap reached, a disk that fails), and then the change is not undoable.
 */
function keep(turn: Turn, real: string, before: ReadState, cap: number): string | undefined {
  if (turn.kept.has(real)) return undefined;
  turn.kept.add(real);
  if (before.hash === null) return undefined;
  if (before.bytes === undefined)
    return `the file is ${before.size} bytes, over the ${cap} bytes a session keeps of one file`;
  const put = turn.blobs.put(before.bytes);
  return put.ok ? undefined : put.reason;
}

/**
 * The record of what a bash call changed, from the walks before and after it. `sandboxed`: what
 * the walk before could not keep was read-only for the call, so only a folder left out after it
 * (one the call made) can hold a change that is not known.
 */
function bashChange(toolCallId: string, before: Walk, after: Walk, sandboxed: boolean): BashChange {
  if (before.kind === "skipped")
    return { toolCallId, paths: [], skipped: before.reason, ...(sandboxed && { readOnly: true }) };
  if (after.kind === "skipped") return { toolCallId, paths: [], skipped: after.reason };
  const unseen = (walk: typeof before) => [...walk.leftOut, ...walk.oddNames];
  const known = new Map(sandboxed ? [] : unseen(before));
  for (const [path, why] of unseen(after))
    if (!sandboxed || !before.leftOut.has(path)) known.set(path, why);
  const leftOut = [...known]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([path, why]) => ({ path, why }));
  const files = changesBetween(
    before.seen,
    after.seen,
    new Set([...before.leftOut.keys(), ...after.leftOut.keys()]),
  );
  const paths = files.map((file) => file.path);
  const more = paths.length - MOST_PATHS;
  return {
    toolCallId,
    paths: paths.slice(0, MOST_PATHS),
    ...(more > 0 && { more }),
    files,
    ...(leftOut.length > 0 && { leftOut }),
  };
}

/** The most paths kept read-only one by one for a call; past it, the whole workspace is. */
export const MOST_READ_ONLY = 64;

/** The most paths one `bash_change` record names in `paths`; `files` holds every change. */
export const MOST_PATHS = 1000;

/** The folders on the way to the file that are not there yet, outermost first: a write makes them. */
async function absentFolders(target: Resolved): Promise<string[]> {
  const absent: string[] = [];
  const { realRoot } = target;
  for (
    let folder = dirname(target.path);
    strictlyWithin(realRoot, folder);
    folder = dirname(folder)
  ) {
    const missing = await lstat(folder).then(
      () => false,
      (error: NodeJS.ErrnoException) => error.code === "ENOENT",
    );
    if (!missing) break;
    absent.unshift(folder);
  }
  return absent;
}

/** Which of the folders absent before the call are folders now: the call made them. */
async function madeFolders(target: Resolved, absent: string[]): Promise<string[]> {
  const made: string[] = [];
  for (const folder of absent) {
    const info = await lstat(folder).catch(() => undefined);
    if (info?.isDirectory()) made.push(relative(target.realRoot, folder));
  }
  return made;
}

const afterOf = (state: FileState) => ({ after: state.hash, mode: state.mode });

/**
 * Runs the call, then `close` (which records what it changed), also when the call throws: the
 * loop records the failure and rethrows, and what the files hold now is still told.
 */
async function executeThen(
  run: () => Promise<ToolResult>,
  close: () => Promise<void>,
): Promise<ToolResult> {
  let result: ToolResult;
  try {
    result = await run();
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
  await close();
  return result;
}
